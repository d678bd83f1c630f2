/*
 * decode.c - a declarative table of the request's fields, then one validator
 * per kind of value.  The order of checks is the order a person would fix
 * them in: syntax, unknown fields, types and shapes of each tensor, then how
 * the tensors fit together, then limits.
 */
#include "decode.h"

#include "problem.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jansson's own nesting guard is 2048 levels; nothing in our schema is deeper
 * than 3, so the tensor walker refuses anything past this. */
#define DECODE_MAX_RANK 3

static const char *const known_fields[] = {
    "x",    "context",     "w_q",    "w_k",  "w_v",    "w_o",
    "num_heads", "scale",  "dtype",  "return", "causal", "mask",
    "key_padding", "tokens", "context_tokens",
};

static bool fail(decode_error *err, unsigned status, const char *code,
                 const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static bool fail(decode_error *err, unsigned status, const char *code,
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

static void pointer_index(char *out, const char *base, const size_t *index,
                          int depth)
{
    int len = snprintf(out, DECODE_POINTER_MAX, "%s", base);
    for (int i = 0; i < depth && len > 0 && len < DECODE_POINTER_MAX; i++)
        len += snprintf(out + len, DECODE_POINTER_MAX - (size_t)len, "/%zu",
                        index[i]);
}

/* ---- tensors ---------------------------------------------------------- */

typedef enum { LEAF_NUMBER, LEAF_BOOL } leaf_kind;

typedef struct {
    const char *name; /* pointer of the field, e.g. "/x"          */
    int min_rank, max_rank;
    leaf_kind leaf;
    tensor_dtype dtype; /* for numbers                            */
    /* out */
    int rank;
    size_t dims[DECODE_MAX_RANK];
    void *data; /* (dims...) row-major, dtype or uint8_t        */
} tensor_spec;

/* Rank and dims from the first element at each level. */
static bool tensor_shape(json_t *v, tensor_spec *t, decode_error *err)
{
    t->rank = 0;
    size_t zero[DECODE_MAX_RANK] = {0};
    char ptr[DECODE_POINTER_MAX];
    while (json_is_array(v)) {
        pointer_index(ptr, t->name, zero, t->rank);
        if (t->rank == t->max_rank)
            return fail(err, 400, "wrong_rank", ptr,
                        "%s nests deeper than %d levels of arrays",
                        t->name + 1, t->max_rank);
        if (json_array_size(v) == 0)
            return fail(err, 400, "empty_array", ptr,
                        "%s must not contain an empty array", t->name + 1);
        t->dims[t->rank++] = json_array_size(v);
        v = json_array_get(v, 0);
    }
    if (t->rank < t->min_rank) {
        pointer_index(ptr, t->name, zero, t->rank);
        if (t->rank == 0)
            return fail(err, 400, "wrong_type", ptr,
                        "%s must be an array of %s", t->name + 1,
                        t->leaf == LEAF_BOOL ? "booleans" : "numbers");
        return fail(err, 400, "wrong_rank", t->name,
                    "%s must have %d%s dimensions, found %d", t->name + 1,
                    t->min_rank, t->max_rank > t->min_rank ? " or 3" : "",
                    t->rank);
    }
    return true;
}

static bool tensor_leaf(json_t *v, tensor_spec *t, size_t flat,
                        const char *ptr, decode_error *err)
{
    if (t->leaf == LEAF_BOOL) {
        if (!json_is_boolean(v))
            return fail(err, 400, "wrong_type", ptr,
                        "expected a boolean, found %s",
                        json_is_array(v) ? "an array" : "another type");
        ((uint8_t *)t->data)[flat] = json_is_true(v);
        return true;
    }
    if (!json_is_number(v))
        return fail(err, 400, json_is_array(v) ? "wrong_rank" : "wrong_type",
                    ptr, "expected a number, found %s",
                    json_is_array(v)     ? "an array (nested too deep)"
                    : json_is_string(v)  ? "a string"
                    : json_is_boolean(v) ? "a boolean"
                    : json_is_null(v)    ? "null"
                                         : "an object");
    double value = json_number_value(v);
    if (t->dtype == TENSOR_FLOAT32) {
        float narrow = (float)value;
        if (isinf(narrow))
            return fail(err, 400, "number_out_of_range", ptr,
                        "%g does not fit in float32 (largest %g)", value,
                        (double)FLT_MAX);
        ((float *)t->data)[flat] = narrow;
    } else {
        ((double *)t->data)[flat] = value;
    }
    return true;
}

/* Fills t->data walking every element; ragged rows and wrong leaves fail. */
static bool tensor_fill(json_t *v, tensor_spec *t, int depth, size_t *index,
                        size_t *flat, decode_error *err)
{
    char ptr[DECODE_POINTER_MAX];
    if (depth == t->rank) {
        pointer_index(ptr, t->name, index, depth);
        return tensor_leaf(v, t, (*flat)++, ptr, err);
    }
    if (!json_is_array(v) || json_array_size(v) != t->dims[depth]) {
        pointer_index(ptr, t->name, index, depth);
        if (!json_is_array(v))
            return fail(err, 400, "wrong_rank", ptr,
                        "expected an array of %zu, found a scalar",
                        t->dims[depth]);
        return fail(err, 400, "ragged_array", ptr,
                    "expected %zu elements (as in the first row), found %zu",
                    t->dims[depth], json_array_size(v));
    }
    for (size_t i = 0; i < t->dims[depth]; i++) {
        index[depth] = i;
        if (!tensor_fill(json_array_get(v, i), t, depth + 1, index, flat, err))
            return false;
    }
    return true;
}

static bool tensor_decode(json_t *v, tensor_spec *t, size_t *budget,
                          decode_error *err)
{
    if (!tensor_shape(v, t, err))
        return false;
    size_t count = 1;
    for (int i = 0; i < t->rank; i++)
        if (!tensor_mul_size(count, t->dims[i], &count))
            count = SIZE_MAX;
    if (count > *budget)
        return fail(err, 413, "limit_exceeded", t->name,
                    "the request holds more numbers than allowed "
                    "(--max-elements)");
    *budget -= count;
    size_t elem = t->leaf == LEAF_BOOL ? 1 : tensor_dtype_size(t->dtype);
    t->data = malloc(count * elem);
    if (!t->data)
        return fail(err, 503, "out_of_memory", NULL,
                    "the server could not allocate %zu bytes", count * elem);
    size_t index[DECODE_MAX_RANK] = {0}, flat = 0;
    if (!tensor_fill(v, t, 0, index, &flat, err)) {
        free(t->data);
        t->data = NULL;
        return false;
    }
    return true;
}

/* Per-head stack (h, rows, w) → wide (rows, h·w): wide[r][hd·w + c]. */
static void *stack_to_wide(const void *stack, const size_t dims[3], size_t elem)
{
    size_t h = dims[0], rows = dims[1], w = dims[2];
    char *wide = malloc(h * rows * w * elem);
    if (!wide)
        return NULL;
    const char *src = stack;
    for (size_t hd = 0; hd < h; hd++)
        for (size_t r = 0; r < rows; r++)
            memcpy(wide + (r * h * w + hd * w) * elem,
                   src + ((hd * rows + r) * w) * elem, w * elem);
    return wide;
}

/* ---- the request ------------------------------------------------------ */

typedef struct {
    tensor_spec spec;
    size_t heads; /* stack depth (rank 3) or 0 */
    size_t rows, width; /* as a wide (rows, width) matrix */
} weight;

static bool weight_decode(json_t *root, const char *key, tensor_dtype dtype,
                          size_t *budget, weight *w, decode_error *err)
{
    w->spec = (tensor_spec){.name = key, .min_rank = 2, .max_rank = 3,
                            .leaf = LEAF_NUMBER, .dtype = dtype};
    json_t *v = json_object_get(root, key + 1);
    if (!v)
        return fail(err, 400, "missing_field", key, "%s is required", key + 1);
    if (!tensor_decode(v, &w->spec, budget, err))
        return false;
    if (w->spec.rank == 2) {
        w->heads = 0;
        w->rows = w->spec.dims[0];
        w->width = w->spec.dims[1];
        return true;
    }
    w->heads = w->spec.dims[0];
    w->rows = w->spec.dims[1];
    w->width = w->spec.dims[0] * w->spec.dims[2];
    void *wide = stack_to_wide(w->spec.data, w->spec.dims,
                               tensor_dtype_size(dtype));
    free(w->spec.data);
    w->spec.data = wide;
    if (!wide)
        return fail(err, 503, "out_of_memory", NULL, "out of memory");
    return true;
}

static bool decode_dtype(json_t *root, tensor_dtype *dtype, decode_error *err)
{
    json_t *v = json_object_get(root, "dtype");
    *dtype = TENSOR_FLOAT64;
    if (!v)
        return true;
    const char *s = json_string_value(v);
    if (!s)
        return fail(err, 400, "wrong_type", "/dtype",
                    "dtype must be a string: \"float64\" or \"float32\"");
    if (strcmp(s, "float32") == 0)
        *dtype = TENSOR_FLOAT32;
    else if (strcmp(s, "float64") != 0)
        return fail(err, 400, "invalid_dtype", "/dtype",
                    "dtype must be \"float64\" or \"float32\"");
    return true;
}

static bool decode_return(json_t *root, unsigned *want, decode_error *err)
{
    json_t *v = json_object_get(root, "return");
    *want = ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS);
    if (!v)
        return true;
    if (!json_is_array(v))
        return fail(err, 400, "wrong_type", "/return",
                    "return must be an array of stage names");
    *want = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        char ptr[DECODE_POINTER_MAX];
        snprintf(ptr, sizeof ptr, "/return/%zu", i);
        const char *name = json_string_value(json_array_get(v, i));
        if (!name)
            return fail(err, 400, "wrong_type", ptr,
                        "return must list stage names as strings");
        int s = 0;
        while (s < ATTN_STAGE_COUNT && strcmp(name, attn_stage_name(s)) != 0)
            s++;
        if (s == ATTN_STAGE_COUNT)
            return fail(err, 400, "invalid_return", ptr,
                        "unknown stage name; use q, k, v, scores, "
                        "scaled_scores, masked_scores, weights, head_outputs, "
                        "concat or output");
        *want |= ATTN_WANT(s);
    }
    return true;
}

