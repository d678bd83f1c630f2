/*
 * half.c - float16 and bfloat16 to and from float32 (half.h).
 *
 * One rounding serves both types, from a double (which holds every float32
 * and every JSON number as parsed): the magnitude is scaled by a power of
 * two so that one unit is the type's step at its exponent (the subnormals'
 * step below the smallest normal), rounded to a whole number with ties to
 * even, and the bits rebuilt from it; a carry out of the fraction moves to
 * the next exponent by itself, and one past the largest becomes infinity.
 * Scaling by a power of two is exact, so the value is rounded once.
 */
#include "server/json/half.h"

#include "server/request/heads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* exponent and fraction bits of each kind */
static const struct {
    int exp_bits, frac_bits;
} layout[] = {
    [HALF_FLOAT16] = {5, 10},
    [HALF_BFLOAT16] = {8, 7},
};

double half_max(half_kind kind)
{
    int bias = (1 << (layout[kind].exp_bits - 1)) - 1;
    int frac = layout[kind].frac_bits;
    return ldexp(2.0 - ldexp(1.0, -frac), bias);
}

uint16_t half_round(half_kind kind, double v)
{
    int exp_bits = layout[kind].exp_bits, frac = layout[kind].frac_bits;
    int bias = (1 << (exp_bits - 1)) - 1;
    uint32_t inf = ((1u << exp_bits) - 1) << frac;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return (uint16_t)(sign | inf | (1u << (frac - 1))); /* quiet NaN */
    double a = fabs(v);
    if (isinf(a))
        return (uint16_t)(sign | inf);
    if (a == 0)
        return sign;
    int e;
    frexp(a, &e); /* a = f·2^e, f in [0.5, 1): a's exponent is e − 1 */
    int exponent = e - 1 < 1 - bias ? 1 - bias : e - 1;
    /* a in steps of 2^(exponent − frac), rounded as IEEE 754 does by
     * default; rint follows the rounding mode, which is to nearest unless
     * someone changed it */
    double steps = rint(ldexp(a, frac - exponent));
    uint32_t bits = (uint32_t)steps; /* at most 2^(frac + 1) */
    if (e - 1 >= 1 - bias) /* normal: the leading 1 is the exponent's */
        bits += (uint32_t)(exponent + bias - 1) << frac;
    if (bits >= inf || e - 1 > bias)
        return (uint16_t)(sign | inf);
    return (uint16_t)(sign | bits);
}

float half_value(half_kind kind, uint16_t bits)
{
    if (kind == HALF_BFLOAT16) { /* float32's upper half */
        uint32_t wide = (uint32_t)bits << 16;
        float f;
        memcpy(&f, &wide, sizeof f);
        return f;
    }
    unsigned field = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
    float magnitude = field == 0 ? ldexpf((float)fraction, -24)
                      : field == 31
                          ? (fraction ? NAN : INFINITY)
                          : ldexpf((float)(fraction | 0x400), (int)field - 25);
    return bits & 0x8000 ? -magnitude : magnitude;
}

void half_to_floats(half_kind kind, const void *src, size_t count, float *dst)
{
    const unsigned char *in = src;
    for (size_t i = 0; i < count; i++)
        dst[i] = half_value(kind, (uint16_t)(in[2 * i] | in[2 * i + 1] << 8));
}

void half_from_floats(half_kind kind, const float *src, size_t count, void *dst)
{
    unsigned char *out = dst;
    for (size_t i = 0; i < count; i++) {
        uint16_t bits = half_round(kind, (double)src[i]);
        out[2 * i] = (unsigned char)(bits & 0xff);
        out[2 * i + 1] = (unsigned char)(bits >> 8);
    }
}

void half_round_floats(half_kind kind, const float *src, size_t count,
                       float *dst)
{
    for (size_t i = 0; i < count; i++)
        dst[i] = half_value(kind, half_round(kind, (double)src[i]));
}

half_kind half_of(api_wire wire)
{
    return wire == API_WIRE_BFLOAT16 ? HALF_BFLOAT16 : HALF_FLOAT16;
}

bool half_widen(api_wire wire, schema_tensor *t, size_t count)
{
    float *wide = malloc(count * sizeof *wide + 1);
    if (!wide)
        return false;
    half_to_floats(half_of(wire), t->data, count, wide);
    free(t->data);
    t->data = wide;
    t->is_float32 = true;
    return true;
}

/* Field f's doubles rounded to kind, as floats; false (err) at the first
 * that becomes an infinity it was not. */
static bool round_tensor(half_kind kind, api_field f, schema_tensor *t,
                         codec_error *err)
{
    size_t count = schema_element_count(t);
    float *narrow = malloc(count * sizeof *narrow + 1);
    if (!narrow)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    const double *wide = t->data;
    for (size_t i = 0; i < count; i++) {
        narrow[i] = half_value(kind, half_round(kind, wide[i]));
        if (isinf(narrow[i]) && !isinf(wide[i])) {
            char ptr[CODEC_POINTER_MAX];
            schema_element_pointer(ptr, f, t, i);
            free(narrow);
            return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                              "%g does not fit in %s (largest %g)", wide[i],
                              kind == HALF_FLOAT16 ? "float16" : "bfloat16",
                              half_max(kind));
        }
    }
    free(t->data);
    t->data = narrow;
    t->is_float32 = true;
    return true;
}

bool half_round_fields(api_fields *fields, codec_error *err)
{
    const schema_value *dtype = &fields->value[API_DTYPE];
    if (!dtype->present || (dtype->choice != API_WIRE_FLOAT16 &&
                            dtype->choice != API_WIRE_BFLOAT16))
        return true;
    half_kind kind = half_of((api_wire)dtype->choice);
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        schema_tensor *t = &fields->tensor[f];
        if (t->present && !t->is_bool && !t->is_float32 &&
            !api_schema[f].whole && !round_tensor(kind, (api_field)f, t, err))
            return false;
    }
    return true;
}

int half_round_result(const api_request *req, attn_result *result)
{
    if (req->wire != API_WIRE_FLOAT16 && req->wire != API_WIRE_BFLOAT16)
        return ATTN_STAGE_COUNT;
    half_kind kind = half_of(req->wire);
    int overflow = ATTN_STAGE_COUNT;
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        if (!(req->want & ATTN_WANT(s)) || !result->stage[s])
            continue;
        size_t dims[ATTN_MAX_RANK], count = 1;
        int rank = api_stage_shape(req, (attn_stage)s, dims);
        for (int k = 0; k < rank; k++)
            count *= dims[k]; /* the core allocated it: no overflow */
        float *v = result->stage[s];
        for (size_t i = 0; i < count; i++) {
            float narrow = half_value(kind, half_round(kind, (double)v[i]));
            if (isinf(narrow) && !isinf(v[i]) && overflow == ATTN_STAGE_COUNT)
                overflow = s;
            v[i] = narrow;
        }
    }
    return overflow;
}

void half_append(buf *out, api_wire wire, const void *data, size_t count)
{
    if (wire != API_WIRE_FLOAT16 && wire != API_WIRE_BFLOAT16) {
        buf_append(out, data, count * api_wire_size(wire));
        return;
    }
    if (!buf_reserve(out, count * HALF_SIZE + 1))
        return;
    half_from_floats(half_of(wire), data, count, out->data + out->len);
    out->len += count * HALF_SIZE;
}
