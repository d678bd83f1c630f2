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

/* Each byte's value in the alphabet; BAD (a bit no value has) outside it. */
enum { BAD = 0x80 };
static const uint8_t value_of[256] = {
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, 62,  BAD,
    BAD, BAD, 63,  52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, 0,   1,   2,   3,   4,   5,   6,   7,   8,   9,
    10,  11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,  22,  23,  24,
    25,  BAD, BAD, BAD, BAD, BAD, BAD, 26,  27,  28,  29,  30,  31,  32,  33,
    34,  35,  36,  37,  38,  39,  40,  41,  42,  43,  44,  45,  46,  47,  48,
    49,  50,  51,  BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
    BAD,
};

/* The 24 bits of one group of four characters; *bad collects BAD. */
static inline uint32_t group_bits(const unsigned char *s, uint32_t *bad)
{
    uint32_t a = value_of[s[0]], b = value_of[s[1]], c = value_of[s[2]],
             d = value_of[s[3]];
    *bad |= a | b | c | d;
    return a << 18 | b << 12 | c << 6 | d;
}

bool base64_decode(const char *text, size_t text_len, void *dst, size_t *len)
{
    const unsigned char *s = (const unsigned char *)text;
    uint8_t *out = dst;
    *len = 0;
    if (text_len % 4 != 0)
        return false;
    if (text_len == 0)
        return true;
    /* every group but the last: no padding, checked once at the end */
    uint32_t bad = 0;
    size_t i = 0;
    for (; i + 4 < text_len; i += 4, out += 3) {
        uint32_t bits = group_bits(s + i, &bad);
        out[0] = (uint8_t)(bits >> 16);
        out[1] = (uint8_t)(bits >> 8);
        out[2] = (uint8_t)bits;
    }
    /* the last group: "xy==" or "xyz=" pad it to 1 or 2 bytes */
    int pad = s[i + 3] == '=' ? (s[i + 2] == '=' ? 2 : 1) : 0;
    unsigned char last[4] = {s[i], s[i + 1], pad == 2 ? 'A' : s[i + 2],
                             pad ? 'A' : s[i + 3]};
    uint32_t bits = group_bits(last, &bad);
    if (bad & BAD)
        return false;
    out[0] = (uint8_t)(bits >> 16);
    if (pad < 2)
        out[1] = (uint8_t)(bits >> 8);
    if (pad < 1)
        out[2] = (uint8_t)bits;
    *len = i / 4 * 3 + 3 - (size_t)pad;
    return true;
}
