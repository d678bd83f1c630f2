/*
 * encode.h - a computed attention result → the JSON response body.
 */
#ifndef SERVER_JSON_ENCODE_H
#define SERVER_JSON_ENCODE_H

#include "core/attention.h"
#include "core/pool.h"
#include "server/base/buf.h"
#include "server/base/buf_chain.h"
#include "server/json/request.h"

/* How −∞, a masked key of masked_scores, is written in JSON: null in /v1's
 * replies; the string "-inf" in the Open Inference Protocol's, whose tensor
 * data holds numbers, booleans or strings but no null (its clients build
 * the array with the output's datatype, and NumPy reads "-inf" as −∞). At
 * most NUMFMT_MAX bytes, the room a number is given. */
#define ENCODE_NEG_INF_V1 "null"
#define ENCODE_NEG_INF_OIP "\"-inf\""

/* Appends the whole 200 response document to out; large tensors are
 * formatted in pieces on `workers` (may be NULL), each piece a part of the
 * chain. */
void encode_response(const api_request *req, const attn_result *result,
                     pool *workers, buf_chain *out);

/* Appends count numbers of dtype as one flat JSON array "[...]" (the Open
 * Inference Protocol's row-major data); a large tensor is formatted in
 * pieces on `workers` (may be NULL), each piece a part of the chain. */
void encode_flat(buf_chain *out, pool *workers, const void *data, size_t count,
                 tensor_dtype dtype, const char *neg_inf);

/* Appends count numbers of dtype as a flat comma-separated list (no
 * brackets); −∞ is written as the text neg_inf when it is not NULL, any
 * other non-finite value is the caller's bug.  Exposed for tests. */
void encode_numbers(buf *out, const void *data, size_t count,
                    tensor_dtype dtype, const char *neg_inf);

#endif
