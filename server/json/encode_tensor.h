/*
 * encode_tensor.h - tensors as JSON text (the one number writer of /v1's
 * and the Open Inference Protocol's replies).
 */
#ifndef SERVER_JSON_ENCODE_TENSOR_H
#define SERVER_JSON_ENCODE_TENSOR_H

#include "core/attn_stop.h"
#include "core/pool.h"
#include "core/tensor.h"
#include "server/base/buf.h"
#include "server/base/buf_chain.h"
#include "server/request/request.h"

#include <stddef.h>

/* How −∞, a masked key of masked_scores, is written in JSON: null in /v1's
 * replies; the string "-inf" in the Open Inference Protocol's, whose tensor
 * data holds numbers, booleans or strings but no null (its clients build
 * the array with the output's datatype, and NumPy reads "-inf" as −∞). At
 * most NUMFMT_MAX bytes, the room a number is given. */
#define ENCODE_NEG_INF_V1 "null"
#define ENCODE_NEG_INF_OIP "\"-inf\""

/* Appends a tensor of the given shape as nested arrays; a large one is
 * formatted in pieces on `workers` (may be NULL), each piece a part of the
 * chain.  −∞ is written as neg_inf, as encode_numbers() says.  Once `stop`
 * (the request's, NULL: none) is cancelled (attn_stop_cancelled: nobody
 * waits for the reply), the writing ends within a few thousand numbers and
 * leaves the text incomplete: the caller reads the stop after it. */
void encode_tensor(buf_chain *out, pool *workers, struct attn_stop *stop,
                   const void *data, const size_t *dims, int rank,
                   tensor_dtype dtype, const char *neg_inf);

/* Appends count numbers of dtype as one flat JSON array "[...]" (the Open
 * Inference Protocol's row-major data); a large tensor is formatted in
 * pieces on `workers` (may be NULL), each piece a part of the chain.
 * `stop` ends it early as it does encode_tensor(). */
void encode_flat(buf_chain *out, pool *workers, struct attn_stop *stop,
                 const void *data, size_t count, tensor_dtype dtype,
                 const char *neg_inf);

/* Appends count numbers of dtype as a flat comma-separated list (no
 * brackets); −∞ is written as the text neg_inf when it is not NULL, any
 * other non-finite value is the caller's bug.  Exposed for tests. */
void encode_numbers(buf *out, const void *data, size_t count,
                    tensor_dtype dtype, const char *neg_inf);

/* Appends a shape, "[2,5,5]". */
void encode_shape(buf *out, const size_t *dims, int rank);

/* Appends {"shape": [...], "base64": "..."}: the tensor's numbers as
 * little-endian IEEE-754 values of the wire type (a 16-bit type's from the
 * floats computed; −∞ stays −∞: masked scores). */
void encode_tensor_binary(buf *out, const void *data, const size_t *dims,
                          int rank, api_wire wire);

#endif
