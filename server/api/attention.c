#include "server/api/attention.h"

#include "server/base/clock.h"

#include "core/attention.h"
#include "core/attn_stop.h"
#include "server/json/decode.h"
#include "server/json/encode.h"
#include "server/json/half.h"
#include "server/request/heads.h"
#include "server/base/problem.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bytes of JSON one returned number takes at most on average: 17 significant
 * digits, sign, point, exponent and a comma. */
#define API_REPLY_BYTES_PER_NUMBER 26
/* Most bytes reserved up front for the reply's first part: what this thread
 * writes itself (the envelope, tensors under encode_tensor.c's parallel
 * threshold of 65,536 numbers, about 1.7 MB); bigger tensors arrive as pieces
 * of their own. */
#define API_REPLY_FIRST_PART_MAX (2u << 20)

/* Tensors with at least this much text (about 3,000 numbers) are parsed row
 * by row on all the workers: enough parsing that the hand-off stops
 * mattering (docs/performance.md, "The server's constants").  A
 * lesson-sized body is never split. */
#define API_SPLIT_MIN_BYTES (64 * 1024)

/* What api_attention_work() counts besides the products, in
 * floating-point operations of the same time: for every score, its scale,
 * mask, exp and the online softmax's bookkeeping, which at the narrow
 * widths of many small heads cost more than the score's own products (the
 * fit in docs/performance.md, "The work estimate", makes narrow and wide
 * requests run at one rate), and for every number of the reply its
 * encoding: its shortest decimal form as a JSON number, or its bytes in
 * base64, each as long as the worker that computes takes to write it
 * (tests/bench/encode_rate.py measures both against a computation's rate
 * in the same run; docs/reliability.md, "The work cap", has its figures).
 * A /v2 reply is counted as JSON numbers, its binary outputs too. */
#define API_FLOPS_PER_SCORE 100.0
#define API_FLOPS_PER_JSON_NUMBER 2500.0
#define API_FLOPS_PER_BASE64_NUMBER 450.0

/* Numbers the reply will hold, or SIZE_MAX on overflow. */
static size_t reply_numbers(const api_request *req)
{
    size_t total = 0;
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        if (!(req->want & ATTN_WANT(s)))
            continue;
        size_t dims[ATTN_MAX_RANK], count = 1;
        int rank = api_stage_shape(req, (attn_stage)s, dims);
        for (int i = 0; i < rank; i++)
            if (!tensor_mul_size(count, dims[i], &count))
                return SIZE_MAX;
        if (!tensor_mul_add_size(&total, count, 1))
            return SIZE_MAX;
    }
    return total;
}

static void compute_and_encode(pool *workers, const api_request *req,
                               size_t reply_bytes, const api_encoder *enc,
                               reply *out, api_attention_stats *stats);

/* The codec's error becomes an error reply here, and only here. */
void api_codec_error_reply(const codec_error *err, reply *out)
{
    unsigned status = error_code_info(err->code)->status;
    const char *pointer =
        err->pointer[0] || status == 400 ? err->pointer : NULL;
    problem_reply(out, err->code, status == 503 ? NULL : pointer, "%s",
                  err->detail);
}

/* /v1's reply: encode.c's JSON document. */
static void encode_v1(const api_request *req, const attn_result *result,
                      pool *workers, buf_chain *out, void *ctx)
{
    (void)ctx;
    encode_response(req, result, workers, out);
}

static const api_encoder v1 = {.encode = encode_v1};

/* The job's body as a request; false with the refusal answered. */
static bool decode_job(const api_job *job, api_request *req, reply *out)
{
    codec_error err;
    decode_options options = {.workers = job->workers,
                              .split_min_bytes = API_SPLIT_MIN_BYTES};
    if (!decode_request(job->body, job->body_len, job->limits, &options, req,
                        &err)) {
        api_codec_error_reply(&err, out);
        return false;
    }
    return true;
}

void api_attention(const api_job *job, reply *out)
{
    if (job->deferred) {
        api_attention_decoded(job, job->deferred, &v1, out);
        free(job->deferred);
        return;
    }
    api_request req;
    if (decode_job(job, &req, out))
        api_attention_decoded(job, &req, &v1, out);
}

