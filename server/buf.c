#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool buf_reserve(buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void buf_append(buf *b, const char *s, size_t len)
{
    if (!buf_reserve(b, len + 1))
        return;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void buf_puts(buf *b, const char *s) { buf_append(b, s, strlen(s)); }

void buf_printf(buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)len < sizeof small) {
        buf_append(b, small, (size_t)len);
        return;
    }
    if (!buf_reserve(b, (size_t)len + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)len + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)len;
}

void buf_uint(buf *b, size_t v)
{
    char digits[24];
    size_t len = 0;
    do {
        digits[sizeof digits - ++len] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    buf_append(b, digits + sizeof digits - len, len);
}

void buf_json_string(buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    buf_append(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"':
            buf_append(b, "\\\"", 2);
            break;
        case '\\':
            buf_append(b, "\\\\", 2);
            break;
        case '\n':
            buf_append(b, "\\n", 2);
            break;
        case '\t':
            buf_append(b, "\\t", 2);
            break;
        case '\r':
            buf_append(b, "\\r", 2);
            break;
        default:
            if (*c < 0x20) {
                char esc[7] = {'\\', 'u', '0', '0', hex[*c >> 4], hex[*c & 15]};
                buf_append(b, esc, 6);
            } else {
                buf_append(b, (const char *)c, 1);
            }
        }
    }
    buf_append(b, "\"", 1);
}

char *buf_take(buf *b, size_t *len)
{
    char *data = b->data;
    *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return data;
}

void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
