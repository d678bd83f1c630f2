/*
 * sizes.c - a field's rows and columns against --max-tokens and --max-width:
 * the one size rule the request's rules share (validate.c for x, context,
 * q, k, v and the cache; weights.c for W_o's width), below both.
 */
#include "server/request/sizes.h"

bool validate_size(api_field f, size_t rows, size_t cols,
                   const request_limits *limits, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    const char *name = api_schema[f].name;
    if (rows > limits->max_tokens)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, schema_pointer(f, ptr),
                          "%s has %zu rows (tokens); at most %zu "
                          "(--max-tokens)",
                          name, rows, limits->max_tokens);
    if (cols > limits->max_width)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, schema_pointer(f, ptr),
                          "%s is %zu wide; at most %zu (--max-width)", name,
                          cols, limits->max_width);
    return true;
}
