/*
 * weights.c - the core's W_q, W_k, W_v, W_o and biases from whichever
 * fields gave them (the schema's SCHEMA_GIVES bits): our own names in
 * either layout (in×out as the lessons, or out×in with "layout": "torch"),
 * per-head stacks or wide matrices, and PyTorch's state_dict names
 * (in_proj_weight's blocks [W_q; W_k; W_v]).  They leave here in the core's
 * one layout, wide and in×out, their shapes checked against x, context and
 * each other, which also fixes the heads.
 */
#include "server/request/weights.h"

#include "server/request/bind.h"
#include "server/request/sizes.h"

#include <stdlib.h>
#include <string.h>

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
           bind_numbers(src->fields, f, src->dtype, &src->typed[f], err);
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

/* For each weight or bias, the first two fields giving it that were sent
 * (API_FIELD_COUNT: none), found in one pass over the schema for all of
 * them (docs/performance.md, "What a request costs, counted"). */
typedef struct {
    api_field first[SCHEMA_WEIGHT_COUNT], second[SCHEMA_WEIGHT_COUNT];
} givers;

static void givers_find(const api_fields *fields, givers *g)
{
    for (int w = 0; w < SCHEMA_WEIGHT_COUNT; w++)
        g->first[w] = g->second[w] = API_FIELD_COUNT;
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        unsigned gives = api_schema[f].gives;
        if (!gives || !fields->tensor[f].present)
            continue;
        for (int w = 0; w < SCHEMA_WEIGHT_COUNT; w++) {
            if (!(gives & SCHEMA_GIVES(w)))
                continue;
            if (g->first[w] == API_FIELD_COUNT)
                g->first[w] = (api_field)f;
            else if (g->second[w] == API_FIELD_COUNT)
                g->second[w] = (api_field)f;
        }
    }
}

/* The source of weight or bias w: the one field giving it (schema.h) that
 * was sent (two of them: 400 naming both).  A field giving several holds
 * them as blocks [q; k; v], w's the (w mod 4)th.  PyTorch's state_dict
 * names are out×in always; our own names follow "layout". */
static bool pick_source(const givers *g, schema_weight w, bool torch_layout,
                        source *out, codec_error *err)
{
    *out = (source){API_FIELD_COUNT, 0, 1, false};
    api_field first = g->first[w], second = g->second[w];
    if (second != API_FIELD_COUNT) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(second, ptr),
                          "%s and %s give the same projection; send one "
                          "of them",
                          api_schema[first].name, api_schema[second].name);
    }
    if (first == API_FIELD_COUNT)
        return true;
    const schema_field *row = &api_schema[first];
    size_t parts = (size_t)__builtin_popcount(row->gives);
    *out = (source){first, parts > 1 ? (size_t)w % 4 : 0, parts,
                    row->groups & SCHEMA_FOLLOWS_LAYOUT ? torch_layout : true};
    return true;
}

/* The first (ours) and the last (PyTorch's own) field giving w. */
static const char *giver_name(schema_weight w, bool last)
{
    const char *name = NULL;
    for (int f = 0; f < API_FIELD_COUNT; f++)
        if ((api_schema[f].gives & SCHEMA_GIVES(w)) && (last || !name))
            name = api_schema[f].name;
    return name;
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
        return codec_fail(err, ERR_SHAPE_MISMATCH,
                          schema_pointer(from.field, ptr),
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
                                  schema_pointer(given, ptr),
                                  "%s is %zu but %s stacks %zu heads",
                                  num_heads, heads, name, all[i].heads);
            return codec_fail(
                err, ERR_INVALID_NUM_HEADS,
                schema_pointer(all[i].from.field, ptr),
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
                              schema_pointer(given, ptr),
                              "%zu heads do not divide the %zu columns of %s",
                              heads, all[i].width, name);
        return codec_fail(err, ERR_INVALID_NUM_HEADS,
                          schema_pointer(all[i].from.field, ptr),
                          "%s stacks %zu heads, which do not divide the %zu "
                          "columns of %s",
                          api_schema[all[stack_source].from.field].name, heads,
                          all[i].width, name);
    }
    *out = heads;
    return true;
}

