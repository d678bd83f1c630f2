/*
 * oip_encode.c - a computed attention result → an Open Inference Protocol
 * inference reply.
 *
 *   {"model_name": "attention", "id": "42",
 *    "parameters": {"num_heads": 2, "head_dim": 4, "value_dim": 4,
 *                   "scale": 0.5, "causal": false},
 *    "outputs": [{"name": "weights", "datatype": "FP64",
 *                 "shape": [2, 5, 5], "data": [...]},
 *                {"name": "output", "datatype": "FP64", "shape": [5, 8],
 *                 "parameters": {"binary_data_size": 320}}]}
 *   <320 bytes of output, little-endian>
 *
 * JSON data is flat and row-major, written by encode.c's number writer (a
 * masked key of masked_scores, −∞, is the string "-inf" there, which the
 * protocol's tensor data allows and its clients read as −∞; as binary data
 * it stays −∞).  Binary data is the stage's memory as the core left it.
 */
#include "server/oip/oip_codec.h"

#include "server/json/encode.h"
#include "server/json/encode_tensor.h"
#include "server/json/half.h"
#include "server/request/heads.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "binary tensor data is sent as memory is: little-endian"
#endif

size_t oip_encode(const api_request *req, const attn_result *result,
                  const oip_reply_plan *plan, pool *workers, buf_chain *out)
{
    const attn_problem *p = &req->problem;
    size_t elem = api_wire_size(req->wire);
    bool any_binary = false;
    buf *b = buf_chain_tail(out);
    buf_puts(b, "{\"model_name\":\"" OIP_MODEL_NAME "\"");
    if (plan->id) {
        buf_puts(b, ",\"id\":");
        buf_json_string(b, plan->id);
    }
    buf_puts(b, ",\"parameters\":{");
    encode_parameters(b, req);
    buf_puts(b, "}");
    buf_puts(b, ",\"outputs\":[");
    for (int i = 0; i < plan->output_count; i++) {
        attn_stage s = plan->outputs[i];
        size_t dims[ATTN_MAX_RANK], count = 1;
        int rank = api_stage_shape(req, s, dims);
        for (int k = 0; k < rank; k++)
            count *= dims[k];    /* the core allocated it: no overflow */
        b = buf_chain_tail(out); /* a tensor before may have added parts */
        buf_puts(b, i ? ",{\"name\":\"" : "{\"name\":\"");
        buf_puts(b, attn_stage_name(s));
        buf_puts(b, "\",\"datatype\":\"");
        buf_puts(b, oip_datatype_name(req->wire));
        buf_puts(b, "\",\"shape\":");
        encode_shape(b, dims, rank);
        if (plan->binary[s]) {
            buf_puts(b, ",\"parameters\":{\"binary_data_size\":");
            buf_uint(b, count * elem);
            buf_puts(b, "}}");
            any_binary = true;
        } else {
            buf_puts(b, ",\"data\":");
            encode_flat(out, workers, p->stop, result->stage[s], count,
                        p->dtype,
                        s == ATTN_MASKED_SCORES ? ENCODE_NEG_INF_OIP : NULL);
            buf_puts(buf_chain_tail(out), "}");
        }
    }
    buf_puts(buf_chain_tail(out), "]}\n");
    if (!any_binary)
        return 0;
    size_t json_len = 0;
    for (size_t k = 0; k < out->count; k++)
        json_len += out->parts[k].len;
    for (int i = 0; i < plan->output_count; i++) {
        attn_stage s = plan->outputs[i];
        if (!plan->binary[s])
            continue;
        size_t dims[ATTN_MAX_RANK], count = 1;
        int rank = api_stage_shape(req, s, dims);
        for (int k = 0; k < rank; k++)
            count *= dims[k];
        buf bytes = {0};
        half_append(&bytes, req->wire, result->stage[s], count);
        buf_chain_adopt(out, &bytes);
    }
    return json_len;
}