static bool decode_bool(json_t *root, const char *key, bool *out,
                        decode_error *err)
{
    json_t *v = json_object_get(root, key + 1);
    *out = false;
    if (!v)
        return true;
    if (!json_is_boolean(v))
        return fail(err, 400, "wrong_type", key, "%s must be true or false",
                    key + 1);
    *out = json_is_true(v);
    return true;
}

static bool decode_labels(json_t *root, const char *key, size_t count,
                          json_t **out, decode_error *err)
{
    json_t *v = json_object_get(root, key + 1);
    *out = NULL;
    if (!v)
        return true;
    if (!json_is_array(v))
        return fail(err, 400, "wrong_type", key,
                    "%s must be an array of strings", key + 1);
    if (json_array_size(v) != count)
        return fail(err, 400, "shape_mismatch", key,
                    "%s has %zu labels for %zu tokens", key + 1,
                    json_array_size(v), count);
    for (size_t i = 0; i < count; i++)
        if (!json_is_string(json_array_get(v, i))) {
            char ptr[DECODE_POINTER_MAX];
            snprintf(ptr, sizeof ptr, "%s/%zu", key, i);
            return fail(err, 400, "wrong_type", ptr, "labels are strings");
        }
    *out = json_incref(v);
    return true;
}

static bool decode_num_heads(json_t *root, const request_limits *limits,
                             size_t *heads, decode_error *err)
{
    json_t *v = json_object_get(root, "num_heads");
    *heads = 0;
    if (!v)
        return true;
    if (!json_is_number(v))
        return fail(err, 400, "wrong_type", "/num_heads",
                    "num_heads must be an integer");
    double value = json_number_value(v);
    if (value != floor(value))
        return fail(err, 400, "invalid_num_heads", "/num_heads",
                    "num_heads must be a whole number, got %g", value);
    if (value < 1)
        return fail(err, 400, "invalid_num_heads", "/num_heads",
                    "num_heads must be at least 1, got %g", value);
    if (value > (double)limits->max_heads)
        return fail(err, 413, "limit_exceeded", "/num_heads",
                    "num_heads may be at most %zu (--max-heads)",
                    limits->max_heads);
    *heads = (size_t)value;
    return true;
}

