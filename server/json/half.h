/*
 * half.h - the 16-bit floating-point types a request may travel in:
 * IEEE 754 binary16 (float16, the Open Inference Protocol's FP16) and
 * bfloat16 (BF16: float32's sign and 8-bit exponent, 7 bits of fraction).
 *
 * The core computes such a request in float32, which holds every value of
 * both exactly: half_to_floats() widens a tensor as it arrives, and
 * half_round() narrows a number to the wire type, rounding to nearest with
 * ties to even (IEEE 754's default, as PyTorch's .to(torch.float16) and
 * .to(torch.bfloat16) round), subnormals kept, a magnitude past the type's
 * largest finite value (by half its last step or more) becoming infinity,
 * and NaN staying NaN.  Bytes are little-endian, as every binary form of
 * the service.
 */
#ifndef SERVER_JSON_HALF_H
#define SERVER_JSON_HALF_H

#include "core/attention.h"
#include "server/base/buf.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HALF_FLOAT16, HALF_BFLOAT16 } half_kind;

/* The bytes of one element. */
#define HALF_SIZE 2

/* The largest finite value of kind: 65504, and (2 − 2⁻⁷)·2¹²⁷. */
double half_max(half_kind kind);

/* The bits of kind nearest to v (ties to even). */
uint16_t half_round(half_kind kind, double v);

/* The value of bits of kind (exact in float32). */
float half_value(half_kind kind, uint16_t bits);

/* count elements of kind, little-endian at src (any alignment), as floats. */
void half_to_floats(half_kind kind, const void *src, size_t count, float *dst);

/* count floats as elements of kind, little-endian at dst (any alignment). */
void half_from_floats(half_kind kind, const float *src, size_t count,
                      void *dst);

/* The 16-bit type of wire (API_WIRE_FLOAT16 or API_WIRE_BFLOAT16). */
half_kind half_of(api_wire wire);

/* t's count numbers of wire, little-endian bytes at t->data, replaced by
 * floats (t->is_float32); false when memory runs out. */
bool half_widen(api_wire wire, schema_tensor *t, size_t count);

/* In a request whose dtype is a 16-bit type: every tensor of numbers read
 * from JSON (doubles) rounded to that type and kept as floats, as binary
 * data of it arrives (positions and head indices, whole numbers, are
 * left).  A number past the type's range is refused: false with err, 400
 * number_out_of_range at its element. */
bool half_round_fields(api_fields *fields, codec_error *err);

/* count floats at src as numbers of kind widened back to floats at dst
 * (each rounded to kind). */
void half_round_floats(half_kind kind, const float *src, size_t count,
                       float *dst);

/* In the reply of a request whose dtype is a 16-bit type: each stage it
 * holds (float32, as computed) rounded to that type in place, so that the
 * float32 writer writes that type's values.  Returns the first stage with a
 * finite number past the type's range (ATTN_STAGE_COUNT: none); −∞, a
 * masked key's score, stays. */
int half_round_result(const api_request *req, attn_result *result);

/* Appends count floats to out as little-endian numbers of wire's type
 * (the 16-bit ones converted; float32 and float64 as they are, with
 * data of that type). */
void half_append(buf *out, api_wire wire, const void *data, size_t count);

#ifdef __cplusplus
}
#endif

#endif