/* The refusal of weight w, whose inputs are not the `want` columns of
 * `input` (x or context), at ptr; when its other side would fit, the
 * layout it was most likely written in: PyTorch's nn.Linear.weight is
 * out×in, the lessons' W in×out. */
static bool misfit(const weight *w, const char *input, size_t want,
                   const char *ptr, codec_error *err)
{
    const char *name = api_schema[w->from.field].name;
    size_t other = w->heads ? w->width / w->heads : w->width;
    const char *hint = "";
    if (other == want && w->from.parts == 1)
        hint = !(api_schema[w->from.field].groups & SCHEMA_FOLLOWS_LAYOUT)
                   ? "; its transpose fits: PyTorch's names are out×in, as "
                     "nn.Linear.weight (send an in×out W under our name)"
               : w->from.torch ? "; its transpose fits: is it in×out, as the "
                                 "lessons write W? then leave \"layout\" out"
                               : "; its transpose fits: is it out×in, as "
                                 "PyTorch's nn.Linear.weight? then send "
                                 "\"layout\": \"torch\"";
    return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                      w->from.torch ? "%s has %zu columns but %s has %zu "
                                      "columns: x @ Wᵀ needs them equal%s"
                                    : "%s has %zu rows but %s has %zu "
                                      "columns: x @ W needs them equal%s",
                      name, w->rows, input, want, hint);
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
            return misfit(&all[i], i == 0 || !p->context ? "x" : "context",
                          expect_rows[i], ptr, err);
        schema_pointer(f, ptr);
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
                          schema_pointer(API_NUM_KV_HEADS, ptr),
                          "%zu key/value heads do not divide the %zu query "
                          "heads",
                          h_kv, heads);
    if (all[1].width / h_kv != all[0].width / heads)
        return codec_fail(
            err, ERR_SHAPE_MISMATCH, schema_pointer(all[1].from.field, ptr),
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
    schema_pointer(from.field, ptr);
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

/* PyTorch keeps the head count outside the weights: nn.MultiheadAttention(
 * embed_dim, num_heads) is constructed with it and its state_dict() does not
 * hold it, and an nn.Linear's weight is one wide matrix.  So a request whose
 * weights come in PyTorch's form (one of its names, or "layout": "torch")
 * and are not
 * per-head stacks must say num_heads: the lessons' default of one head
 * would compute another attention from the same numbers, without a word. */
static bool torch_form_has_heads(const api_fields *fields, bool torch_layout,
                                 const source from[3], codec_error *err)
{
    if (fields->value[API_NUM_HEADS].present)
        return true;
    const char *named = schema_torch_name_given(fields);
    for (int i = 0; i < 3; i++)
        if (fields->tensor[from[i].field].rank == 3)
            return true; /* a stack's depth is the head count */
    if (!named && !torch_layout)
        return true;
    char ptr[CODEC_POINTER_MAX];
    schema_pointer(API_NUM_HEADS, ptr);
    if (named)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "num_heads is required with PyTorch's names (%s): "
                          "PyTorch keeps the head count outside the "
                          "state_dict, in nn.MultiheadAttention(embed_dim, "
                          "num_heads), so the weights cannot say it; send "
                          "the module's num_heads",
                          named);
    return codec_fail(err, ERR_MISSING_FIELD, ptr,
                      "num_heads is required with \"layout\": \"torch\" "
                      "and 2-D weights: an nn.Linear weight is one wide "
                      "matrix and PyTorch keeps the head count outside it "
                      "(nn.MultiheadAttention(embed_dim, num_heads)); send "
                      "it, or per-head stacks");
}

/* The fitted W_q, W_k, W_v into the problem, and their biases (each
 * given alone or as its part of in_proj_bias [b_q; b_k; b_v]). */
