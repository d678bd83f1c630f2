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
    if (t->is_float32 == (dtype == TENSOR_FLOAT32)) { /* already the dtype */
        *out = t->data;
        t->data = NULL;
        return true;
    }
    size_t count = element_count(t);
    void *typed = malloc(count * tensor_dtype_size(dtype) + 1);
    if (!typed)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        double wide = schema_number(t, i);
        if (dtype == TENSOR_FLOAT64) {
            ((double *)typed)[i] = wide;
            continue;
        }
        float narrow = (float)wide;
        ((float *)typed)[i] = narrow;
        if (isinf(narrow)) {
            char ptr[CODEC_POINTER_MAX];
            pointer_of_element(ptr, f, t, i);
            free(typed);
            return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                              "%g does not fit in float32 (largest %g)", wide,
                              (double)FLT_MAX);
        }
    }
    *out = typed;
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
        return codec_fail(err, ERR_LIMIT_EXCEEDED, pointer_of(f, ptr),
                          "%s has %zu rows (tokens); at most %zu "
                          "(--max-tokens)",
                          name, rows, limits->max_tokens);
    if (cols > limits->max_width)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, pointer_of(f, ptr),
                          "%s is %zu wide; at most %zu (--max-width)", name,
                          cols, limits->max_width);
    return true;
}

/* x, and context when there is one: one sequence (n, d), or a batch of B
 * (B, n, d) whose contexts are (B, m, d_c).  The token limit applies to
 * the batch's rows together. */
static bool take_inputs(api_fields *fields, const request_limits *limits,
                        api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    const schema_tensor *x = &fields->tensor[API_X];
    size_t lead = x->rank == 3 ? 1 : 0;
    p->batch = lead ? x->dims[0] : 0;
    p->n = p->m = x->dims[lead];
    p->d = p->d_c = x->dims[lead + 1];
    size_t sequences = p->batch ? p->batch : 1;
    /* products bounded by the parser's element budget */
    if (!check_size(API_X, sequences * p->n, p->d, limits, err) ||
        !take_numbers(fields, API_X, p->dtype, &req->x, err))
        return false;
    p->x = req->x;

    const schema_tensor *ctx = &fields->tensor[API_CONTEXT];
    if (!ctx->present)
        return true;
    char ptr[CODEC_POINTER_MAX];
    if (ctx->rank != x->rank)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_CONTEXT, ptr),
                          "context has %d dimensions but x has %d: one "
                          "sequence (m, d_c) per sequence of x",
                          ctx->rank, x->rank);
    if (lead && ctx->dims[0] != p->batch)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_CONTEXT, ptr),
                          "context holds %zu sequences but x holds %zu",
                          ctx->dims[0], p->batch);
    p->m = ctx->dims[lead];
    p->d_c = ctx->dims[lead + 1];
    if (!check_size(API_CONTEXT, sequences * p->m, p->d_c, limits, err) ||
        !take_numbers(fields, API_CONTEXT, p->dtype, &req->context, err))
        return false;
    p->context = req->context;
    return true;
}

/* ---- weights and biases ------------------------------------------------ */

/* Numbers of the request's fields in its dtype, each taken once: several
 * weights may come out of one field (in_proj_weight holds three). */
typedef struct {
    api_fields *fields;
    tensor_dtype dtype;
    void *typed[API_FIELD_COUNT];
} sources;

static bool typed_of(sources *src, api_field f, codec_error *err)
{
    return src->typed[f] ||
           take_numbers(src->fields, f, src->dtype, &src->typed[f], err);
}

static void sources_free(sources *src)
{
    for (int f = 0; f < API_FIELD_COUNT; f++)
        free(src->typed[f]);
}

/* Where one of the core's weights (or biases) comes from: a field, which of
 * its `parts` equal blocks of rows it is (in_proj_weight: [W_q; W_k; W_v]),
 * and whether it is out×in (PyTorch's nn.Linear.weight, y = x·Wᵀ). */
typedef struct {
    api_field field; /* API_FIELD_COUNT: none was sent */
    size_t part, parts;
    bool torch;
} source;

static bool present(const api_fields *fields, api_field f)
{
    return fields->tensor[f].present;
}

/* The source of one weight or bias: the one of `names` that was sent (two
 * of them: 400 naming both).  PyTorch's state_dict names are out×in
 * always; our own names follow "layout". */
static bool pick_source(const api_fields *fields, const api_field *names,
                        size_t count, size_t part, bool torch_layout,
                        source *out, codec_error *err)
{
    *out = (source){API_FIELD_COUNT, 0, 1, false};
    for (size_t i = 0; i < count; i++) {
        api_field f = names[i];
        if (!present(fields, f))
            continue;
        if (out->field != API_FIELD_COUNT) {
            char ptr[CODEC_POINTER_MAX];
            return codec_fail(err, ERR_CONFLICTING_FIELDS, pointer_of(f, ptr),
                              "%s and %s give the same projection; send one "
                              "of them",
                              api_schema[out->field].name, api_schema[f].name);
        }
        bool packed = f == API_IN_PROJ_WEIGHT || f == API_IN_PROJ_BIAS;
        bool ours = f == API_W_Q || f == API_W_K || f == API_W_V ||
                    f == API_W_O || f == API_B_Q || f == API_B_K ||
                    f == API_B_V || f == API_B_O;
        *out = (source){f, packed ? part : 0, packed ? 3 : 1,
                        ours ? torch_layout : true};
    }
    return true;
}

