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
#include <string.h>

typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
    bool borrowed; /* data is the caller's storage until it must grow */
} buf;

/* buf_reserve()'s way when b has no room: grows it, or marks it failed. */
bool buf_grow(buf *b, size_t extra);

/* Room for `extra` more bytes; false once b has failed.  Inline, as are the
 * appends: a lesson-sized reply makes some 350 of them, and the calls were
 * 2 % of its instructions (docs/performance.md, "What a request costs"). */
static inline bool buf_reserve(buf *b, size_t extra)
{
    if (!b->failed && extra <= b->cap - b->len)
        return true;
    return buf_grow(b, extra);
}

static inline void buf_append(buf *b, const char *s, size_t len)
{
    if (!buf_reserve(b, len + 1))
        return;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
}

static inline void buf_puts(buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}
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
