/*
 * oip_codec.h - the Open Inference Protocol (KServe's V2 protocol, Triton's
 * REST API) as another reader and writer of the attention request and result.
 *
 * DESIGN
 * An inference request names its input tensors after the tensor rows of the
 * request schema (schema.h: x, w_q, mask, ...), each with a shape, a
 * datatype and its data, flat or nested, in the JSON or, with the binary
 * tensor data extension, as little-endian bytes after the JSON header
 * (Inference-Header-Content-Length says where it ends).  Every other field
 * of the schema that a single value can carry (num_heads, scale, causal,
 * layout, ...) is a request parameter, read by the same decoder as /v1's
 * members (decode_value.h).  The datatype of the numeric inputs (FP64 or
 * FP32, one for all) is the request's dtype; the requested outputs are the
 * stages to return.  The filled api_fields then go through
 * validate_request(), so every rule and message of /v1 applies; an error
 * that points at a field is re-pointed at the input or parameter that
 * carried it and names it.
 *
 * The reply lists the stages asked for as output tensors, each as JSON data
 * (flat, row-major) or as binary data after the JSON, in the order of the
 * outputs.
 */
#ifndef SERVER_OIP_OIP_CODEC_H
#define SERVER_OIP_OIP_CODEC_H

#include "core/attention.h"
#include "core/pool.h"
#include "server/base/buf_chain.h"
#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one model this server serves, under the protocol's model paths. */
#define OIP_MODEL_NAME "attention"
/* Its one version, which the model's metadata lists and the route table's
 * versioned paths name (/v2/models/attention/versions/1/...). */
#define OIP_MODEL_VERSION "1"

/* What an inference request asks of its reply. */
typedef struct {
    char *id; /* the request's "id", echoed (malloc'd), or NULL */
    /* its "timeout" parameter in seconds (sent in microseconds, as
     * tritonclient does), or 0: none of its own */
    double timeout_seconds;
    /* the stages to return, in the order they are listed */
    attn_stage outputs[ATTN_STAGE_COUNT];
    bool binary[ATTN_STAGE_COUNT]; /* by stage: sent as binary data */
    int output_count;
} oip_reply_plan;

/* Reads an inference request: the body's first json_len bytes are the JSON
 * header and the rest binary tensor data (json_len = len when the request
 * had no Inference-Header-Content-Length).  On success req owns its
 * buffers (api_request_free()) and plan what it holds
 * (oip_reply_plan_free()); on failure err says why, with a pointer into
 * the JSON header, and both are left empty. */
bool oip_decode(const char *body, size_t len, size_t json_len,
                const request_limits *limits, api_request *req,
                oip_reply_plan *plan, codec_error *err);

/* oip_decode() with jansson alone, never the fast reader (oip_fast.h):
 * the reference the fast path is tested against (tests/fuzz). */
bool oip_decode_jansson(const char *body, size_t len, size_t json_len,
                        const request_limits *limits, api_request *req,
                        oip_reply_plan *plan, codec_error *err);

/* Reads the Inference-Header-Content-Length value of a body of len bytes
 * into *json_len (len when value is NULL: no header).  False, with err,
 * when it is not a byte count or exceeds the body. */
bool oip_json_length(const char *value, size_t len, size_t *json_len,
                     codec_error *err);

void oip_reply_plan_free(oip_reply_plan *plan);

/* Appends the inference reply to out: the JSON document, then the bytes of
 * every binary output in order.  Large JSON tensors are formatted on
 * `workers` (may be NULL); a cancelled req->problem.stop ends them early,
 * the document incomplete (encode_flat()): the caller reads the stop after
 * it.  Returns the JSON document's length when binary data follows it (the
 * Inference-Header-Content-Length), else 0. */
size_t oip_encode(const api_request *req, const attn_result *result,
                  const oip_reply_plan *plan, pool *workers, buf_chain *out);

/* The protocol's name of a wire type: "FP64", "FP32", "FP16", "BF16". */
const char *oip_datatype_name(api_wire wire);

#ifdef __cplusplus
}
#endif

#endif
