/*
 * encode.c - /v1's reply document: the parameters used, the shapes of every
 * stage and the stages asked for (their numbers by encode_tensor.c).
 */
#include "server/json/encode.h"

#include "server/request/batch_first.h"
#include "server/json/encode_tensor.h"
#include "server/request/heads.h"
#include "server/json/numfmt.h"

void encode_parameters(buf *out, const api_request *req)
{
    const attn_problem *p = &req->problem;
    char scale[NUMFMT_MAX];
    numfmt_double(req->scale, scale);
    /* no printf: this is written for every reply, and vsnprintf was a tenth
     * of a lesson-sized request's encoding time */
    buf_puts(out, "\"num_heads\":");
    buf_uint(out, p->heads);
    buf_puts(out, ",\"head_dim\":");
    buf_uint(out, p->d_k);
    buf_puts(out, ",\"value_dim\":");
    buf_uint(out, p->d_v);
    buf_puts(out, ",\"scale\":");
    buf_puts(out, scale);
    buf_puts(out, p->causal ? ",\"causal\":true" : ",\"causal\":false");
}

/* ,"key":[...]: a request's labels, echoed (one list per sequence in a
 * batch); nothing when it sent none. */
static void encode_labels(buf *out, const char *key, const api_labels *labels)
{
    if (!labels->names)
        return;
    buf_puts(out, ",\"");
    buf_puts(out, key);
    buf_puts(out, "\":[");
    size_t per_list = labels->lists ? labels->count / labels->lists : 0;
    for (size_t i = 0; i < labels->count; i++) {
        if (i && !(per_list && i % per_list == 0))
            buf_append(out, ",", 1);
        if (per_list && i % per_list == 0) /* one list per sequence */
            buf_puts(out, i ? "],[" : "[");
        buf_json_string(out, labels->names[i]);
    }
    buf_puts(out, labels->lists ? "]]" : "]");
}

void encode_response(const api_request *req, const attn_result *result,
                     pool *workers, buf_chain *chain)
{
    const attn_problem *p = &req->problem;
    buf *out = buf_chain_tail(chain);
    buf_puts(out, "{\"dtype\":\"");
    buf_puts(out, api_wire_name(req->wire));
    buf_puts(out, "\",");
    encode_parameters(out, req);
    buf_puts(out, req->binary ? ",\"encoding\":\"base64\""
                              : ",\"encoding\":\"json\"");
    encode_labels(out, "tokens", &req->tokens);
    encode_labels(out, "context_tokens", &req->context_tokens);

    size_t dims[ATTN_MAX_RANK];
    /* x and context as sent */
    buf_puts(out, ",\"shapes\":{");
    if (p->x) { /* absent when q, k and v were given */
        buf_puts(out, "\"x\":");
        encode_shape(out, dims, batch_first_input_shape(req, p->n, p->d, dims));
    }
    if (p->context) {
        buf_puts(out, ",\"context\":");
        encode_shape(out, dims,
                     batch_first_input_shape(req, p->m, p->d_c, dims));
    }
    bool first = !p->x;
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        if (!attn_stage_applies(p, (attn_stage)s))
            continue; /* x_pe, q_rope, k_rope only when computed */
        int rank = api_stage_shape(req, (attn_stage)s, dims);
        buf_puts(out, first ? "\"" : ",\"");
        first = false;
        buf_puts(out, attn_stage_name((attn_stage)s));
        buf_puts(out, "\":");
        encode_shape(out, dims, rank);
    }
    buf_puts(out, "}");

    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        if (!(req->want & ATTN_WANT(s)) || !result->stage[s])
            continue;
        int rank = api_stage_shape(req, (attn_stage)s, dims);
        out = buf_chain_tail(chain); /* a tensor before may have added parts */
        buf_puts(out, ",\"");
        buf_puts(out, attn_stage_name((attn_stage)s));
        buf_puts(out, "\":");
        if (req->binary)
            encode_tensor_binary(out, result->stage[s], dims, rank, req->wire);
        else
            encode_tensor(chain, workers, p->stop, result->stage[s], dims, rank,
                          p->dtype,
                          s == ATTN_MASKED_SCORES ? ENCODE_NEG_INF_V1 : NULL);
    }
    out = buf_chain_tail(chain);
    buf_puts(out, "}\n");
}
