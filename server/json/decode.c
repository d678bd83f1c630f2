/*
 * decode.c - a parsed request (raw_request) → a validated api_request.
 *
 * The body is parsed by the fast parser when it can vouch for it, else by
 * jansson, which also words every syntax and structure error.  Everything
 * after that is checked here, once, in the order a person would fix it:
 * each tensor, then how the tensors fit together, then the other fields,
 * then limits.  Weights in either layout of the lessons leave here in the
 * core's one wide layout.
 */
#include "server/json/decode.h"

#include "server/json/parse_json.h"
#include "server/json/raw_request.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool decode_fail(decode_error *err, unsigned status, const char *code,
                 const char *pointer, const char *fmt, ...)
{
    err->status = status;
    err->code = code;
    snprintf(err->pointer, sizeof err->pointer, "%s", pointer ? pointer : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->detail, sizeof err->detail, fmt, ap);
    va_end(ap);
    return false;
}

void decode_pointer(char out[DECODE_POINTER_MAX], const char *name,
                    const size_t *index, int depth)
{
    int len = snprintf(out, DECODE_POINTER_MAX, "/%s", name);
    for (int i = 0; i < depth && len > 0 && len < DECODE_POINTER_MAX; i++)
        len += snprintf(out + len, DECODE_POINTER_MAX - (size_t)len, "/%zu",
                        index[i]);
}

/* "/name/i/j/k" for flat element `flat` of t. */
static void pointer_of_element(char *out, const char *name, const raw_tensor *t,
                               size_t flat)
{
    size_t index[RAW_MAX_RANK];
    for (int i = t->rank - 1; i >= 0; i--) {
        index[i] = flat % t->dims[i];
        flat /= t->dims[i];
    }
    decode_pointer(out, name, index, t->rank);
}

static size_t element_count(const raw_tensor *t)
{
    size_t count = 1;
    for (int i = 0; i < t->rank; i++)
        count *= t->dims[i]; /* bounded by the parser's element budget */
    return count;
}

/* Takes the numbers of t in the request's dtype: float64 moves the buffer,
 * float32 narrows every number and refuses one that does not fit. */
static bool take_numbers(raw_tensor *t, raw_field f, tensor_dtype dtype,
                         void **out, decode_error *err)
{
    if (dtype == TENSOR_FLOAT64) {
        *out = t->data;
        t->data = NULL;
        return true;
    }
    size_t count = element_count(t);
    float *narrow = malloc(count * sizeof *narrow + 1);
    if (!narrow)
        return decode_fail(err, 503, "out_of_memory", NULL, "out of memory");
    const double *wide = t->data;
    for (size_t i = 0; i < count; i++) {
        narrow[i] = (float)wide[i];
        if (isinf(narrow[i])) {
            char ptr[DECODE_POINTER_MAX];
            pointer_of_element(ptr, raw_field_specs[f].name, t, i);
            free(narrow);
            return decode_fail(err, 400, "number_out_of_range", ptr,
                               "%g does not fit in float32 (largest %g)",
                               wide[i], (double)FLT_MAX);
        }
    }
    *out = narrow;
    return true;
}

/* Per-head stack (h, rows, w) → wide (rows, h·w): wide[r][hd·w + c]. */
static void *stack_to_wide(const void *stack, const size_t dims[3], size_t elem)
{
    size_t h = dims[0], rows = dims[1], w = dims[2];
    char *wide = malloc(h * rows * w * elem + 1);
    if (!wide)
        return NULL;
    const char *src = stack;
    for (size_t hd = 0; hd < h; hd++)
        for (size_t r = 0; r < rows; r++)
            memcpy(wide + (r * h * w + hd * w) * elem,
                   src + ((hd * rows + r) * w) * elem, w * elem);
    return wide;
}

/* ---- weights ----------------------------------------------------------- */

typedef struct {
    raw_field field;
    size_t heads;       /* stack depth (rank 3) or 0 */
    size_t rows, width; /* as a wide (rows, width) matrix */
} weight;