/* Checks that the weights fit x/context and each other; sets heads, d_k,
 * d_v. */
static bool fit_weights(api_request *req, weight *wq, weight *wk, weight *wv,
                        size_t heads, const request_limits *limits,
                        decode_error *err)
{
    attn_problem *p = &req->problem;
    weight *all[3] = {wq, wk, wv};
    const char *role[3] = {"x", "context", "context"};
    size_t expect_rows[3] = {p->d, p->d_c, p->d_c};
    for (int i = 0; i < 3; i++) {
        const char *name = all[i]->spec.name;
        if (all[i]->rows != expect_rows[i]) {
            char ptr[DECODE_POINTER_MAX];
            snprintf(ptr, sizeof ptr, "%s%s", name,
                     all[i]->heads ? "/0" : "");
            return fail(err, 400, "shape_mismatch", ptr,
                        "%s has %zu rows but %s has %zu columns: x @ W needs "
                        "them equal",
                        name + 1, all[i]->rows,
                        i == 0 || !p->context ? "x" : role[i], expect_rows[i]);
        }
        if (all[i]->width > limits->max_width)
            return fail(err, 413, "limit_exceeded", name,
                        "%s is %zu wide; at most %zu (--max-width)", name + 1,
                        all[i]->width, limits->max_width);
    }
    /* heads: from num_heads, else from a stack, else 1 */
    for (int i = 0; i < 3; i++) {
        if (!all[i]->heads)
            continue;
        if (heads && all[i]->heads != heads)
            return fail(err, 400, "invalid_num_heads", "/num_heads",
                        "num_heads is %zu but %s stacks %zu heads", heads,
                        all[i]->spec.name + 1, all[i]->heads);
        if (all[i]->heads > limits->max_heads)
            return fail(err, 413, "limit_exceeded", all[i]->spec.name,
                        "at most %zu heads (--max-heads)", limits->max_heads);
        heads = all[i]->heads;
    }
    if (!heads)
        heads = 1;
    for (int i = 0; i < 3; i++)
        if (all[i]->width % heads != 0)
            return fail(err, 400, "invalid_num_heads", "/num_heads",
                        "%zu heads do not divide the %zu columns of %s", heads,
                        all[i]->width, all[i]->spec.name + 1);
    if (wk->width != wq->width)
        return fail(err, 400, "shape_mismatch", "/w_k",
                    "w_k gives keys %zu wide per head but w_q gives queries "
                    "%zu wide: Q Kᵀ needs them equal",
                    wk->width / heads, wq->width / heads);
    p->heads = heads;
    p->d_k = wq->width / heads;
    p->d_v = wv->width / heads;
    return true;
}