static bool take_projections(sources *src, const source bias[3],
                             api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    p->w_q = req->w_q;
    p->w_k = req->w_k;
    p->w_v = req->w_v;
    size_t h_kv = attn_kv_heads(p);
    size_t hq = p->heads * p->d_k, hk = h_kv * p->d_k, hv = h_kv * p->d_v;
    size_t total = hq + hk + hv; /* in_proj_bias: [b_q; b_k; b_v] */
    bool ok = bias_take(src, bias[0], p->heads, p->d_k, 0, total,
                        "the queries are", &req->b_q, err) &&
              bias_take(src, bias[1], h_kv, p->d_k, hq, total, "the keys are",
                        &req->b_k, err) &&
              bias_take(src, bias[2], h_kv, p->d_v, hq + hk, total,
                        "the values are", &req->b_v, err);
    p->b_q = req->b_q;
    p->b_k = req->b_k;
    p->b_v = req->b_v;
    return ok;
}

bool weights_take(api_fields *fields, const request_limits *limits,
                  api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    bool torch = fields->value[API_LAYOUT].present &&
                 fields->value[API_LAYOUT].choice != 0;
    void **w_out[3] = {&req->w_q, &req->w_k, &req->w_v};

    sources src = {.fields = fields, .dtype = p->dtype};
    source from[3], bias[4], out_from;
    givers g;
    givers_find(fields, &g);
    bool ok = true;
    for (int i = 0; ok && i < 3; i++) {
        schema_weight which = (schema_weight)(SCHEMA_W_Q + i);
        ok = pick_source(&g, which, torch, &from[i], err);
        if (ok && from[i].field == API_FIELD_COUNT) {
            char ptr[CODEC_POINTER_MAX];
            const char *name = giver_name(which, false);
            codec_pointer(ptr, name, NULL, 0);
            ok = codec_fail(err, ERR_MISSING_FIELD, ptr,
                            "%s is required (or in_proj_weight, or %s)", name,
                            giver_name(which, true));
        }
    }
    ok = ok && pick_source(&g, SCHEMA_W_O, torch, &out_from, err);
    for (int i = 0; ok && i < 4; i++)
        ok = pick_source(&g, (schema_weight)(SCHEMA_B_Q + i), torch, &bias[i],
                         err);
    ok = ok && torch_form_has_heads(fields, torch, from, err);

    const schema_value *num_heads = &fields->value[API_NUM_HEADS];
    const schema_value *num_kv = &fields->value[API_NUM_KV_HEADS];
    size_t heads = num_heads->present ? (size_t)num_heads->number : 0;
    size_t kv_heads = num_kv->present ? (size_t)num_kv->number : 0;
    weight w[3] = {0};
    for (int i = 0; ok && i < 3; i++)
        ok = weight_take(&src, from[i], &w[i], w_out[i], err);
    ok = ok && fit_weights(req, w, heads, kv_heads, limits, err);
    ok = ok && take_projections(&src, bias, req, err);
    if (ok && out_from.field != API_FIELD_COUNT) {
        weight wo;
        ok = weight_take(&src, out_from, &wo, &req->w_o, err);
        char ptr[CODEC_POINTER_MAX];
        schema_pointer(out_from.field, ptr);
        if (ok && (wo.heads || wo.rows != p->heads * p->d_v))
            ok = codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                            "%s takes %zu inputs but the concatenated heads "
                            "are %zu wide (%zu heads × %zu)",
                            api_schema[out_from.field].name, wo.rows,
                            p->heads * p->d_v, p->heads, p->d_v);
        if (ok) {
            p->d_out = wo.width;
            p->w_o = req->w_o;
            ok = validate_size(out_from.field, 0, p->d_out, limits, err) &&
                 bias_take(&src, bias[3], 1, p->d_out, 0, 0, "the output is",
                           &req->b_o, err);
            p->b_o = req->b_o;
        }
    } else if (ok && bias[3].field != API_FIELD_COUNT) {
        char ptr[CODEC_POINTER_MAX];
        ok = codec_fail(err, ERR_MISSING_FIELD, schema_pointer(API_W_O, ptr),
                        "%s is added after w_o, which is absent",
                        api_schema[bias[3].field].name);
    }
    sources_free(&src);
    return ok;
}
