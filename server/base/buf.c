#include "server/base/buf.h"

#include "server/base/block_cache.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool buf_grow(buf *b, size_t extra)
{
    if (b->failed)
        return false;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data =
        b->borrowed || !b->data ? block_alloc(cap) : realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    if (b->borrowed)
        memcpy(data, b->data, b->len);
    b->borrowed = false;
    b->data = data;
    b->cap = cap;
    return true;
}

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

size_t uint_text(unsigned long long v, char out[UINT_TEXT_MAX])
{
    char digits[UINT_TEXT_MAX];
    size_t len = 0;
    do {
        digits[sizeof digits - ++len] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(out, digits + sizeof digits - len, len);
    return len;
}

void buf_uint(buf *b, size_t v)
{
    if (v < 10) { /* most of a reply's shapes: one digit, no loop */
        char digit = (char)('0' + v);
        buf_append(b, &digit, 1);
        return;
    }
    char digits[UINT_TEXT_MAX];
    buf_append(b, digits, uint_text(v, digits));
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if it is not one. */
static size_t utf8_sequence(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t len;
    unsigned min;
    unsigned cp;
    if ((s[0] & 0xe0) == 0xc0)
        len = 2, min = 0x80, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0)
        len = 3, min = 0x800, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0)
        len = 4, min = 0x10000, cp = s[0] & 0x07;
    else
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* Whether byte c goes into a JSON string as it is: printable ASCII other
 * than the quote and the backslash. */
static inline bool json_plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* Strings that reach a reply can quote the client's bytes (jansson's syntax
 * errors do): anything that is not well-formed UTF-8 becomes U+FFFD, so the
 * reply stays valid JSON.  Runs of plain bytes are appended in one copy:
 * the access log writes seven strings a request. */
void buf_json_string(buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    buf_append(b, "\"", 1);
    const unsigned char *c = (const unsigned char *)s;
    for (;;) {
        const unsigned char *run = c;
        while (json_plain(*c))
            c++;
        if (c > run)
            buf_append(b, (const char *)run, (size_t)(c - run));
        if (!*c)
            break;
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
                size_t len = utf8_sequence(c);
                if (len == 0) {
                    buf_append(b, "\\ufffd", 6);
                    c++;
                    continue;
                }
                buf_append(b, (const char *)c, len);
                c += len;
                continue;
            }
        }
        c++;
    }
    buf_append(b, "\"", 1);
}

char *buf_take(buf *b, size_t *len)
{
    if (b->borrowed) { /* hand out heap memory, never the caller's storage */
        char *copy = malloc(b->len + 1);
        if (copy) {
            memcpy(copy, b->data, b->len);
            copy[b->len] = '\0';
        }
        b->data = copy;
        b->borrowed = false;
    }
    char *data = b->data;
    *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return data;
}

void buf_free(buf *b)
{
    if (!b->borrowed)
        block_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