typedef struct {
    source from;
    size_t heads;       /* stack depth (rank 3) or 0 */
    size_t rows, width; /* as the core's wide (rows, width) matrix */
} weight;

/* a (rows, cols) → (cols, rows), elements of elem bytes. */
static void transpose_into(char *dst, const char *a, size_t rows, size_t cols,
                           size_t elem)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(dst + (c * rows + r) * elem, a + (r * cols + c) * elem,
                   elem);
}

/* The weight of `from` in the core's layout: in×out, per-head stacks made
 * wide. */
static bool weight_take(sources *src, source from, weight *w, void **out,
                        codec_error *err)
{
    const schema_tensor *t = &src->fields->tensor[from.field];
    size_t elem = tensor_dtype_size(src->dtype);
    char ptr[CODEC_POINTER_MAX];
    w->from = from;
    if (!typed_of(src, from.field, err))
        return false;
    size_t heads = t->rank == 3 ? t->dims[0] : 1;
    size_t rows = t->dims[t->rank - 2], cols = t->dims[t->rank - 1];
    if (rows % from.parts != 0)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(from.field, ptr),
                          "%s has %zu rows, which are not %zu equal blocks "
                          "[W_q; W_k; W_v]",
                          api_schema[from.field].name, rows, from.parts);
    rows /= from.parts;
    const char *block =
        (const char *)src->typed[from.field] + from.part * rows * cols * elem;
    /* each head's matrix as in×out */
    size_t in = from.torch ? cols : rows, width = from.torch ? rows : cols;
    if (!from.torch && from.parts == 1) {
        *out = src->typed[from.field]; /* as sent: no copy */
        src->typed[from.field] = NULL;
    } else {
        *out = malloc(heads * in * width * elem + 1);
        if (!*out)
            return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
        for (size_t h = 0; h < heads; h++)
            if (from.torch)
                transpose_into((char *)*out + h * in * width * elem,
                               block + h * rows * cols * elem, rows, cols,
                               elem);
            else
                memcpy((char *)*out + h * in * width * elem,
                       block + h * rows * cols * elem, rows * cols * elem);
    }
    w->heads = t->rank == 3 ? heads : 0;
    w->rows = in;
    w->width = heads * width;
    if (t->rank == 2)
        return true;
    size_t dims[3] = {heads, in, width};
    void *wide = stack_to_wide(*out, dims, elem);
    free(*out);
    *out = wide;
    if (!wide)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    return true;
}

/* The head count of `count` weights: `heads` (from the field `given`) when
 * given, else the first stack's depth, else 1; every stack must agree and
 * every width must divide.  The error names what the head count came
 * from. */
static bool fit_heads(const weight *all, int count, api_field given,
                      size_t heads, size_t *out, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    const char *num_heads = api_schema[given].name;
    int stack_source = -1;
    for (int i = 0; i < count; i++) {
        if (!all[i].heads)
            continue;
        const char *name = api_schema[all[i].from.field].name;
        if (heads && all[i].heads != heads) {
            if (stack_source < 0)
                return codec_fail(err, ERR_INVALID_NUM_HEADS,
                                  pointer_of(given, ptr),
                                  "%s is %zu but %s stacks %zu heads",
                                  num_heads, heads, name, all[i].heads);
            return codec_fail(
                err, ERR_INVALID_NUM_HEADS, pointer_of(all[i].from.field, ptr),
                "%s stacks %zu heads but %s stacks %zu", name, all[i].heads,
                api_schema[all[stack_source].from.field].name, heads);
        }
        if (!heads)
            stack_source = i;
        heads = all[i].heads;
    }
    if (!heads)
        heads = 1;
    for (int i = 0; i < count; i++) {
        if (all[i].width % heads == 0)
            continue;
        const char *name = api_schema[all[i].from.field].name;
        if (stack_source < 0)
            return codec_fail(err, ERR_INVALID_NUM_HEADS,
                              pointer_of(given, ptr),
                              "%zu heads do not divide the %zu columns of %s",
                              heads, all[i].width, name);
        return codec_fail(err, ERR_INVALID_NUM_HEADS,
                          pointer_of(all[i].from.field, ptr),
                          "%s stacks %zu heads, which do not divide the %zu "
                          "columns of %s",
                          api_schema[all[stack_source].from.field].name, heads,
                          all[i].width, name);
    }
    *out = heads;
    return true;
}

/* Checks that the weights fit x/context and each other; sets heads,
 * kv_heads, d_k, d_v.  kv_heads: num_kv_heads, or 0 when not given (then
 * W_k and W_v have as many heads as W_q). */
