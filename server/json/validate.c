/*
 * validate.c - the cross-field rules of a request, in the order a person
 * would fix them: x and context, the weights and how they fit x, context and
 * each other (which also fixes the heads), w_o, the scale, the masks, the
 * labels.  Weights in either layout of the lessons leave here in the core's
 * one wide layout.
 */
#include "server/json/validate.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "/name" of a field. */
static const char *pointer_of(api_field f, char out[CODEC_POINTER_MAX])
{
    codec_pointer(out, api_schema[f].name, NULL, 0);
    return out;
}

/* "/name/i/j/k" for flat element `flat` of t. */
static void pointer_of_element(char out[CODEC_POINTER_MAX], api_field f,
                               const schema_tensor *t, size_t flat)
{
    size_t index[SCHEMA_MAX_RANK];
    for (int i = t->rank - 1; i >= 0; i--) {
        index[i] = flat % t->dims[i];
        flat /= t->dims[i];
    }
    codec_pointer(out, api_schema[f].name, index, t->rank);
}

static size_t element_count(const schema_tensor *t)
{
    size_t count = 1;
    for (int i = 0; i < t->rank; i++)
        count *= t->dims[i]; /* bounded by the parser's element budget */
    return count;
}

/* Takes the numbers of field f in the request's dtype: float64 moves the
 * buffer, float32 narrows every number and refuses one that does not fit. */
