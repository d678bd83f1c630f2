/*
 * oip_fast.h - the fast reader of an Open Inference Protocol request's JSON.
 *
 * jansson reads numbers slowly (docs/performance.md, "The server's
 * constants"), and an inference request with JSON tensors is mostly
 * numbers.  This reader parses the JSON with simdjson and
 * flattens every input's "data" array into a plain buffer; the rest of the
 * request (small: names, shapes, parameters, outputs) becomes a jansson
 * tree for oip_decode.c to read as it reads the jansson one.  It vouches
 * only for the happy path; on anything unusual it returns false and the
 * caller parses with jansson, which words every error.
 */
#ifndef SERVER_OIP_OIP_FAST_H
#define SERVER_OIP_OIP_FAST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One input's "data", flattened in row-major order. */
typedef struct {
    bool present; /* the input had a "data" array, flattened here */
    bool is_bool; /* its leaves were booleans; else numbers */
    int depth;    /* the deepest nesting of arrays (1: flat) */
    size_t count; /* leaves */
    void *values; /* malloc'd: count doubles, or count bytes 0/1 */
} oip_fast_data;

typedef struct {
    /* the request as jansson would read it (numbers as reals), but each
     * flattened "data" left as an empty array (owned reference) */
    json_t *root;
    oip_fast_data *data; /* one per element of "inputs" (malloc'd) */
    size_t inputs;
    /* a whole number (integer data, a shape, a parameter) may have been
     * written with a fraction or an exponent: the text is to be read again
     * (whole_literals.h) */
    bool whole_unsure;
} oip_fast;

/* Parses json[0, len) when it is a JSON object that jansson accepts with
 * the same values (no duplicate key, no NUL in a string, no integer -0),
 * whose inputs' data are arrays of numbers or of booleans, not mixed, with
 * at most max_elements leaves in all.  False, with out empty, otherwise. */
bool oip_parse_fast(const char *json, size_t len, size_t max_elements,
                    oip_fast *out);

void oip_fast_free(oip_fast *f);

/* Whether the datatype named `name` holds whole numbers (INT8 to UINT64;
 * oip_inputs.c). */
bool oip_datatype_whole(const char *name);

#ifdef __cplusplus
}
#endif

#endif