static bool weight_take(raw_request *raw, raw_field f, tensor_dtype dtype,
                        weight *w, void **out, decode_error *err)
{
    raw_tensor *t = &raw->tensor[f];
    const char *name = raw_field_specs[f].name;
    char ptr[DECODE_POINTER_MAX];
    snprintf(ptr, sizeof ptr, "/%s", name);
    if (!t->present)
        return decode_fail(err, 400, "missing_field", ptr, "%s is required",
                           name);
    w->field = f;
    if (!take_numbers(t, f, dtype, out, err))
        return false;
    if (t->rank == 2) {
        w->heads = 0;
        w->rows = t->dims[0];
        w->width = t->dims[1];
        return true;
    }
    w->heads = t->dims[0];
    w->rows = t->dims[1];
    w->width = t->dims[0] * t->dims[2];
    void *wide = stack_to_wide(*out, t->dims, tensor_dtype_size(dtype));
    free(*out);
    *out = wide;
    if (!wide)
        return decode_fail(err, 503, "out_of_memory", NULL, "out of memory");
    return true;
}

/* Checks that the weights fit x/context and each other; sets heads, d_k,
 * d_v. */
static bool fit_weights(api_request *req, const weight *all, size_t heads,
                        const request_limits *limits, decode_error *err)
{
    attn_problem *p = &req->problem;
    size_t expect_rows[3] = {p->d, p->d_c, p->d_c};
    for (int i = 0; i < 3; i++) {
        const char *name = raw_field_specs[all[i].field].name;
        char ptr[DECODE_POINTER_MAX];
        snprintf(ptr, sizeof ptr, "/%s%s", name, all[i].heads ? "/0" : "");
        if (all[i].rows != expect_rows[i])
            return decode_fail(err, 400, "shape_mismatch", ptr,
                               "%s has %zu rows but %s has %zu columns: "
                               "x @ W needs them equal",
                               name, all[i].rows,
                               i == 0 || !p->context ? "x" : "context",
                               expect_rows[i]);
        snprintf(ptr, sizeof ptr, "/%s", name);
        if (all[i].width > limits->max_width)
            return decode_fail(err, 413, "limit_exceeded", ptr,
                               "%s is %zu wide; at most %zu (--max-width)",
                               name, all[i].width, limits->max_width);
        if (all[i].heads > limits->max_heads)
            return decode_fail(err, 413, "limit_exceeded", ptr,
                               "at most %zu heads (--max-heads)",
                               limits->max_heads);
    }
    /* heads: from num_heads, else from the first stack, else 1; the error
     * names what the head count came from */
    int stack_source = -1;
    for (int i = 0; i < 3; i++) {
        if (!all[i].heads)
            continue;
        const char *name = raw_field_specs[all[i].field].name;
        if (heads && all[i].heads != heads) {
            char ptr[DECODE_POINTER_MAX];
            snprintf(ptr, sizeof ptr, "/%s", name);
            if (stack_source < 0)
                return decode_fail(err, 400, "invalid_num_heads", "/num_heads",
                                   "num_heads is %zu but %s stacks %zu heads",
                                   heads, name, all[i].heads);
            return decode_fail(
                err, 400, "invalid_num_heads", ptr,
                "%s stacks %zu heads but %s stacks %zu", name, all[i].heads,
                raw_field_specs[all[stack_source].field].name, heads);
        }
        if (!heads)
            stack_source = i;
        heads = all[i].heads;
    }
    if (!heads)
        heads = 1;
    for (int i = 0; i < 3; i++)
        if (all[i].width % heads != 0) {
            const char *name = raw_field_specs[all[i].field].name;
            char ptr[DECODE_POINTER_MAX];
            snprintf(ptr, sizeof ptr, "/%s", name);
            if (stack_source < 0)
                return decode_fail(err, 400, "invalid_num_heads", "/num_heads",
                                   "%zu heads do not divide the %zu columns "
                                   "of %s",
                                   heads, all[i].width, name);
            return decode_fail(err, 400, "invalid_num_heads", ptr,
                               "%s stacks %zu heads, which do not divide the "
                               "%zu columns of %s",
                               raw_field_specs[all[stack_source].field].name,
                               heads, all[i].width, name);
        }
    if (all[1].width != all[0].width)
        return decode_fail(err, 400, "shape_mismatch", "/w_k",
                           "w_k gives keys %zu wide per head but w_q gives "
                           "queries %zu wide: Q Kᵀ needs them equal",
                           all[1].width / heads, all[0].width / heads);
    p->heads = heads;
    p->d_k = all[0].width / heads;
    p->d_v = all[2].width / heads;
    return true;
}

