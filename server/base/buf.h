/*
 * buf.h - a growable byte buffer for building response bodies.
 *
 * Appends never fail loudly: after a failed allocation the buffer is marked
 * failed, further appends are ignored, and buf_failed() tells the owner, who
 * answers 503 instead of sending a truncated document.
 */
#ifndef SERVER_BUF_H
#define SERVER_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
    bool borrowed; /* data is the caller's storage until it must grow */
} buf;

bool buf_reserve(buf *b, size_t extra);
void buf_append(buf *b, const char *s, size_t len);
void buf_puts(buf *b, const char *s);
void buf_printf(buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The most digits uint_text() writes: 2^64 - 1 has 20. */
#define UINT_TEXT_MAX 20
/* Writes v in decimal into out (no NUL) and returns how many digits. */
size_t uint_text(unsigned long long v, char out[UINT_TEXT_MAX]);
/* Appends v in decimal (no printf: shapes are written for every reply). */
void buf_uint(buf *b, size_t v);
/* Appends s as a JSON string literal, quotes included. */
void buf_json_string(buf *b, const char *s);
/* Hands the bytes to the caller (who frees them) and empties b. */
char *buf_take(buf *b, size_t *len);
void buf_free(buf *b);
static inline bool buf_failed(const buf *b) { return b->failed; }

#endif
