/*
 * decode.h - JSON request body → attention problem, validated.
 *
 * Every rejection names a stable code and, where one field is to blame, a
 * JSON Pointer to it (e.g. "/x/3" for a short row of x).  Weights in either
 * layout of the lessons come out in the core's single wide layout.
 */
#ifndef SERVER_DECODE_H
#define SERVER_DECODE_H

#include "core/attention.h"
#include "core/pool.h"
#include "server/base/service_limits.h"

#include <jansson.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DECODE_POINTER_MAX 128

typedef struct {
    unsigned status; /* 400, 413 or 422 */
    const char *code;
    char pointer[DECODE_POINTER_MAX]; /* "" when no field is to blame */
    char detail[512];
} decode_error;

typedef struct {
    attn_problem problem;   /* points into the buffers below               */
    unsigned want;          /* ATTN_WANT() bits from "return"              */
    bool binary;            /* "encoding": "base64": tensors as base64     */
    double scale;           /* the effective scale (1/√d_k by default)     */
    json_t *tokens;         /* n strings or NULL (owned reference)       */
    json_t *context_tokens; /* m strings or NULL (owned reference)       */
    void *x, *context, *w_q, *w_k, *w_v, *w_o, *bias;
    uint8_t *allow, *key_padding;
} api_request;

/* Parses and validates body.  On success returns true and req owns its
 * buffers (api_request_free()); on failure fills err and leaves req empty. */
bool decode_request(const char *body, size_t len, const request_limits *limits,
                    api_request *req, decode_error *err);

/* The same, with the tensors of at least split_min_bytes of text parsed row
 * by row on workers (NULL: on this thread); the result is the same. */
bool decode_request_split(const char *body, size_t len,
                          const request_limits *limits, pool *workers,
                          size_t split_min_bytes, api_request *req,
                          decode_error *err);

/* The same, parsing with jansson only (no fast path): the reference the
 * fast parser is tested against. */
bool decode_request_jansson(const char *body, size_t len,
                            const request_limits *limits, api_request *req,
                            decode_error *err);

void api_request_free(api_request *req);

/* out = "/name/i/j/..." for the element at index[0 .. depth). */
void decode_pointer(char out[DECODE_POINTER_MAX], const char *name,
                    const size_t *index, int depth);

/* Fills err and returns false (for the parsers and validators). */
bool decode_fail(decode_error *err, unsigned status, const char *code,
                 const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#ifdef __cplusplus
}
#endif

#endif
