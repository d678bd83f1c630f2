/*
 * literal_walk.c - the literals of a JSON text with their paths
 * (literal_walk.h).
 */
#include "server/json/literal_walk.h"

#include <stdio.h>
#include <string.h>

/* Bytes that end a literal: structure and white space. */
static bool ends_literal(char c)
{
    return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' ||
           c == '\n' || c == '\r';
}

/* The index just past the string that opens at text[i] (a '"'). */
static size_t skip_string(const char *text, size_t len, size_t i)
{
    for (i++; i < len;) {
        const char *quote = memchr(text + i, '"', len - i);
        if (!quote)
            return len;
        size_t at = (size_t)(quote - text), slashes = 0;
        while (at - slashes > i && text[at - slashes - 1] == '\\')
            slashes++;
        if (slashes % 2 == 0)
            return at + 1;
        i = at + 1;
    }
    return len;
}

void literal_walk(const char *text, size_t len, literal_visit visit, void *ctx)
{
    literal_level stack[LITERAL_LEVELS_KEPT];
    literal_path path = {stack, 0, 0};
    for (size_t i = 0; i < len;) {
        char c = text[i];
        literal_level *top = path.depth && path.depth <= LITERAL_LEVELS_KEPT
                                 ? &stack[path.depth - 1]
                                 : NULL;
        if (c == '{' || c == '[') {
            if (path.depth < LITERAL_LEVELS_KEPT)
                stack[path.depth] = (literal_level){.array = c == '['};
            path.depth++;
            i++;
        } else if (c == '}' || c == ']') {
            path.depth -= path.depth > 0;
            i++;
        } else if (c == ',') {
            if (top && top->array)
                top->index++;
            else if (top)
                top->after_colon = false;
            i++;
        } else if (c == ':') {
            if (top)
                top->after_colon = true;
            i++;
        } else if (c == '"') {
            size_t end = skip_string(text, len, i);
            if (top && !top->array && !top->after_colon) {
                top->key = text + i + 1;
                top->key_len = end >= i + 2 ? end - i - 2 : 0;
            }
            i = end;
        } else if (ends_literal(c)) {
            i++;
        } else { /* a number, true, false or null (any other byte: one) */
            size_t start = i++;
            while (i < len && text[i] && !ends_literal(text[i]))
                i++;
            path.kept = path.depth < LITERAL_LEVELS_KEPT ? path.depth
                                                         : LITERAL_LEVELS_KEPT;
            if (!visit(ctx, &path, text, start, i - start))
                return;
        }
    }
}

/* The RFC 6901 token of a member name as written between its quotes, its
 * escapes decoded (the API's names have none).  False when it does not fit,
 * or holds a \u escape (not decoded here). */
static bool name_token(const char *raw, size_t len, char *out, size_t size)
{
    static const char escaped[] = "\"\\/bfnrt", decoded[] = "\"\\/\b\f\n\r\t";
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (n + 1 >= size)
            return false;
        char c = raw[i];
        if (c == '\\' && i + 1 < len) {
            const char *at = strchr(escaped, raw[++i]);
            if (!at || !*at)
                return false; /* \u (or text a parser would have refused) */
            c = decoded[at - escaped];
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return true;
}

bool literal_pointer(const literal_path *path, char out[CODEC_POINTER_MAX])
{
    out[0] = '\0';
    for (size_t level = 0; level < path->kept; level++) {
        char token[CODEC_POINTER_MAX];
        const literal_level *at = &path->levels[level];
        if (at->array)
            snprintf(token, sizeof token, "%zu", at->index);
        else if (!name_token(at->key, at->key_len, token, sizeof token))
            return false;
        char longer[CODEC_POINTER_MAX];
        memcpy(longer, out, sizeof longer);
        if (!codec_pointer_append(longer, sizeof longer, token))
            return false;
        memcpy(out, longer, sizeof longer);
    }
    return path->kept == path->depth;
}