double api_attention_work(const api_request *req)
{
    const attn_problem *p = &req->problem;
    double n = (double)p->n, m = (double)p->m, h = (double)p->heads;
    double h_kv = (double)attn_kv_heads(p), d_k = (double)p->d_k,
           d_v = (double)p->d_v;
    double flops = 0;
    if (!p->q) /* projected: x W_q, then context W_k and W_v */
        flops += 2 * n * (double)p->d * h * d_k +
                 2 * m * (double)p->d_c * h_kv * (d_k + d_v);
    flops += h * n * m * (2 * d_k + 2 * d_v + API_FLOPS_PER_SCORE);
    if (p->w_o) /* concat W_o */
        flops += 2 * n * h * d_v * (double)p->d_out;
    if (p->batch)
        flops *= (double)p->batch;
    size_t numbers = reply_numbers(req);
    return flops +
           (req->binary ? API_FLOPS_PER_BASE64_NUMBER
                        : API_FLOPS_PER_JSON_NUMBER) *
               (numbers == SIZE_MAX ? (double)SIZE_MAX : (double)numbers);
}

bool api_attention_inline(const api_job *job, double max_work, reply *out,
                          void **deferred)
{
    *deferred = NULL;
    api_request req;
    if (!decode_job(job, &req, out))
        return true;
    if (api_attention_work(&req) <= max_work) {
        api_attention_decoded(job, &req, &v1, out);
        return true;
    }
    if (!api_defer(&req, sizeof req, deferred, out)) {
        api_request_free(&req);
        return true;
    }
    return false;
}

bool api_defer(const void *decoded, size_t size, void **deferred, reply *out)
{
    *deferred = malloc(size);
    if (!*deferred) {
        problem_reply(out, ERR_OUT_OF_MEMORY, NULL,
                      "the server could not allocate memory for this "
                      "request");
        return false;
    }
    memcpy(*deferred, decoded, size);
    return true;
}

void api_attention_drop(void *deferred)
{
    api_request *req = deferred;
    if (!req)
        return;
    api_request_free(req);
    free(req);
}

void api_attention_decoded(const api_job *job, api_request *decoded,
                           const api_encoder *enc, reply *out)
{
    const request_limits *limits = job->limits;
    api_attention_stats *stats = job->stats;
    api_request req = *decoded;
    memset(decoded, 0, sizeof *decoded);
    req.problem.stop = job->stop;
    const attn_problem *p = &req.problem;
    stats->n = p->n;
    stats->m = p->m;
    stats->d = p->d;
    stats->heads = p->heads;
    stats->work = api_attention_work(&req);
    if (limits->max_work > 0 && stats->work > limits->max_work) {
        problem_reply(out, ERR_LIMIT_EXCEEDED, NULL,
                      "this request's work is estimated at %.3g operations; "
                      "at most %.3g (--max-work)",
                      stats->work, limits->max_work);
        api_request_free(&req);
        return;
    }

    size_t numbers = reply_numbers(&req), reply_bytes = SIZE_MAX;
    size_t need = attn_bytes_needed(p, req.want, pool_size(job->workers) + 1);
    /* with "heads", the stages cut down to them (api_select_heads) are
     * held beside the whole ones for a moment: at most the reply's numbers
     * in the dtype, counted on top of the reply's bytes */
    size_t per_number = API_REPLY_BYTES_PER_NUMBER +
                        (req.head_count ? tensor_dtype_size(p->dtype) : 0);
    if (numbers != SIZE_MAX &&
        tensor_mul_size(numbers, per_number, &reply_bytes) &&
        need != SIZE_MAX && reply_bytes <= SIZE_MAX - need)
        need += reply_bytes;
    else
        need = SIZE_MAX;
    if (need > limits->max_request_memory) {
        problem_reply(out, ERR_LIMIT_EXCEEDED, NULL,
                      "computing and returning this request needs %zu MiB; "
                      "at most %zu MiB per request (--max-request-memory)",
                      need == SIZE_MAX ? SIZE_MAX >> 20 : need >> 20,
                      limits->max_request_memory >> 20);
    } else if (!budget_ever_fits(job->memory, need)) {
        problem_reply(out, ERR_LIMIT_EXCEEDED, NULL,
                      "computing and returning this request needs %zu "
                      "bytes; the memory budget of all requests in flight "
                      "is %zu bytes (--memory-budget)",
                      need, job->memory->limit);
    } else if (!budget_reserve(job->memory, need)) {
        problem_reply(out, ERR_OVERLOADED, NULL,
                      "the memory budget for requests in flight is used "
                      "up; retry shortly");
    } else {
        compute_and_encode(job->workers, &req, reply_bytes, enc, out, stats);
        /* the reply's bytes stay reserved until it has been sent (the
         * HTTP layer clears the reply then); the rest goes back now */
        size_t held = 0;
        if (out->status == 200)
            held = out->body_len < need ? out->body_len : need;
        budget_release(job->memory, need - held);
        reply_hold(out, job->memory, held);
    }
    api_request_free(&req);
}