static bool fit_weights(api_request *req, const weight all[3], size_t heads,
                        size_t kv_heads, const request_limits *limits,
                        codec_error *err)
{
    attn_problem *p = &req->problem;
    size_t expect_rows[3] = {p->d, p->d_c, p->d_c};
    for (int i = 0; i < 3; i++) {
        api_field f = all[i].from.field;
        const char *name = api_schema[f].name;
        char ptr[CODEC_POINTER_MAX];
        size_t first = 0;
        codec_pointer(ptr, name, &first, all[i].heads ? 1 : 0);
        if (all[i].rows != expect_rows[i])
            return codec_fail(
                err, ERR_SHAPE_MISMATCH, ptr,
                all[i].from.torch ? "%s has %zu columns but %s has %zu "
                                    "columns: x @ Wᵀ needs them equal"
                                  : "%s has %zu rows but %s has %zu columns: "
                                    "x @ W needs them equal",
                name, all[i].rows, i == 0 || !p->context ? "x" : "context",
                expect_rows[i]);
        pointer_of(f, ptr);
        if (all[i].width > limits->max_width)
            return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                              "%s is %zu wide; at most %zu (--max-width)", name,
                              all[i].width, limits->max_width);
        if (all[i].heads > limits->max_heads)
            return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                              "at most %zu heads (--max-heads)",
                              limits->max_heads);
    }
    size_t h_kv;
    if (!kv_heads) { /* one head count for the three */
        if (!fit_heads(all, 3, API_NUM_HEADS, heads, &heads, err))
            return false;
        h_kv = heads;
    } else if (!fit_heads(all, 1, API_NUM_HEADS, heads, &heads, err) ||
               !fit_heads(all + 1, 2, API_NUM_KV_HEADS, kv_heads, &h_kv, err)) {
        return false;
    }
    char ptr[CODEC_POINTER_MAX];
    if (heads % h_kv != 0)
        return codec_fail(err, ERR_INVALID_NUM_KV_HEADS,
                          pointer_of(API_NUM_KV_HEADS, ptr),
                          "%zu key/value heads do not divide the %zu query "
                          "heads",
                          h_kv, heads);
    if (all[1].width / h_kv != all[0].width / heads)
        return codec_fail(
            err, ERR_SHAPE_MISMATCH, pointer_of(all[1].from.field, ptr),
            "%s gives keys %zu wide per head but %s gives "
            "queries %zu wide: Q Kᵀ needs them equal",
            api_schema[all[1].from.field].name, all[1].width / h_kv,
            api_schema[all[0].from.field].name, all[0].width / heads);
    p->heads = heads;
    p->kv_heads = kv_heads ? h_kv : 0;
    p->d_k = all[0].width / heads;
    p->d_v = all[2].width / h_kv;
    return true;
}

/* A bias of `heads` × `per_head` numbers (one head: per_head = the width)
 * from `from`: a vector, an (h, width) stack, or its block of
 * in_proj_bias, which holds [b_q; b_k; b_v] (offset, total: where this one
 * starts and how long all three are). */
static bool bias_take(sources *src, source from, size_t heads, size_t per_head,
                      size_t offset, size_t total, const char *what, void **out,
                      codec_error *err)
{
    if (from.field == API_FIELD_COUNT)
        return true;
    const schema_tensor *t = &src->fields->tensor[from.field];
    const char *name = api_schema[from.field].name;
    char ptr[CODEC_POINTER_MAX];
    pointer_of(from.field, ptr);
    size_t width = heads * per_head, elem = tensor_dtype_size(src->dtype);
    size_t length = t->rank == 2 ? t->dims[0] * t->dims[1] : t->dims[0];
    if (from.parts > 1 && length != total)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s has %zu entries but [b_q; b_k; b_v] are %zu",
                          name, length, total);
    if (from.parts == 1 &&
        (length != width ||
         (t->rank == 2 && (t->dims[0] != heads || t->dims[1] != per_head))))
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s has %s%zu entries but %s %zu wide (%zu heads "
                          "× %zu)",
                          name, t->rank == 2 ? "a stack of " : "", length, what,
                          width, heads, per_head);
    if (!typed_of(src, from.field, err))
        return false;
    *out = malloc(width * elem + 1);
    if (!*out)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    if (from.parts == 1)
        offset = 0; /* a bias of its own, not a block of in_proj_bias */
    memcpy(*out, (const char *)src->typed[from.field] + offset * elem,
           width * elem);
    return true;
}

