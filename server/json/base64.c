#include "server/json/base64.h"

#include <stdint.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_size(size_t len) { return (len + 2) / 3 * 4; }

void base64_encode(const void *src, size_t len, char *dst)
{
    const uint8_t *in = src;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v =
            (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *dst++ = alphabet[v >> 18];
        *dst++ = alphabet[(v >> 12) & 63];
        *dst++ = alphabet[(v >> 6) & 63];
        *dst++ = alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        *dst++ = alphabet[v >> 18];
        *dst++ = alphabet[(v >> 12) & 63];
        *dst++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        *dst++ = '=';
    }
}

static int value_of(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

bool base64_decode(const char *text, size_t text_len, void *dst, size_t *len)
{
    uint8_t *out = dst;
    *len = 0;
    if (text_len % 4 != 0)
        return false;
    for (size_t i = 0; i < text_len; i += 4) {
        bool last = i + 4 == text_len;
        int pad = last && text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
        int v[4];
        for (int k = 0; k < 4; k++) {
            v[k] = k >= 4 - pad ? 0 : value_of(text[i + k]);
            if (v[k] < 0)
                return false;
        }
        uint32_t bits = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
                        (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[(*len)++] = (uint8_t)(bits >> 16);
        if (pad < 2)
            out[(*len)++] = (uint8_t)(bits >> 8);
        if (pad < 1)
            out[(*len)++] = (uint8_t)bits;
    }
    return true;
}
