#include "api_attention.h"

#include "../core/attention.h"
#include "decode.h"
#include "encode.h"
#include "problem.h"

#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void api_attention(pool *workers, const request_limits *limits,
                   const char *body, size_t len, reply *out,
                   api_attention_stats *stats)
{
    api_request req;
    decode_error err;
    if (!decode_request(body, len, limits, &req, &err)) {
        problem_reply(out, err.status, err.code,
                      err.pointer[0] || err.status == 400 ? err.pointer : NULL,
                      "%s", err.detail);
        if (err.status == 503)
            out->retry_after = 1;
        return;
    }
    const attn_problem *p = &req.problem;
    stats->n = p->n;
    stats->m = p->m;
    stats->d = p->d;
    stats->heads = p->heads;

    attn_result result;
    double start = now_seconds();
    attn_status status = attn_forward(workers, p, req.want, &result);
    stats->compute_seconds = now_seconds() - start;
    if (status == ATTN_ERR_NONFINITE) {
        problem_reply(out, 422, "non_finite_result", NULL,
                      "the %s stage is not finite (overflow in %s); scale the "
                      "inputs down or use float64",
                      attn_stage_name(result.nonfinite_stage),
                      tensor_dtype_name(p->dtype));
    } else if (status != ATTN_OK) {
        problem_reply(out, 503, "out_of_memory", NULL,
                      "the server could not allocate memory for this request");
        out->retry_after = 1;
    } else {
        buf b = {0};
        encode_response(&req, &result, &b);
        attn_result_free(&result);
        if (buf_failed(&b)) {
            buf_free(&b);
            problem_reply(out, 503, "out_of_memory", NULL,
                          "the server could not allocate the response");
            out->retry_after = 1;
        } else {
            size_t body_len;
            char *json = buf_take(&b, &body_len);
            reply_set_owned(out, 200, "application/json", json, body_len);
        }
    }
    api_request_free(&req);
}
