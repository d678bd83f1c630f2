/*
 * oip_binary.c - the Open Inference Protocol's binary tensor data: the
 * body's first Inference-Header-Content-Length bytes are the JSON header,
 * and each input with binary_data_size takes the next that many bytes,
 * little-endian, of its datatype.
 */
#include "server/oip/oip_reader.h"

#include "server/json/half.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits of the longest byte count Inference-Header-Content-Length may
 * give: a size_t has at most 20. */
#define OIP_LENGTH_DIGITS_MAX 20

/* One little-endian whole number of integer datatype dt. */
typedef struct {
    bool is_signed;
    int64_t as_signed;
    uint64_t as_unsigned;
} whole;

static whole read_int(const unsigned char *src, const oip_datatype *dt)
{
    whole v = {.is_signed = dt->low < 0};
    uint64_t bits = 0;
    for (size_t b = 0; b < dt->size; b++)
        bits |= (uint64_t)src[b] << (8 * b);
    v.as_unsigned = bits;
    if (v.is_signed) {
        /* sign-extend from dt->size bytes */
        unsigned shift = (unsigned)(64 - 8 * dt->size);
        v.as_signed = (int64_t)(bits << shift) >> shift;
    }
    return v;
}

/* The whole number at src as a double; false when beyond dt->low to
 * dt->high (only the 64-bit types' values can be, past 2^53 - 1). */
static bool read_whole(const unsigned char *src, const oip_datatype *dt,
                       double *out)
{
    whole v = read_int(src, dt);
    if (v.is_signed) {
        if (v.as_signed < (int64_t)dt->low || v.as_signed > (int64_t)dt->high)
            return false;
        *out = (double)v.as_signed;
    } else {
        if (v.as_unsigned > (uint64_t)dt->high)
            return false;
        *out = (double)v.as_unsigned;
    }
    return true;
}

/* The whole number at src in digits, exactly as sent. */
typedef struct {
    char text[24];
} whole_text;

static whole_text whole_words(const unsigned char *src, const oip_datatype *dt)
{
    whole v = read_int(src, dt);
    whole_text out;
    if (v.is_signed)
        snprintf(out.text, sizeof out.text, "%" PRId64, v.as_signed);
    else
        snprintf(out.text, sizeof out.text, "%" PRIu64, v.as_unsigned);
    return out;
}

/* binary_data_size bytes of the binary part, little-endian. */
bool oip_read_binary_data(oip_reader *rd, api_field f, size_t i,
                          const oip_datatype *dt, double size, schema_tensor *t,
                          size_t count, codec_error *err)
{
    const char *name = api_schema[f].name;
    char ptr[CODEC_POINTER_MAX], words[96];
    oip_input_pointer(ptr, i, "parameters");
    oip_pointer_append(ptr, "binary_data_size");
    oip_shape_words(t, words, sizeof words);
    size_t bytes = count * dt->size; /* count is within the budget */
    if (size != (double)bytes)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                          "input %s: binary_data_size is %.0f but shape %s "
                          "of %s takes %zu bytes",
                          name, size, words, dt->name, bytes);
    size_t left = rd->binary_len - rd->binary_used;
    if (bytes > left) {
        if (rd->binary_len == 0)
            return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                              "input %s has binary_data_size %zu but the "
                              "body has no binary data after its JSON "
                              "(Inference-Header-Content-Length gives the "
                              "JSON's length)",
                              name, bytes);
        return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                          "input %s: its %zu bytes run past the body, which "
                          "has %zu bytes of binary data left for it",
                          name, bytes, left);
    }
    const unsigned char *src = rd->binary + rd->binary_used;
    rd->binary_used += bytes;
    if (dt->element == OIP_BOOL) {
        for (size_t k = 0; k < count; k++)
            if (src[k] > 1)
                return codec_fail(err, ERR_WRONG_TYPE, ptr,
                                  "input %s: byte %zu is %u; a BOOL is one "
                                  "byte, 0 or 1",
                                  name, k, src[k]);
        memcpy(t->data, src, count);
        return true;
    }
    if (dt->element == OIP_INT) {
        double *values = t->data;
        for (size_t k = 0; k < count; k++) {
            if (!read_whole(src + k * dt->size, dt, &values[k]))
                return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                                  "input %s is %s: element %zu is %s, "
                                  "beyond %.0f to %.0f, where whole numbers "
                                  "stop being exact as doubles",
                                  name, dt->name, k,
                                  whole_words(src + k * dt->size, dt).text,
                                  dt->low, dt->high);
        }
        return true;
    }
    /* FP32 stays float (t->is_float32, read_input_numbers sized it), FP64
     * double; FP16 and BF16 become floats, which hold each of their values */
    if (dt->size == HALF_SIZE)
        half_to_floats(half_of((api_wire)dt->dtype), src, count, t->data);
    else
        memcpy(t->data, src, bytes);
    size_t bad = schema_first_nonfinite(&api_schema[f], t, count);
    if (bad < count)
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                          api_schema[f].minus_infinity
                              ? "input %s: element %zu is NaN or +∞ (a mask "
                                "adds finite numbers, and −∞ to hide a key)"
                              : "input %s: element %zu is not a finite number",
                          name, bad);
    return true;
}

bool oip_json_length(const char *value, size_t len, size_t *json_len,
                     codec_error *err)
{
    *json_len = len;
    if (!value)
        return true;
    size_t digits = strspn(value, "0123456789");
    if (digits == 0 || value[digits] != '\0' || digits > OIP_LENGTH_DIGITS_MAX)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, NULL,
                          "Inference-Header-Content-Length must be the "
                          "byte count of the body's JSON");
    unsigned long long n = strtoull(value, NULL, 10);
    if (n > len)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, NULL,
                          "Inference-Header-Content-Length is %llu but the "
                          "body has %zu bytes",
                          n, len);
    *json_len = (size_t)n;
    return true;
}