/* A 16-bit dtype's reply: the stages rounded to it; false, with the
 * refusal in out, when a number computed does not fit it. */
static bool fits_wire(const api_request *req, attn_result *result, reply *out)
{
    int stage = half_round_result(req, result);
    if (stage == ATTN_STAGE_COUNT)
        return true;
    problem_reply(out, ERR_NON_FINITE_RESULT, NULL,
                  "the %s stage does not fit in %s (largest %g), though "
                  "float32 computed it; scale the inputs down or use float32",
                  attn_stage_name((attn_stage)stage), api_wire_name(req->wire),
                  half_max(half_of(req->wire)));
    return false;
}

static void compute_and_encode(pool *workers, const api_request *req,
                               size_t reply_bytes, const api_encoder *enc,
                               reply *out, api_attention_stats *stats)
{
    const attn_problem *p = &req->problem;
    attn_result result;
    if (attn_stop_check(p->stop) != ATTN_RUN)
        return; /* stopped while it waited: status 0, the caller answers */
    double start = clock_seconds();
    attn_status status = attn_forward(workers, p, req->want, &result);
    stats->compute_seconds = clock_seconds() - start;
    if (status == ATTN_ERR_NONFINITE) {
        /* advice only where it would help: the stage's own cause, and
         * float64 only to a float32 request */
        attn_stage stage = result.nonfinite_stage;
        problem_reply(out, ERR_NON_FINITE_RESULT, NULL,
                      "the %s stage is not finite (overflow in %s); %s%s",
                      attn_stage_name(stage), tensor_dtype_name(p->dtype),
                      stage == ATTN_SCALED_SCORES ? "use a smaller scale"
                      : stage == ATTN_MASKED_SCORES
                          ? "keep the additive mask and ALiBi slopes within "
                            "range (a boolean mask hides keys)"
                          : "scale the inputs down",
                      p->dtype == TENSOR_FLOAT32 ? " or use float64" : "");
    } else if (status == ATTN_ERR_CANCELLED || status == ATTN_ERR_DEADLINE) {
        return; /* stopped: status 0, the caller answers */
    } else if (status != ATTN_OK) {
        problem_reply(out, ERR_OUT_OF_MEMORY, NULL,
                      "the server could not allocate memory for this "
                      "request");
    } else if (attn_stop_check(p->stop) == ATTN_STOP_CANCELLED) {
        attn_result_free(&result); /* nobody waits for it any more */
    } else if (!api_select_heads(req, &result)) {
        attn_result_free(&result);
        problem_reply(out, ERR_OUT_OF_MEMORY, NULL,
                      "the server could not allocate the heads asked "
                      "for");
    } else if (!fits_wire(req, &result, out)) {
        attn_result_free(&result);
    } else {
        buf_chain chain = {0};
        /* one allocation for what is written on this thread, no doubling */
        size_t first = reply_bytes < API_REPLY_FIRST_PART_MAX
                           ? reply_bytes
                           : API_REPLY_FIRST_PART_MAX;
        buf_reserve(buf_chain_tail(&chain), first + 4096);
        double encode_start = clock_seconds();
        enc->encode(req, &result, workers, &chain, enc->ctx);
        stats->encode_seconds = clock_seconds() - encode_start;
        attn_result_free(&result);
        if (attn_stop_cancelled(p->stop)) { /* its encoding ended early */
            buf_chain_free(&chain);
            return; /* status 0, the caller answers */
        }
        reply_part *parts = NULL;
        if (!buf_chain_failed(&chain))
            parts = malloc(chain.count * sizeof *parts);
        if (!parts) {
            buf_chain_free(&chain);
            problem_reply(out, ERR_OUT_OF_MEMORY, NULL,
                          "the server could not allocate the response");
            return;
        }
        size_t count = 0;
        for (size_t i = 0; i < chain.count; i++)
            if (chain.parts[i].len) {
                parts[count].data =
                    buf_take(&chain.parts[i], &parts[count].len);
                count++;
            }
        buf_chain_free(&chain);
        reply_set_parts(out, 200, "application/json", parts, count);
        if (enc->finish)
            enc->finish(out, enc->ctx);
    }
}