static bool take_weights(api_fields *fields, const request_limits *limits,
                         api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    bool torch = fields->value[API_LAYOUT].present &&
                 fields->value[API_LAYOUT].choice != 0;
    static const api_field q_names[] = {API_W_Q, API_IN_PROJ_WEIGHT,
                                        API_Q_PROJ_WEIGHT};
    static const api_field k_names[] = {API_W_K, API_IN_PROJ_WEIGHT,
                                        API_K_PROJ_WEIGHT};
    static const api_field v_names[] = {API_W_V, API_IN_PROJ_WEIGHT,
                                        API_V_PROJ_WEIGHT};
    static const api_field o_names[] = {API_W_O, API_OUT_PROJ_WEIGHT};
    static const api_field *const w_names[3] = {q_names, k_names, v_names};
    static const api_field bq_names[] = {API_B_Q, API_IN_PROJ_BIAS};
    static const api_field bk_names[] = {API_B_K, API_IN_PROJ_BIAS};
    static const api_field bv_names[] = {API_B_V, API_IN_PROJ_BIAS};
    static const api_field bo_names[] = {API_B_O, API_OUT_PROJ_BIAS};
    void **w_out[3] = {&req->w_q, &req->w_k, &req->w_v};

    sources src = {.fields = fields, .dtype = p->dtype};
    source from[3], bias[4], out_from;
    bool ok = true;
    for (int i = 0; ok && i < 3; i++) {
        ok =
            pick_source(fields, w_names[i], 3, (size_t)i, torch, &from[i], err);
        if (ok && from[i].field == API_FIELD_COUNT) {
            char ptr[CODEC_POINTER_MAX];
            const char *name = api_schema[w_names[i][0]].name;
            ok = codec_fail(err, ERR_MISSING_FIELD,
                            pointer_of(w_names[i][0], ptr),
                            "%s is required (or in_proj_weight, or %s)", name,
                            api_schema[w_names[i][2]].name);
        }
    }
    ok = ok && pick_source(fields, o_names, 2, 0, torch, &out_from, err) &&
         pick_source(fields, bq_names, 2, 0, torch, &bias[0], err) &&
         pick_source(fields, bk_names, 2, 1, torch, &bias[1], err) &&
         pick_source(fields, bv_names, 2, 2, torch, &bias[2], err) &&
         pick_source(fields, bo_names, 2, 0, torch, &bias[3], err);

    const schema_value *num_heads = &fields->value[API_NUM_HEADS];
    const schema_value *num_kv = &fields->value[API_NUM_KV_HEADS];
    size_t heads = num_heads->present ? (size_t)num_heads->number : 0;
    size_t kv_heads = num_kv->present ? (size_t)num_kv->number : 0;
    weight w[3] = {0};
    for (int i = 0; ok && i < 3; i++)
        ok = weight_take(&src, from[i], &w[i], w_out[i], err);
    ok = ok && fit_weights(req, w, heads, kv_heads, limits, err);
    if (ok) {
        p->w_q = req->w_q;
        p->w_k = req->w_k;
        p->w_v = req->w_v;
        size_t h_kv = attn_kv_heads(p);
        size_t hq = p->heads * p->d_k, hk = h_kv * p->d_k, hv = h_kv * p->d_v;
        size_t total = hq + hk + hv; /* in_proj_bias: [b_q; b_k; b_v] */
        ok = bias_take(&src, bias[0], p->heads, p->d_k, 0, total,
                       "the queries are", &req->b_q, err) &&
             bias_take(&src, bias[1], h_kv, p->d_k, hq, total, "the keys are",
                       &req->b_k, err) &&
             bias_take(&src, bias[2], h_kv, p->d_v, hq + hk, total,
                       "the values are", &req->b_v, err);
        p->b_q = req->b_q;
        p->b_k = req->b_k;
        p->b_v = req->b_v;
    }
    if (ok && out_from.field != API_FIELD_COUNT) {
        weight wo;
        ok = weight_take(&src, out_from, &wo, &req->w_o, err);
        char ptr[CODEC_POINTER_MAX];
        pointer_of(out_from.field, ptr);
        if (ok && (wo.heads || wo.rows != p->heads * p->d_v))
            ok = codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                            "%s takes %zu inputs but the concatenated heads "
                            "are %zu wide (%zu heads × %zu)",
                            api_schema[out_from.field].name, wo.rows,
                            p->heads * p->d_v, p->heads, p->d_v);
        if (ok) {
            p->d_out = wo.width;
            p->w_o = req->w_o;
            ok = check_size(out_from.field, 0, p->d_out, limits, err) &&
                 bias_take(&src, bias[3], 1, p->d_out, 0, 0, "the output is",
                           &req->b_o, err);
            p->b_o = req->b_o;
        }
    } else if (ok && bias[3].field != API_FIELD_COUNT) {
        char ptr[CODEC_POINTER_MAX];
        ok = codec_fail(err, ERR_MISSING_FIELD, pointer_of(API_W_O, ptr),
                        "%s is added after w_o, which is absent",
                        api_schema[bias[3].field].name);
    }
    sources_free(&src);
    return ok;
}

/* ---- Q, K and V given directly ------------------------------------------ */

/* Fields that project from x: none may come with q, k and v. */
static const api_field projecting[] = {
    API_X,
    API_CONTEXT,
    API_W_Q,
    API_W_K,
    API_W_V,
    API_W_O,
    API_B_Q,
    API_B_K,
    API_B_V,
    API_B_O,
    API_IN_PROJ_WEIGHT,
    API_IN_PROJ_BIAS,
    API_OUT_PROJ_WEIGHT,
    API_OUT_PROJ_BIAS,
    API_Q_PROJ_WEIGHT,
    API_K_PROJ_WEIGHT,
    API_V_PROJ_WEIGHT,
};

static bool given_qkv(const api_fields *fields)
{
    return present(fields, API_Q) || present(fields, API_K) ||
           present(fields, API_V);
}

/* q (h, n, d_k), k (h, m, d_k), v (h, m, d_v), each with a leading B in a
 * batch, as scaled_dot_product_attention takes them. */