static bool take_numbers(api_fields *fields, api_field f, tensor_dtype dtype,
                         void **out, codec_error *err)
{
    schema_tensor *t = &fields->tensor[f];
    if (dtype == TENSOR_FLOAT64) {
        *out = t->data;
        t->data = NULL;
        return true;
    }
    size_t count = element_count(t);
    float *narrow = malloc(count * sizeof *narrow + 1);
    if (!narrow)
        return codec_fail(err, 503, "out_of_memory", NULL, "out of memory");
    const double *wide = t->data;
    for (size_t i = 0; i < count; i++) {
        narrow[i] = (float)wide[i];
        if (isinf(narrow[i])) {
            char ptr[CODEC_POINTER_MAX];
            pointer_of_element(ptr, f, t, i);
            free(narrow);
            return codec_fail(err, 400, "number_out_of_range", ptr,
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

/* ---- x and context ----------------------------------------------------- */

static bool check_size(api_field f, size_t rows, size_t cols,
                       const request_limits *limits, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    const char *name = api_schema[f].name;
    if (rows > limits->max_tokens)
        return codec_fail(err, 413, "limit_exceeded", pointer_of(f, ptr),
                          "%s has %zu rows (tokens); at most %zu "
                          "(--max-tokens)",
                          name, rows, limits->max_tokens);
    if (cols > limits->max_width)
        return codec_fail(err, 413, "limit_exceeded", pointer_of(f, ptr),
                          "%s is %zu wide; at most %zu (--max-width)", name,
                          cols, limits->max_width);
    return true;
}

static bool take_inputs(api_fields *fields, const request_limits *limits,
                        api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    const schema_tensor *x = &fields->tensor[API_X];
    p->n = p->m = x->dims[0];
    p->d = p->d_c = x->dims[1];
    if (!check_size(API_X, p->n, p->d, limits, err) ||
        !take_numbers(fields, API_X, p->dtype, &req->x, err))
        return false;
    p->x = req->x;

    const schema_tensor *ctx = &fields->tensor[API_CONTEXT];
    if (ctx->present) {
        p->m = ctx->dims[0];
        p->d_c = ctx->dims[1];
        if (!check_size(API_CONTEXT, p->m, p->d_c, limits, err) ||
            !take_numbers(fields, API_CONTEXT, p->dtype, &req->context, err))
            return false;
        p->context = req->context;
    }
    return true;
}

/* ---- weights ----------------------------------------------------------- */

typedef struct {
    api_field field;
    size_t heads;       /* stack depth (rank 3) or 0 */
    size_t rows, width; /* as a wide (rows, width) matrix */
} weight;

static bool weight_take(api_fields *fields, api_field f, tensor_dtype dtype,
                        weight *w, void **out, codec_error *err)
{
    const schema_tensor *t = &fields->tensor[f];
    w->field = f;
    size_t dims[SCHEMA_MAX_RANK];
    int rank = t->rank;
    memcpy(dims, t->dims, sizeof dims);
    if (!take_numbers(fields, f, dtype, out, err))
        return false;
    if (rank == 2) {
        w->heads = 0;
        w->rows = dims[0];
        w->width = dims[1];
        return true;
    }
    w->heads = dims[0];
    w->rows = dims[1];
    w->width = dims[0] * dims[2];
    void *wide = stack_to_wide(*out, dims, tensor_dtype_size(dtype));
    free(*out);
    *out = wide;
    if (!wide)
        return codec_fail(err, 503, "out_of_memory", NULL, "out of memory");
    return true;
}

/* The head count: num_heads when given, else the first stack's depth, else
 * 1; every stack must agree and every width must divide.  The error names
 * what the head count came from. */
static bool fit_heads(const weight all[3], size_t heads, size_t *out,
                      codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    const char *num_heads = api_schema[API_NUM_HEADS].name;
    int stack_source = -1;
    for (int i = 0; i < 3; i++) {
        if (!all[i].heads)
            continue;
        const char *name = api_schema[all[i].field].name;
        if (heads && all[i].heads != heads) {
            if (stack_source < 0)
                return codec_fail(err, 400, "invalid_num_heads",
                                  pointer_of(API_NUM_HEADS, ptr),
                                  "%s is %zu but %s stacks %zu heads",
                                  num_heads, heads, name, all[i].heads);
            return codec_fail(
                err, 400, "invalid_num_heads", pointer_of(all[i].field, ptr),
                "%s stacks %zu heads but %s stacks %zu", name, all[i].heads,
                api_schema[all[stack_source].field].name, heads);
        }
        if (!heads)
            stack_source = i;
        heads = all[i].heads;
    }
    if (!heads)
        heads = 1;
    for (int i = 0; i < 3; i++) {
        if (all[i].width % heads == 0)
            continue;
        const char *name = api_schema[all[i].field].name;
        if (stack_source < 0)
            return codec_fail(err, 400, "invalid_num_heads",
                              pointer_of(API_NUM_HEADS, ptr),
                              "%zu heads do not divide the %zu columns of %s",
                              heads, all[i].width, name);
        return codec_fail(err, 400, "invalid_num_heads",
                          pointer_of(all[i].field, ptr),
                          "%s stacks %zu heads, which do not divide the %zu "
                          "columns of %s",
                          api_schema[all[stack_source].field].name, heads,
                          all[i].width, name);
    }
    *out = heads;
    return true;
}

/* Checks that the weights fit x/context and each other; sets heads, d_k,
 * d_v. */
static bool fit_weights(api_request *req, const weight all[3], size_t heads,
                        const request_limits *limits, codec_error *err)
{
    attn_problem *p = &req->problem;
    size_t expect_rows[3] = {p->d, p->d_c, p->d_c};
    for (int i = 0; i < 3; i++) {
        const char *name = api_schema[all[i].field].name;
        char ptr[CODEC_POINTER_MAX];
        size_t first = 0;
        codec_pointer(ptr, name, &first, all[i].heads ? 1 : 0);
        if (all[i].rows != expect_rows[i])
            return codec_fail(err, 400, "shape_mismatch", ptr,
                              "%s has %zu rows but %s has %zu columns: "
                              "x @ W needs them equal",
                              name, all[i].rows,
                              i == 0 || !p->context ? "x" : "context",
                              expect_rows[i]);
        pointer_of(all[i].field, ptr);
        if (all[i].width > limits->max_width)
            return codec_fail(err, 413, "limit_exceeded", ptr,
                              "%s is %zu wide; at most %zu (--max-width)", name,
                              all[i].width, limits->max_width);
        if (all[i].heads > limits->max_heads)
            return codec_fail(err, 413, "limit_exceeded", ptr,
                              "at most %zu heads (--max-heads)",
                              limits->max_heads);
    }
    if (!fit_heads(all, heads, &heads, err))
        return false;
    if (all[1].width != all[0].width) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, 400, "shape_mismatch", pointer_of(API_W_K, ptr),
                          "w_k gives keys %zu wide per head but w_q gives "
                          "queries %zu wide: Q Kᵀ needs them equal",
                          all[1].width / heads, all[0].width / heads);
    }
    p->heads = heads;
    p->d_k = all[0].width / heads;
    p->d_v = all[2].width / heads;
    return true;
}

static bool take_weights(api_fields *fields, const request_limits *limits,
                         api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    const schema_value *num_heads = &fields->value[API_NUM_HEADS];
    size_t heads = num_heads->present ? (size_t)num_heads->number : 0;
    weight w[3] = {0};
    if (!weight_take(fields, API_W_Q, p->dtype, &w[0], &req->w_q, err) ||
        !weight_take(fields, API_W_K, p->dtype, &w[1], &req->w_k, err) ||
        !weight_take(fields, API_W_V, p->dtype, &w[2], &req->w_v, err) ||
        !fit_weights(req, w, heads, limits, err))
        return false;
    p->w_q = req->w_q;
    p->w_k = req->w_k;
    p->w_v = req->w_v;

    const schema_tensor *wo = &fields->tensor[API_W_O];
    if (!wo->present)
        return true;
    if (wo->dims[0] != p->heads * p->d_v) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, 400, "shape_mismatch", pointer_of(API_W_O, ptr),
                          "w_o has %zu rows but the concatenated heads are "
                          "%zu wide (%zu heads × %zu)",
                          wo->dims[0], p->heads * p->d_v, p->heads, p->d_v);
    }
    p->d_out = wo->dims[1];
    if (!check_size(API_W_O, 0, p->d_out, limits, err) ||
        !take_numbers(fields, API_W_O, p->dtype, &req->w_o, err))
        return false;
    p->w_o = req->w_o;
    return true;
}

