/*
 * raw_request.h - a request body after parsing, before validation.
 *
 * Two parsers fill it: parse_json.c (jansson; the authority, with precise
 * errors, and the only one that reads the binary tensor form) and
 * parse_fast.cpp (simdjson; the fast path for well-formed JSON bodies). Tensors
 * arrive as flat row-major arrays of double (or bytes for booleans) with their
 * shape; every other field stays a small JSON value in `envelope`.  decode.c
 * validates it the same way whichever parser ran.
 */
#ifndef SERVER_RAW_REQUEST_H
#define SERVER_RAW_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAW_MAX_RANK 3

typedef enum {
    RAW_X,
    RAW_CONTEXT,
    RAW_W_Q,
    RAW_W_K,
    RAW_W_V,
    RAW_W_O,
    RAW_MASK,
    RAW_KEY_PADDING,
    RAW_TENSOR_COUNT
} raw_field;

typedef struct {
    bool present;
    bool is_bool; /* data is uint8_t 0/1, else double */
    int rank;     /* 1 to RAW_MAX_RANK */
    size_t dims[RAW_MAX_RANK];
    void *data; /* malloc'd, row-major */
} raw_tensor;

typedef struct {
    raw_tensor tensor[RAW_TENSOR_COUNT];
    json_t *envelope; /* the other fields, an object (owned reference) */
} raw_request;

/* How each tensor field may look: its name (also its JSON Pointer without
 * the '/'), ranks allowed, and whether its leaves are booleans (mask: either,
 * decided by its first leaf). */
typedef struct {
    const char *name;
    int min_rank, max_rank;
    enum { RAW_LEAF_NUMBER, RAW_LEAF_BOOL, RAW_LEAF_EITHER } leaf;
} raw_field_spec;

extern const raw_field_spec raw_field_specs[RAW_TENSOR_COUNT];

/* Every top-level field the API defines, tensors or not. */
extern const char *const raw_known_fields[];
extern const size_t raw_known_field_count;

/* Index of a tensor field by name, or -1. */
int raw_field_of(const char *name);

/* Is name one of raw_known_fields? */
bool raw_field_known(const char *name);

void raw_request_free(raw_request *raw);

#ifdef __cplusplus
}
#endif

#endif