static bool take_given(api_fields *fields, const request_limits *limits,
                       api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    static const api_field qkv[3] = {API_Q, API_K, API_V};
    for (size_t i = 0; i < sizeof projecting / sizeof *projecting; i++)
        if (present(fields, projecting[i]))
            return codec_fail(err, ERR_CONFLICTING_FIELDS,
                              pointer_of(projecting[i], ptr),
                              "%s comes with q, k and v: send q, k and v "
                              "alone (as scaled_dot_product_attention), or x "
                              "and the weights",
                              api_schema[projecting[i]].name);
    if (fields->value[API_LAYOUT].present)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          pointer_of(API_LAYOUT, ptr),
                          "layout says how weights are laid out, and q, k "
                          "and v come without weights");
    for (int i = 0; i < 3; i++)
        if (!present(fields, qkv[i]))
            return codec_fail(err, ERR_MISSING_FIELD, pointer_of(qkv[i], ptr),
                              "q, k and v go together; %s is missing",
                              api_schema[qkv[i]].name);
    const schema_tensor *q = &fields->tensor[API_Q];
    const schema_tensor *k = &fields->tensor[API_K];
    const schema_tensor *v = &fields->tensor[API_V];
    size_t lead = q->rank == 4 ? 1 : 0;
    for (int i = 1; i < 3; i++) {
        const schema_tensor *t = &fields->tensor[qkv[i]];
        const char *name = api_schema[qkv[i]].name;
        pointer_of(qkv[i], ptr);
        if (t->rank != q->rank)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "%s has %d dimensions but q has %d", name,
                              t->rank, q->rank);
        if (lead && t->dims[0] != q->dims[0])
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "%s holds %zu sequences but q holds %zu", name,
                              t->dims[0], q->dims[0]);
    }
    /* k and v: the same heads, which divide q's (grouped-query) */
    if (q->dims[lead] % k->dims[lead] != 0)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_K, ptr),
                          "k has %zu heads, which do not divide q's %zu",
                          k->dims[lead], q->dims[lead]);
    if (v->dims[lead] != k->dims[lead])
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_V, ptr),
                          "v has %zu heads but k has %zu", v->dims[lead],
                          k->dims[lead]);
    if (k->dims[lead + 2] != q->dims[lead + 2])
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_K, ptr),
                          "keys are %zu wide but queries are %zu: Q Kᵀ "
                          "needs them equal",
                          k->dims[lead + 2], q->dims[lead + 2]);
    if (v->dims[lead + 1] != k->dims[lead + 1])
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_V, ptr),
                          "v has %zu rows (keys) but k has %zu",
                          v->dims[lead + 1], k->dims[lead + 1]);
    p->batch = lead ? q->dims[0] : 0;
    p->heads = q->dims[lead];
    p->kv_heads = k->dims[lead] == p->heads ? 0 : k->dims[lead];
    const schema_value *num_kv = &fields->value[API_NUM_KV_HEADS];
    if (num_kv->present && (size_t)num_kv->number != k->dims[lead])
        return codec_fail(err, ERR_INVALID_NUM_KV_HEADS,
                          pointer_of(API_NUM_KV_HEADS, ptr),
                          "num_kv_heads is %zu but k has %zu heads",
                          (size_t)num_kv->number, k->dims[lead]);
    p->n = q->dims[lead + 1];
    p->d_k = q->dims[lead + 2];
    p->m = k->dims[lead + 1];
    p->d_v = v->dims[lead + 2];
    const schema_value *num_heads = &fields->value[API_NUM_HEADS];
    if (num_heads->present && (size_t)num_heads->number != p->heads)
        return codec_fail(err, ERR_INVALID_NUM_HEADS,
                          pointer_of(API_NUM_HEADS, ptr),
                          "num_heads is %zu but q has %zu heads",
                          (size_t)num_heads->number, p->heads);
    if (p->heads > limits->max_heads)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, pointer_of(API_Q, ptr),
                          "at most %zu heads (--max-heads)", limits->max_heads);
    size_t sequences = p->batch ? p->batch : 1;
    /* products bounded by the parser's element budget */
    if (!check_size(API_Q, sequences * p->n, p->heads * p->d_k, limits, err) ||
        !check_size(API_K, sequences * p->m, attn_kv_heads(p) * p->d_k, limits,
                    err) ||
        !check_size(API_V, sequences * p->m, attn_kv_heads(p) * p->d_v, limits,
                    err) ||
        !take_numbers(fields, API_Q, p->dtype, &req->q, err) ||
        !take_numbers(fields, API_K, p->dtype, &req->k, err) ||
        !take_numbers(fields, API_V, p->dtype, &req->v, err))
        return false;
    p->q = req->q;
    p->k = req->k;
    p->v = req->v;
    return true;
}

/* ---- a KV cache ---------------------------------------------------------- */

/* past_k (h_kv, m₀, d_k) and past_v (h_kv, m₀, d_v), with a leading B in a
 * batch: keys (already rotated) and values of the m₀ positions before this
 * request's tokens.  They come before the new keys: m grows by m₀. */