/* ---- the small fields ------------------------------------------------- */

static bool decode_dtype(json_t *env, tensor_dtype *dtype, decode_error *err)
{
    json_t *v = json_object_get(env, "dtype");
    *dtype = TENSOR_FLOAT64;
    if (!v)
        return true;
    const char *s = json_string_value(v);
    if (!s)
        return decode_fail(err, 400, "wrong_type", "/dtype",
                           "dtype must be a string: \"float64\" or "
                           "\"float32\"");
    if (strcmp(s, "float32") == 0)
        *dtype = TENSOR_FLOAT32;
    else if (strcmp(s, "float64") != 0)
        return decode_fail(err, 400, "invalid_dtype", "/dtype",
                           "dtype must be \"float64\" or \"float32\"");
    return true;
}

static bool decode_return(json_t *env, unsigned *want, decode_error *err)
{
    json_t *v = json_object_get(env, "return");
    *want = ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS);
    if (!v)
        return true;
    if (!json_is_array(v))
        return decode_fail(err, 400, "wrong_type", "/return",
                           "return must be an array of stage names");
    *want = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        char ptr[DECODE_POINTER_MAX];
        snprintf(ptr, sizeof ptr, "/return/%zu", i);
        const char *name = json_string_value(json_array_get(v, i));
        if (!name)
            return decode_fail(err, 400, "wrong_type", ptr,
                               "return must list stage names as strings");
        int s = 0;
        while (s < ATTN_STAGE_COUNT && strcmp(name, attn_stage_name(s)) != 0)
            s++;
        if (s == ATTN_STAGE_COUNT)
            return decode_fail(err, 400, "invalid_return", ptr,
                               "unknown stage name; use q, k, v, scores, "
                               "scaled_scores, masked_scores, weights, "
                               "head_outputs, concat or output");
        *want |= ATTN_WANT(s);
    }
    return true;
}

static bool decode_encoding(json_t *env, bool *binary, decode_error *err)
{
    json_t *v = json_object_get(env, "encoding");
    *binary = false;
    if (!v)
        return true;
    const char *s = json_string_value(v);
    if (!s || (strcmp(s, "json") != 0 && strcmp(s, "base64") != 0))
        return decode_fail(err, 400, "invalid_encoding", "/encoding",
                           "encoding must be \"json\" (nested arrays) or "
                           "\"base64\" (little-endian numbers of the dtype)");
    *binary = strcmp(s, "base64") == 0;
    return true;
}

static bool decode_bool(json_t *env, const char *name, bool *out,
                        decode_error *err)
{
    json_t *v = json_object_get(env, name);
    *out = false;
    if (!v)
        return true;
    char ptr[DECODE_POINTER_MAX];
    snprintf(ptr, sizeof ptr, "/%s", name);
    if (!json_is_boolean(v))
        return decode_fail(err, 400, "wrong_type", ptr,
                           "%s must be true or false", name);
    *out = json_is_true(v);
    return true;
}

static bool decode_labels(json_t *env, const char *name, size_t count,
                          json_t **out, decode_error *err)
{
    json_t *v = json_object_get(env, name);
    *out = NULL;
    if (!v)
        return true;
    char ptr[DECODE_POINTER_MAX];
    snprintf(ptr, sizeof ptr, "/%s", name);
    if (!json_is_array(v))
        return decode_fail(err, 400, "wrong_type", ptr,
                           "%s must be an array of strings", name);
    if (json_array_size(v) != count)
        return decode_fail(err, 400, "shape_mismatch", ptr,
                           "%s has %zu labels for %zu tokens", name,
                           json_array_size(v), count);
    for (size_t i = 0; i < count; i++)
        if (!json_is_string(json_array_get(v, i))) {
            snprintf(ptr, sizeof ptr, "/%s/%zu", name, i);
            return decode_fail(err, 400, "wrong_type", ptr,
                               "labels are strings");
        }
    *out = json_incref(v);
    return true;
}

