/*
 * codec_error.h - decoding's one error type: why a request body was refused,
 * with a stable machine code (error_codes.h: its status follows), a message for
 * a person and, where one value is to blame, an RFC 6901 JSON Pointer to it.
 *
 * The request model's rules (server/request/) and the codecs that fill it
 * (server/json/, server/oip/) report through this type and know nothing of
 * HTTP replies; the endpoint turns it into problem+json.
 */
#ifndef SERVER_REQUEST_CODEC_ERROR_H
#define SERVER_REQUEST_CODEC_ERROR_H

#include "server/base/error_codes.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A pointer longer than this names no field of ours (names are short, ranks
 * at most 3); an unknown member with a longer name is named in the message. */
#define CODEC_POINTER_MAX 128
/* Room for a message that quotes a number or two and the list of every
 * field name (SCHEMA_LIST_MAX). */
#define CODEC_DETAIL_MAX 1200

typedef struct {
    error_code code;                 /* e.g. ERR_RAGGED_ARRAY */
    char pointer[CODEC_POINTER_MAX]; /* "" when no value is to blame */
    char detail[CODEC_DETAIL_MAX];
} codec_error;

/* Fills err and returns false, so a check reads `return codec_fail(...)`.
 * pointer may be NULL (no value to blame). */
bool codec_fail(codec_error *err, error_code code, const char *pointer,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Appends "/token" to the pointer held in out[size], escaping '~' and '/'
 * (RFC 6901 §3).  Returns false when it does not fit (out is then cut short
 * and must not be sent). */
bool codec_pointer_append(char *out, size_t size, const char *token);

/* out = "/name/i/j/..." for index[0 .. depth) of the member `name`.  Returns
 * false when it does not fit. */
bool codec_pointer(char out[CODEC_POINTER_MAX], const char *name,
                   const size_t *index, int depth);

/* The tokens of pointer (RFC 6901, ~1 and ~0 decoded), at most `most` of
 * them into tokens[] (each cut to fit); returns how many it has, which is
 * more than `most` for a deeper pointer. */
size_t codec_pointer_tokens(const char *pointer, size_t most,
                            char tokens[][CODEC_POINTER_MAX]);

#ifdef __cplusplus
}
#endif

#endif