static bool take_cache(api_fields *fields, const request_limits *limits,
                       api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    static const api_field pair[2] = {API_PAST_K, API_PAST_V};
    if (!present(fields, API_PAST_K) && !present(fields, API_PAST_V))
        return true;
    size_t lead = p->batch ? 1 : 0, h_kv = attn_kv_heads(p);
    for (int i = 0; i < 2; i++) {
        const schema_tensor *t = &fields->tensor[pair[i]];
        const char *name = api_schema[pair[i]].name;
        static const char *const letters[2] = {"d_k", "d_v"};
        const char *letter = letters[i];
        size_t width = i ? p->d_v : p->d_k;
        pointer_of(pair[i], ptr);
        if (!t->present)
            return codec_fail(err, ERR_MISSING_FIELD, ptr,
                              "past_k and past_v go together; %s is missing",
                              name);
        if ((size_t)t->rank != 3 + lead)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "%s has %d dimensions; %s", name, t->rank,
                              lead ? "a batch takes (B, h_kv, m₀, width), one "
                                     "cache per sequence"
                                   : "one sequence takes (h_kv, m₀, width)");
        if (lead && t->dims[0] != p->batch)
            return codec_fail(
                err, ERR_SHAPE_MISMATCH, ptr,
                "%s holds %zu sequences but the request holds %zu", name,
                t->dims[0], p->batch);
        if (t->dims[lead] != h_kv)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "%s has %zu heads but the keys and values have "
                              "%zu (num_kv_heads)",
                              name, t->dims[lead], h_kv);
        if (t->dims[lead + 2] != width)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "%s is %zu wide but the new %s are %zu (%s)",
                              name, t->dims[lead + 2], i ? "values" : "keys",
                              width, letter);
    }
    const schema_tensor *past_k = &fields->tensor[API_PAST_K];
    const schema_tensor *past_v = &fields->tensor[API_PAST_V];
    size_t past = past_k->dims[lead + 1];
    if (past_v->dims[lead + 1] != past)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(API_PAST_V, ptr),
                          "past_v holds %zu positions but past_k %zu",
                          past_v->dims[lead + 1], past);
    size_t sequences = p->batch ? p->batch : 1;
    /* the cache counts towards the keys' limit; products bounded by the
     * parser's element budget */
    if (!check_size(API_PAST_K, sequences * (p->m + past), h_kv * p->d_k,
                    limits, err) ||
        !take_numbers(fields, API_PAST_K, p->dtype, &req->past_k, err) ||
        !take_numbers(fields, API_PAST_V, p->dtype, &req->past_v, err))
        return false;
    p->past = past;
    p->m += past;
    p->past_k = req->past_k;
    p->past_v = req->past_v;
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
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE,
                          pointer_of(API_SCALE, ptr),
                          "%g does not fit in float32", v->number);
    }
    req->problem.scale = v->number;
    req->scale = v->number;
    return true;
}

/* mask: (n, m) for every sequence and head; (h, n, m), one per head, for
 * one sequence; in a batch (B, n, m), one per sequence, or (B, h, n, m), one
 * per sequence and head.  key_padding: (m), or (B, m) in a batch. */
static bool take_masks(api_fields *fields, api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    schema_tensor *mask = &fields->tensor[API_MASK];
    if (mask->present) {
        pointer_of(API_MASK, ptr);
        size_t lead = p->batch && mask->rank >= 3 ? 1 : 0;
        size_t heads = mask->rank - lead == 3 ? 1 : 0;
        if (mask->rank == 4 && !p->batch)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "mask has 4 dimensions, (B, h, n, m), but x is "
                              "one sequence: send (n, m) or (h, n, m)");
        if (lead && mask->dims[0] != p->batch)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "mask holds %zu masks but x holds %zu sequences",
                              mask->dims[0], p->batch);
        if (heads && mask->dims[lead] != p->heads)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "mask holds %zu masks per sequence but there "
                              "are %zu heads",
                              mask->dims[lead], p->heads);
        size_t rows = mask->dims[lead + heads];
        size_t cols = mask->dims[lead + heads + 1];
        if (rows != p->n || cols != p->m)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "mask is %zu×%zu but the scores are %zu×%zu "
                              "(queries × keys)",
                              rows, cols, p->n, p->m);
        p->mask_per_sequence = lead;
        p->mask_per_head = heads;
        if (mask->is_bool) {
            req->allow = mask->data;
            mask->data = NULL;
        } else if (!take_numbers(fields, API_MASK, p->dtype, &req->bias, err)) {
            return false;
        }
    }
    schema_tensor *padding = &fields->tensor[API_KEY_PADDING];
    if (padding->present) {
        pointer_of(API_KEY_PADDING, ptr);
        int rank = p->batch ? 2 : 1;
        if (padding->rank != rank)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "key_padding has %d dimensions; %s",
                              padding->rank,
                              p->batch ? "a batch takes (B, m), one row of "
                                         "keys per sequence"
                                       : "one sequence takes (m)");
        if (p->batch && padding->dims[0] != p->batch)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "key_padding has %zu rows for %zu sequences",
                              padding->dims[0], p->batch);
        if (padding->dims[rank - 1] != p->m)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "key_padding has %zu entries for %zu keys",
                              padding->dims[rank - 1], p->m);
        req->key_padding = padding->data;
        padding->data = NULL;
    }
    p->allow = req->allow;
    p->bias = req->bias;
    p->key_padding = req->key_padding;
    return true;
}

/* ---- positions, window, ALiBi -------------------------------------------- */

/* Largest position a request may give: doubles hold every integer up to
 * 2^53 exactly, and distances between two such stay exact too. */
#define VALIDATE_MAX_POSITION 9007199254740992.0

/* Field f's `count` positions: whole numbers from 0 to
 * VALIDATE_MAX_POSITION, and from m₀ on after a cache of m₀ (equal ones are
 * allowed: those tokens share a rotation, and causal lets each see the
 * other). */