static bool decode_num_heads(json_t *env, const request_limits *limits,
                             size_t *heads, decode_error *err)
{
    json_t *v = json_object_get(env, "num_heads");
    *heads = 0;
    if (!v)
        return true;
    if (!json_is_number(v))
        return decode_fail(err, 400, "wrong_type", "/num_heads",
                           "num_heads must be an integer");
    double value = json_number_value(v);
    if (value != floor(value))
        return decode_fail(err, 400, "invalid_num_heads", "/num_heads",
                           "num_heads must be a whole number, got %g", value);
    if (value < 1)
        return decode_fail(err, 400, "invalid_num_heads", "/num_heads",
                           "num_heads must be at least 1, got %g", value);
    if (value > (double)limits->max_heads)
        return decode_fail(err, 413, "limit_exceeded", "/num_heads",
                           "num_heads may be at most %zu (--max-heads)",
                           limits->max_heads);
    *heads = (size_t)value;
    return true;
}

static bool decode_scale(json_t *env, api_request *req, decode_error *err)
{
    json_t *v = json_object_get(env, "scale");
    req->problem.scale = 0; /* default: divide by √d_k */
    req->scale = 1.0 / sqrt((double)req->problem.d_k);
    if (!v)
        return true;
    if (!json_is_number(v))
        return decode_fail(err, 400, "wrong_type", "/scale",
                           "scale must be a number");
    double s = json_number_value(v);
    if (!(s > 0) || !isfinite(s))
        return decode_fail(err, 400, "invalid_scale", "/scale",
                           "scale must be a positive number, got %g", s);
    if (req->problem.dtype == TENSOR_FLOAT32 && isinf((float)s))
        return decode_fail(err, 400, "number_out_of_range", "/scale",
                           "%g does not fit in float32", s);
    req->problem.scale = s;
    req->scale = s;
    return true;
}

/* ---- masks ------------------------------------------------------------ */

static bool decode_masks(raw_request *raw, api_request *req, decode_error *err)
{
    attn_problem *p = &req->problem;
    raw_tensor *mask = &raw->tensor[RAW_MASK];
    if (mask->present) {
        if (mask->dims[0] != p->n || mask->dims[1] != p->m)
            return decode_fail(err, 400, "shape_mismatch", "/mask",
                               "mask is %zu×%zu but the scores are %zu×%zu "
                               "(queries × keys)",
                               mask->dims[0], mask->dims[1], p->n, p->m);
        if (mask->is_bool) {
            req->allow = mask->data;
            mask->data = NULL;
        } else if (!take_numbers(mask, RAW_MASK, p->dtype, &req->bias, err)) {
            return false;
        }
    }
    raw_tensor *padding = &raw->tensor[RAW_KEY_PADDING];
    if (padding->present) {
        if (padding->dims[0] != p->m)
            return decode_fail(err, 400, "shape_mismatch", "/key_padding",
                               "key_padding has %zu entries for %zu keys",
                               padding->dims[0], p->m);
        req->key_padding = padding->data;
        padding->data = NULL;
    }
    p->allow = req->allow;
    p->bias = req->bias;
    p->key_padding = req->key_padding;
    return true;
}

/* ---- the request ------------------------------------------------------ */

static bool check_size(const char *name, size_t rows, size_t cols,
                       const request_limits *limits, decode_error *err)
{
    char ptr[DECODE_POINTER_MAX];
    snprintf(ptr, sizeof ptr, "/%s", name);
    if (rows > limits->max_tokens)
        return decode_fail(err, 413, "limit_exceeded", ptr,
                           "%s has %zu rows (tokens); at most %zu "
                           "(--max-tokens)",
                           name, rows, limits->max_tokens);
    if (cols > limits->max_width)
        return decode_fail(err, 413, "limit_exceeded", ptr,
                           "%s is %zu wide; at most %zu (--max-width)", name,
                           cols, limits->max_width);
    return true;
}