static bool decode_mask(json_t *root, api_request *req, size_t *budget,
                        decode_error *err)
{
    attn_problem *p = &req->problem;
    json_t *v = json_object_get(root, "mask");
    if (v) {
        /* booleans (may attend) or numbers (added to the scaled scores),
         * decided by the first element */
        json_t *first = v;
        while (json_is_array(first) && json_array_size(first) > 0)
            first = json_array_get(first, 0);
        tensor_spec t = {.name = "/mask", .min_rank = 2, .max_rank = 2,
                         .leaf = json_is_boolean(first) ? LEAF_BOOL
                                                        : LEAF_NUMBER,
                         .dtype = p->dtype};
        if (!tensor_decode(v, &t, budget, err))
            return false;
        if (t.dims[0] != p->n || t.dims[1] != p->m) {
            free(t.data);
            return fail(err, 400, "shape_mismatch", "/mask",
                        "mask is %zu×%zu but the scores are %zu×%zu "
                        "(queries × keys)",
                        t.dims[0], t.dims[1], p->n, p->m);
        }
        if (t.leaf == LEAF_BOOL)
            req->allow = t.data;
        else
            req->bias = t.data;
    }
    v = json_object_get(root, "key_padding");
    if (v) {
        tensor_spec t = {.name = "/key_padding", .min_rank = 1,
                         .max_rank = 1, .leaf = LEAF_BOOL};
        if (!tensor_decode(v, &t, budget, err))
            return false;
        req->key_padding = t.data;
        if (t.dims[0] != p->m)
            return fail(err, 400, "shape_mismatch", "/key_padding",
                        "key_padding has %zu entries for %zu keys", t.dims[0],
                        p->m);
    }
    p->allow = req->allow;
    p->bias = req->bias;
    p->key_padding = req->key_padding;
    return true;
}