static bool take_positions(api_fields *fields, api_field f, size_t count,
                           size_t past, int64_t **out, codec_error *err)
{
    const schema_tensor *t = &fields->tensor[f];
    char ptr[CODEC_POINTER_MAX];
    if (!t->present)
        return true;
    if (t->dims[0] != count)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(f, ptr),
                          "%s has %zu entries for %zu tokens",
                          api_schema[f].name, t->dims[0], count);
    *out = malloc(count * sizeof **out + 1);
    if (!*out)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        double position = schema_number(t, i);
        if (!(position >= 0) || position != floor(position) ||
            position > VALIDATE_MAX_POSITION) {
            codec_pointer(ptr, api_schema[f].name, &i, 1);
            return codec_fail(err, ERR_INVALID_POSITIONS, ptr,
                              "positions are whole numbers from 0 to 2^53, "
                              "got %g",
                              position);
        }
        (*out)[i] = (int64_t)position;
        if (past && (*out)[i] < (int64_t)past) {
            codec_pointer(ptr, api_schema[f].name, &i, 1);
            return codec_fail(err, ERR_INVALID_POSITIONS, ptr,
                              "position %g comes before the new tokens: the "
                              "cache (past_k, past_v) holds positions 0 to "
                              "%zu, so new ones start at %zu",
                              position, past - 1, past);
        }
    }
    return true;
}

/* ALiBi's slopes for h heads (Press et al. 2022 and its reference code):
 * for h a power of two, 2^(−8k/h) for k = 1..h; otherwise those of the
 * largest power of two p below h, then every other slope of 2p. */
static void alibi_paper_slopes(size_t h, double *out)
{
    size_t p = 1;
    while (p * 2 <= h)
        p *= 2;
    for (size_t k = 0; k < p; k++)
        out[k] = pow(2.0, -8.0 * (double)(k + 1) / (double)p);
    for (size_t k = 0; p + k < h; k++) /* slopes of 2p: 1st, 3rd, 5th, ... */
        out[p + k] = pow(2.0, -8.0 * (double)(2 * k + 1) / (double)(2 * p));
}

static bool take_positional(api_fields *fields, api_request *req,
                            codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    if (present(fields, API_CONTEXT_POSITIONS) && !p->context && !p->k)
        return codec_fail(err, ERR_MISSING_FIELD, pointer_of(API_CONTEXT, ptr),
                          "context_positions place the rows of context, "
                          "which is absent (self-attention's keys are at "
                          "positions)");
    if (!take_positions(fields, API_POSITIONS, p->n, p->past, &req->positions,
                        err) ||
        !take_positions(fields, API_CONTEXT_POSITIONS, attn_new_keys(p),
                        p->past, &req->context_positions, err))
        return false;
    p->positions = req->positions;
    p->context_positions = req->context_positions;
    const schema_value *window = &fields->value[API_WINDOW];
    /* a window wider than any distance between positions hides nothing
     * more: it is kept at 2^53 + 1, which the core's int64_t arithmetic
     * holds */
    p->window = !window->present ? 0
                : window->number > VALIDATE_MAX_POSITION
                    ? (size_t)VALIDATE_MAX_POSITION + 1
                    : (size_t)window->number;

    bool paper =
        fields->value[API_ALIBI].present && fields->value[API_ALIBI].boolean;
    const schema_tensor *slopes = &fields->tensor[API_ALIBI_SLOPES];
    if (paper && slopes->present)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          pointer_of(API_ALIBI_SLOPES, ptr),
                          "alibi asks for the paper's slopes and "
                          "alibi_slopes gives others; send one of them");
    if (!paper && !slopes->present)
        return true;
    if (slopes->present && slopes->dims[0] != p->heads)
        return codec_fail(err, ERR_SHAPE_MISMATCH,
                          pointer_of(API_ALIBI_SLOPES, ptr),
                          "alibi_slopes has %zu slopes for %zu heads",
                          slopes->dims[0], p->heads);
    req->alibi_slopes = malloc(p->heads * sizeof *req->alibi_slopes + 1);
    if (!req->alibi_slopes)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    if (paper)
        alibi_paper_slopes(p->heads, req->alibi_slopes);
    else
        for (size_t hd = 0; hd < p->heads; hd++)
            req->alibi_slopes[hd] = schema_number(slopes, hd);
    p->alibi_slopes = req->alibi_slopes;
    return true;
}