static bool assemble(raw_request *raw, const request_limits *limits,
                     api_request *req, decode_error *err)
{
    attn_problem *p = &req->problem;
    json_t *env = raw->envelope;
    if (!decode_dtype(env, &p->dtype, err))
        return false;

    raw_tensor *x = &raw->tensor[RAW_X];
    if (!x->present)
        return decode_fail(err, 400, "missing_field", "/x", "x is required");
    p->n = p->m = x->dims[0];
    p->d = p->d_c = x->dims[1];
    if (!check_size("x", p->n, p->d, limits, err) ||
        !take_numbers(x, RAW_X, p->dtype, &req->x, err))
        return false;
    p->x = req->x;

    raw_tensor *ctx = &raw->tensor[RAW_CONTEXT];
    if (ctx->present) {
        p->m = ctx->dims[0];
        p->d_c = ctx->dims[1];
        if (!check_size("context", p->m, p->d_c, limits, err) ||
            !take_numbers(ctx, RAW_CONTEXT, p->dtype, &req->context, err))
            return false;
        p->context = req->context;
    }

    size_t heads;
    weight w[3] = {0};
    if (!decode_num_heads(env, limits, &heads, err) ||
        !weight_take(raw, RAW_W_Q, p->dtype, &w[0], &req->w_q, err) ||
        !weight_take(raw, RAW_W_K, p->dtype, &w[1], &req->w_k, err) ||
        !weight_take(raw, RAW_W_V, p->dtype, &w[2], &req->w_v, err) ||
        !fit_weights(req, w, heads, limits, err))
        return false;
    p->w_q = req->w_q;
    p->w_k = req->w_k;
    p->w_v = req->w_v;

    raw_tensor *wo = &raw->tensor[RAW_W_O];
    if (wo->present) {
        if (wo->dims[0] != p->heads * p->d_v)
            return decode_fail(err, 400, "shape_mismatch", "/w_o",
                               "w_o has %zu rows but the concatenated heads "
                               "are %zu wide (%zu heads × %zu)",
                               wo->dims[0], p->heads * p->d_v, p->heads,
                               p->d_v);
        p->d_out = wo->dims[1];
        if (!check_size("w_o", 0, p->d_out, limits, err) ||
            !take_numbers(wo, RAW_W_O, p->dtype, &req->w_o, err))
            return false;
        p->w_o = req->w_o;
    }

    if (!decode_scale(env, req, err) || !decode_return(env, &req->want, err) ||
        !decode_encoding(env, &req->binary, err) ||
        !decode_bool(env, "causal", &p->causal, err) ||
        !decode_masks(raw, req, err) ||
        !decode_labels(env, "tokens", p->n, &req->tokens, err))
        return false;
    if (json_object_get(env, "context_tokens") && !p->context)
        return decode_fail(err, 400, "missing_field", "/context",
                           "context_tokens label the rows of context, which "
                           "is absent (self-attention uses tokens)");
    if (!decode_labels(env, "context_tokens", p->m, &req->context_tokens, err))
        return false;

    /* the memory this needs is checked by the caller, who knows how many
     * threads will work on it (api_attention.c) */
    return true;
}

static bool decode_with(bool try_fast, pool *workers, size_t split_min_bytes,
                        const char *body, size_t len,
                        const request_limits *limits, api_request *req,
                        decode_error *err)
{
    memset(req, 0, sizeof *req);
    memset(err, 0, sizeof *err);
    raw_request raw;
    bool ok = try_fast && parse_json_fast(body, len, limits->max_elements,
                                          workers, split_min_bytes, &raw);
    if (!ok)
        ok = parse_json_jansson(body, len, limits->max_elements, &raw, err);
    ok = ok && assemble(&raw, limits, req, err);
    raw_request_free(&raw);
    if (!ok)
        api_request_free(req);
    return ok;
}

bool decode_request(const char *body, size_t len, const request_limits *limits,
                    api_request *req, decode_error *err)
{
    return decode_with(true, NULL, SIZE_MAX, body, len, limits, req, err);
}

bool decode_request_split(const char *body, size_t len,
                          const request_limits *limits, pool *workers,
                          size_t split_min_bytes, api_request *req,
                          decode_error *err)
{
    return decode_with(true, workers, split_min_bytes, body, len, limits, req,
                       err);
}

bool decode_request_jansson(const char *body, size_t len,
                            const request_limits *limits, api_request *req,
                            decode_error *err)
{
    return decode_with(false, NULL, SIZE_MAX, body, len, limits, req, err);
}

void api_request_free(api_request *req)
{
    free(req->x);
    free(req->context);
    free(req->w_q);
    free(req->w_k);
    free(req->w_v);
    free(req->w_o);
    free(req->bias);
    free(req->allow);
    free(req->key_padding);
    json_decref(req->tokens);
    json_decref(req->context_tokens);
    memset(req, 0, sizeof *req);
}
