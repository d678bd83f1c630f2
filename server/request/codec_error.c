#include "server/request/codec_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool codec_fail(codec_error *err, error_code code, const char *pointer,
                const char *fmt, ...)
{
    err->code = code;
    snprintf(err->pointer, sizeof err->pointer, "%s", pointer ? pointer : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->detail, sizeof err->detail, fmt, ap);
    va_end(ap);
    return false;
}

bool codec_pointer_append(char *out, size_t size, const char *token)
{
    size_t len = strlen(out);
    if (len + 1 >= size)
        return false;
    out[len++] = '/';
    for (const char *c = token; *c; c++) {
        if (len + 3 > size) {
            out[len] = '\0';
            return false;
        }
        if (*c == '~' || *c == '/') {
            out[len++] = '~';
            out[len++] = *c == '~' ? '0' : '1';
        } else {
            out[len++] = *c;
        }
    }
    out[len] = '\0';
    return true;
}

bool codec_pointer(char out[CODEC_POINTER_MAX], const char *name,
                   const size_t *index, int depth)
{
    out[0] = '\0';
    if (!codec_pointer_append(out, CODEC_POINTER_MAX, name))
        return false;
    size_t len = strlen(out);
    for (int i = 0; i < depth; i++) {
        int wrote =
            snprintf(out + len, CODEC_POINTER_MAX - len, "/%zu", index[i]);
        if (wrote < 0 || (size_t)wrote >= CODEC_POINTER_MAX - len)
            return false;
        len += (size_t)wrote;
    }
    return true;
}

size_t codec_pointer_tokens(const char *pointer, size_t most,
                            char tokens[][CODEC_POINTER_MAX])
{
    size_t count = 0;
    for (const char *p = pointer; *p == '/'; count++) {
        size_t n = 0;
        for (p++; *p && *p != '/'; p++) {
            char c = *p;
            if (c == '~' && (p[1] == '0' || p[1] == '1'))
                c = *++p == '0' ? '~' : '/';
            if (count < most && n + 1 < CODEC_POINTER_MAX)
                tokens[count][n++] = c;
        }
        if (count < most)
            tokens[count][n] = '\0';
    }
    return count;
}
