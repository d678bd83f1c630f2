/*
 * decode.h - JSON request body → validated api_request.
 *
 * Every rejection is a codec_error: a stable code and, where one value is to
 * blame, a JSON Pointer to it (e.g. "/x/3" for a short row of x).  Weights in
 * either layout of the lessons come out in the core's single wide layout.
 */
#ifndef SERVER_JSON_DECODE_H
#define SERVER_JSON_DECODE_H

#include "core/pool.h"
#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* Tensors with at least split_min_bytes of text are parsed row by row on
     * `workers` (NULL: on this thread; SIZE_MAX: nothing is split).  The
     * result is the same either way. */
    pool *workers;
    size_t split_min_bytes;
    /* Parse with jansson only, never the fast parser: the reference the fast
     * path is tested against. */
    bool jansson_only;
} decode_options;

/* Parses and validates body.  On success returns true and req owns its
 * buffers (api_request_free()); on failure fills err and leaves req empty.
 * options may be NULL: the fast parser on this thread, nothing split. */
bool decode_request(const char *body, size_t len, const request_limits *limits,
                    const decode_options *options, api_request *req,
                    codec_error *err);

#ifdef __cplusplus
}
#endif

#endif