static bool decode_scale(json_t *root, api_request *req, decode_error *err)
{
    json_t *v = json_object_get(root, "scale");
    req->problem.scale = 0; /* default: divide by √d_k */
    req->scale = 1.0 / sqrt((double)req->problem.d_k);
    if (!v)
        return true;
    if (!json_is_number(v))
        return fail(err, 400, "wrong_type", "/scale", "scale must be a number");
    double s = json_number_value(v);
    if (!(s > 0) || !isfinite(s))
        return fail(err, 400, "invalid_scale", "/scale",
                    "scale must be a positive number, got %g", s);
    if (req->problem.dtype == TENSOR_FLOAT32 && isinf((float)s))
        return fail(err, 400, "number_out_of_range", "/scale",
                    "%g does not fit in float32", s);
    req->problem.scale = s;
    req->scale = s;
    return true;
}

static bool check_tokens(const char *name, size_t count,
                         const request_limits *limits, decode_error *err)
{
    if (count > limits->max_tokens)
        return fail(err, 413, "limit_exceeded", name,
                    "%s has %zu rows (tokens); at most %zu (--max-tokens)",
                    name + 1, count, limits->max_tokens);
    return true;
}

static bool decode_fields(json_t *root, const request_limits *limits,
                          api_request *req, decode_error *err)
{
    attn_problem *p = &req->problem;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        size_t i = 0, count = sizeof known_fields / sizeof *known_fields;
        while (i < count && strcmp(key, known_fields[i]) != 0)
            i++;
        if (i == count) {
            char ptr[DECODE_POINTER_MAX] = "";
            problem_pointer_append(ptr, sizeof ptr, key);
            return fail(err, 400, "unknown_field", ptr,
                        "unknown field (fields are x, context, w_q, w_k, w_v, "
                        "w_o, num_heads, scale, dtype, return, causal, mask, "
                        "key_padding, tokens, context_tokens)");
        }
    }
    if (!decode_dtype(root, &p->dtype, err))
        return false;
    size_t budget = limits->max_elements;

    tensor_spec x = {.name = "/x", .min_rank = 2, .max_rank = 2,
                     .leaf = LEAF_NUMBER, .dtype = p->dtype};
    json_t *xv = json_object_get(root, "x");
    if (!xv)
        return fail(err, 400, "missing_field", "/x", "x is required");
    if (!tensor_decode(xv, &x, &budget, err))
        return false;
    p->x = req->x = x.data;
    p->n = p->m = x.dims[0];
    p->d = p->d_c = x.dims[1];
    if (!check_tokens("/x", p->n, limits, err))
        return false;
    if (p->d > limits->max_width)
        return fail(err, 413, "limit_exceeded", "/x",
                    "x is %zu wide; at most %zu (--max-width)", p->d,
                    limits->max_width);

    json_t *cv = json_object_get(root, "context");
    if (cv) {
        tensor_spec c = {.name = "/context", .min_rank = 2, .max_rank = 2,
                         .leaf = LEAF_NUMBER, .dtype = p->dtype};
        if (!tensor_decode(cv, &c, &budget, err))
            return false;
        p->context = req->context = c.data;
        p->m = c.dims[0];
        p->d_c = c.dims[1];
        if (!check_tokens("/context", p->m, limits, err))
            return false;
    }

    size_t heads;
    if (!decode_num_heads(root, limits, &heads, err))
        return false;
    weight wq = {0}, wk = {0}, wv = {0};
    bool ok = weight_decode(root, "/w_q", p->dtype, &budget, &wq, err);
    req->w_q = wq.spec.data;
    ok = ok && weight_decode(root, "/w_k", p->dtype, &budget, &wk, err);
    req->w_k = wk.spec.data;
    ok = ok && weight_decode(root, "/w_v", p->dtype, &budget, &wv, err);
    req->w_v = wv.spec.data;
    if (!ok || !fit_weights(req, &wq, &wk, &wv, heads, limits, err))
        return false;
    p->w_q = req->w_q;
    p->w_k = req->w_k;
    p->w_v = req->w_v;

    json_t *ov = json_object_get(root, "w_o");
    if (ov) {
        tensor_spec o = {.name = "/w_o", .min_rank = 2, .max_rank = 2,
                         .leaf = LEAF_NUMBER, .dtype = p->dtype};
        if (!tensor_decode(ov, &o, &budget, err))
            return false;
        p->w_o = req->w_o = o.data;
        if (o.dims[0] != p->heads * p->d_v)
            return fail(err, 400, "shape_mismatch", "/w_o",
                        "w_o has %zu rows but the concatenated heads are %zu "
                        "wide (%zu heads × %zu)",
                        o.dims[0], p->heads * p->d_v, p->heads, p->d_v);
        p->d_out = o.dims[1];
        if (p->d_out > limits->max_width)
            return fail(err, 413, "limit_exceeded", "/w_o",
                        "w_o is %zu wide; at most %zu (--max-width)", p->d_out,
                        limits->max_width);
    }

    if (!decode_scale(root, req, err) || !decode_return(root, &req->want, err) ||
        !decode_bool(root, "/causal", &p->causal, err) ||
        !decode_mask(root, req, &budget, err) ||
        !decode_labels(root, "/tokens", p->n, &req->tokens, err))
        return false;
    if (json_object_get(root, "context_tokens") && !p->context)
        return fail(err, 400, "missing_field", "/context",
                    "context_tokens label the rows of context, which is "
                    "absent (self-attention uses tokens)");
    if (!decode_labels(root, "/context_tokens", p->m, &req->context_tokens,
                       err))
        return false;

    size_t need = attn_bytes_needed(p, req->want);
    if (need > limits->max_request_memory)
        return fail(err, 413, "limit_exceeded", NULL,
                    "computing this request needs %zu MiB; at most %zu MiB "
                    "per request (--max-request-memory)",
                    need == SIZE_MAX ? SIZE_MAX >> 20 : need >> 20,
                    limits->max_request_memory >> 20);
    return true;
}

bool decode_request(const char *body, size_t len, const request_limits *limits,
                    api_request *req, decode_error *err)
{
    memset(req, 0, sizeof *req);
    memset(err, 0, sizeof *err);
    json_error_t jerr;
    json_t *root = json_loadb(body, len,
                              JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL,
                              &jerr);
    if (!root) {
        if (len == 0)
            return fail(err, 400, "invalid_json", NULL,
                        "the request body is empty; send a JSON object");
        return fail(err, 400, "invalid_json", NULL,
                    "invalid JSON at line %d, column %d: %s", jerr.line,
                    jerr.column, jerr.text);
    }
    bool ok;
    if (!json_is_object(root))
        ok = fail(err, 400, "invalid_body", "",
                  "the request body must be a JSON object");
    else
        ok = decode_fields(root, limits, req, err);
    json_decref(root);
    if (!ok)
        api_request_free(req);
    return ok;
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