/* ---- the scale, the masks, the labels ----------------------------------- */

static bool take_scale(const api_fields *fields, api_request *req,
                       codec_error *err)
{
    const schema_value *v = &fields->value[API_SCALE];
    req->problem.scale = 0; /* default: divide by √d_k */
    req->scale = 1.0 / sqrt((double)req->problem.d_k);
    if (!v->present)
        return true;
    if (req->problem.dtype == TENSOR_FLOAT32 && isinf((float)v->number)) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, 400, "number_out_of_range",
                          pointer_of(API_SCALE, ptr),
                          "%g does not fit in float32", v->number);
    }
    req->problem.scale = v->number;
    req->scale = v->number;
    return true;
}

static bool take_masks(api_fields *fields, api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    schema_tensor *mask = &fields->tensor[API_MASK];
    if (mask->present) {
        if (mask->dims[0] != p->n || mask->dims[1] != p->m)
            return codec_fail(err, 400, "shape_mismatch",
                              pointer_of(API_MASK, ptr),
                              "mask is %zu×%zu but the scores are %zu×%zu "
                              "(queries × keys)",
                              mask->dims[0], mask->dims[1], p->n, p->m);
        if (mask->is_bool) {
            req->allow = mask->data;
            mask->data = NULL;
        } else if (!take_numbers(fields, API_MASK, p->dtype, &req->bias, err)) {
            return false;
        }
    }
    schema_tensor *padding = &fields->tensor[API_KEY_PADDING];
    if (padding->present) {
        if (padding->dims[0] != p->m)
            return codec_fail(err, 400, "shape_mismatch",
                              pointer_of(API_KEY_PADDING, ptr),
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

/* Labels of field f must number `count` (the rows they label). */
static bool take_labels(api_fields *fields, api_field f, size_t count,
                        api_labels *out, codec_error *err)
{
    api_labels *labels = &fields->value[f].labels;
    if (!fields->value[f].present)
        return true;
    if (labels->count != count) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, 400, "shape_mismatch", pointer_of(f, ptr),
                          "%s has %zu labels for %zu tokens",
                          api_schema[f].name, labels->count, count);
    }
    *out = *labels;
    memset(labels, 0, sizeof *labels);
    return true;
}

bool validate_request(api_fields *fields, const request_limits *limits,
                      api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    const schema_value *dtype = &fields->value[API_DTYPE];
    p->dtype = dtype->present ? (tensor_dtype)dtype->choice : TENSOR_FLOAT64;
    const schema_value *want = &fields->value[API_RETURN];
    req->want = want->present
                    ? want->stages
                    : ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS);
    req->binary = fields->value[API_ENCODING].present &&
                  fields->value[API_ENCODING].choice != 0;
    p->causal =
        fields->value[API_CAUSAL].present && fields->value[API_CAUSAL].boolean;

    if (!take_inputs(fields, limits, req, err) ||
        !take_weights(fields, limits, req, err) ||
        !take_scale(fields, req, err) || !take_masks(fields, req, err) ||
        !take_labels(fields, API_TOKENS, p->n, &req->tokens, err))
        return false;
    if (fields->value[API_CONTEXT_TOKENS].present && !p->context) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, 400, "missing_field",
                          pointer_of(API_CONTEXT, ptr),
                          "context_tokens label the rows of context, which "
                          "is absent (self-attention uses tokens)");
    }
    /* the memory this needs is checked by the endpoint, which knows how many
     * threads will work on it */
    return take_labels(fields, API_CONTEXT_TOKENS, p->m, &req->context_tokens,
                       err);
}