/* rope: true or {base, dims, style}; positional_encoding. */
static bool take_rotations(const api_fields *fields, api_request *req,
                           codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    const schema_value *encoding = &fields->value[API_POSITIONAL_ENCODING];
    p->sinusoidal = encoding->present && encoding->choice == 1;
    if (p->sinusoidal && p->q)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          pointer_of(API_POSITIONAL_ENCODING, ptr),
                          "the sinusoidal encoding is added to x, and q, k "
                          "and v come without x");
    const schema_value *rope = &fields->value[API_ROPE];
    if (!rope->present || !rope->boolean)
        return true;
    const schema_member *member = rope->members;
    p->rope_base =
        member[API_ROPE_BASE].present ? member[API_ROPE_BASE].number : 10000;
    p->rope_interleaved =
        member[API_ROPE_STYLE].present && member[API_ROPE_STYLE].choice == 1;
    double dims = member[API_ROPE_DIMS].present ? member[API_ROPE_DIMS].number
                                                : (double)p->d_k;
    if (member[API_ROPE_DIMS].present) {
        codec_pointer(ptr, "rope", NULL, 0);
        codec_pointer_append(ptr, sizeof ptr, "dims");
    } else {
        pointer_of(API_ROPE, ptr);
    }
    if (dims > (double)p->d_k)
        return codec_fail(err, ERR_INVALID_ROPE, ptr,
                          "rope.dims is %g but q and k heads are %zu wide "
                          "(d_k); rotate at most d_k components",
                          dims, p->d_k);
    if (fmod(dims, 2) != 0)
        return codec_fail(err, ERR_INVALID_ROPE, ptr,
                          member[API_ROPE_DIMS].present
                              ? "rope.dims must be even (components turn in "
                                "pairs), got %g"
                              : "rope turns components in pairs and d_k is "
                                "%g, which is odd: give rope.dims (even, at "
                                "most d_k)",
                          dims);
    p->rope_dims = (size_t)dims;
    return true;
}

/* "heads": distinct query heads, each a whole number below h. */
static bool take_heads(api_fields *fields, api_request *req, codec_error *err)
{
    const schema_tensor *t = &fields->tensor[API_HEADS];
    size_t h = req->problem.heads;
    char ptr[CODEC_POINTER_MAX];
    if (!t->present)
        return true;
    if (t->dims[0] == 0)
        return codec_fail(err, ERR_INVALID_HEADS, pointer_of(API_HEADS, ptr),
                          "heads names no head: leave it out for all %zu", h);
    req->heads = malloc(t->dims[0] * sizeof *req->heads);
    if (!req->heads)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (size_t i = 0; i < t->dims[0]; i++) {
        double head = schema_number(t, i);
        codec_pointer(ptr, api_schema[API_HEADS].name, &i, 1);
        if (!(head >= 0) || head != floor(head) || head >= (double)h)
            return codec_fail(err, ERR_INVALID_HEADS, ptr,
                              "heads are query heads from 0 to %zu (h = %zu), "
                              "got %g",
                              h - 1, h, head);
        for (size_t j = 0; j < i; j++)
            if (schema_number(t, j) == head)
                return codec_fail(err, ERR_INVALID_HEADS, ptr,
                                  "head %g is named twice (also at %zu)", head,
                                  j);
        req->heads[i] = (size_t)head;
        req->head_count = i + 1;
    }
    return true;
}

/* Every stage asked for exists for this request. */
static bool check_stages(const api_request *req, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        if ((req->want & ATTN_WANT(s)) &&
            !attn_stage_applies(&req->problem, (attn_stage)s))
            return codec_fail(
                err, ERR_INVALID_RETURN, pointer_of(API_RETURN, ptr),
                "%s is computed only with %s", attn_stage_name((attn_stage)s),
                s == ATTN_X_PE ? "positional_encoding "
                                 "\"sinusoidal\" and an x"
                               : "rope");
    return true;
}

/* Labels of field f must number `count` (the rows they label), in one
 * list, or in a batch in one list per sequence. */
static bool take_labels(api_fields *fields, api_field f, size_t count,
                        size_t batch, api_labels *out, codec_error *err)
{
    api_labels *labels = &fields->value[f].labels;
    char ptr[CODEC_POINTER_MAX];
    const char *name = api_schema[f].name;
    if (!fields->value[f].present)
        return true;
    if (labels->lists && labels->lists != batch)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(f, ptr),
                          batch ? "%s holds %zu lists of labels but the "
                                  "request holds %zu sequences"
                                : "%s holds %zu lists of labels, one per "
                                  "sequence, but the request is one sequence",
                          name, labels->lists, batch);
    size_t per_list =
        labels->lists ? labels->count / labels->lists : labels->count;
    if (per_list != count)
        return codec_fail(err, ERR_SHAPE_MISMATCH, pointer_of(f, ptr),
                          "%s has %zu labels for %zu tokens", name, per_list,
                          count);
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

    if (!given_qkv(fields) && !present(fields, API_X)) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_MISSING_FIELD, pointer_of(API_X, ptr),
                          "x is required (or q, k and v)");
    }
    bool inputs = given_qkv(fields)
                      ? take_given(fields, limits, req, err)
                      : take_inputs(fields, limits, req, err) &&
                            take_weights(fields, limits, req, err);
    if (!inputs || !take_cache(fields, limits, req, err) ||
        !take_scale(fields, req, err) || !take_masks(fields, req, err) ||
        !take_positional(fields, req, err) ||
        !take_rotations(fields, req, err) || !check_stages(req, err) ||
        !take_heads(fields, req, err) ||
        !take_labels(fields, API_TOKENS, p->n, p->batch, &req->tokens, err))
        return false;
    if (fields->value[API_CONTEXT_TOKENS].present && !p->context && !p->k) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_MISSING_FIELD, pointer_of(API_CONTEXT, ptr),
                          "context_tokens label the rows of context, which "
                          "is absent (self-attention uses tokens)");
    }
    /* the memory this needs is checked by the endpoint, which knows how many
     * threads will work on it */
    return take_labels(fields, API_CONTEXT_TOKENS, attn_new_keys(p), p->batch,
                       &req->context_tokens, err);
}
