/*
 * raw_request.h - a request body after parsing, before its fields are
 * decoded and checked against each other.
 *
 * Two parsers fill it: parse_json.c (jansson; the authority, with precise
 * errors, and the only one that reads the binary tensor form) and
 * parse_fast.cpp (simdjson; the fast path for well-formed JSON bodies).
 * Tensors arrive in fields.tensor, as flat row-major arrays of double (or
 * bytes for booleans) with their shape; every other field stays a small JSON
 * value in `envelope` until decode.c reads it by its kind (schema.h).
 */
#ifndef SERVER_JSON_RAW_REQUEST_H
#define SERVER_JSON_RAW_REQUEST_H

#include "server/request/schema.h"

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    api_fields fields; /* the tensors (slots of tensor rows) */
    json_t *envelope;  /* the other fields, an object (owned reference) */
    /* a whole-number field may hold a number written with a fraction or
     * an exponent, which a double may have rounded to a whole one: the
     * text is to be read again (whole_literals.h) */
    bool whole_unsure;
} raw_request;

void raw_request_free(raw_request *raw);

#ifdef __cplusplus
}
#endif

#endif
