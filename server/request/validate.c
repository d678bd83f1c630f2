/*
 * validate.c - the cross-field rules of a request, in the order a person
 * would fix them: x and context (or q, k and v given directly), the weights
 * (weights.c), a KV cache, the scale, the masks, positions and what uses
 * them (positions.c), the stages, the heads, the labels.  Each field's own
 * value was checked by its schema row (decode.c) and lands in the request
 * as the row's binding says (bind.c); what is here relates fields.
 */
#include "server/request/validate.h"

#include "server/base/parse_budget.h"
#include "server/request/batch_first.h"
#include "server/request/bind.h"
#include "server/request/masks.h"
#include "server/request/module_options.h"
#include "server/request/positions.h"
#include "server/request/sizes.h"
#include "server/request/weights.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- x and context ----------------------------------------------------- */

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
    if (!validate_size(API_X, sequences * p->n, p->d, limits, err) ||
        !bind_tensor(fields, API_X, req, err))
        return false;

    const schema_tensor *ctx = &fields->tensor[API_CONTEXT];
    if (!ctx->present)
        return true;
    char ptr[CODEC_POINTER_MAX];
    if (ctx->rank != x->rank)
        return codec_fail(err, ERR_SHAPE_MISMATCH,
                          schema_pointer(API_CONTEXT, ptr),
                          "context has %d dimensions but x has %d: one "
                          "sequence (m, d_c) per sequence of x",
                          ctx->rank, x->rank);
    if (lead && ctx->dims[0] != p->batch)
        return codec_fail(err, ERR_SHAPE_MISMATCH,
                          schema_pointer(API_CONTEXT, ptr),
                          "context holds %zu sequences but x holds %zu",
                          ctx->dims[0], p->batch);
    p->m = ctx->dims[lead];
    p->d_c = ctx->dims[lead + 1];
    return validate_size(API_CONTEXT, sequences * p->m, p->d_c, limits, err) &&
           bind_tensor(fields, API_CONTEXT, req, err);
}

/* ---- Q, K and V given directly ------------------------------------------ */

static bool present(const api_fields *fields, api_field f)
{
    return fields->tensor[f].present;
}

static bool given_qkv(const api_fields *fields)
{
    return present(fields, API_Q) || present(fields, API_K) ||
           present(fields, API_V);
}

/* q, k and v all three, and none of the fields that project x (nor the
 * weights' layout) beside them. */
static bool given_alone(api_fields *fields, const api_field qkv[3],
                        codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    for (int f = 0; f < API_FIELD_COUNT; f++)
        if ((api_schema[f].groups & SCHEMA_PROJECTS) &&
            present(fields, (api_field)f))
            return codec_fail(err, ERR_CONFLICTING_FIELDS,
                              schema_pointer((api_field)f, ptr),
                              "%s comes with q, k and v: send q, k and v "
                              "alone (as scaled_dot_product_attention), or x "
                              "and the weights",
                              api_schema[f].name);
    if (fields->value[API_LAYOUT].present)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(API_LAYOUT, ptr),
                          "layout says how weights are laid out, and q, k "
                          "and v come without weights");
    for (int i = 0; i < 3; i++)
        if (!present(fields, qkv[i]))
            return codec_fail(err, ERR_MISSING_FIELD,
                              schema_pointer(qkv[i], ptr),
                              "q, k and v go together; %s is missing",
                              api_schema[qkv[i]].name);
    return true;
}

/* q (h, n, d_k), k (h, m, d_k), v (h, m, d_v), each with a leading B in a
 * batch, as scaled_dot_product_attention takes them. */
static bool take_given(api_fields *fields, const request_limits *limits,
                       api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    static const api_field qkv[3] = {API_Q, API_K, API_V};
    if (!given_alone(fields, qkv, err))
        return false;
    const schema_tensor *q = &fields->tensor[API_Q];
    const schema_tensor *k = &fields->tensor[API_K];
    const schema_tensor *v = &fields->tensor[API_V];
    size_t lead = q->rank == 4 ? 1 : 0;
    for (int i = 1; i < 3; i++) {
        const schema_tensor *t = &fields->tensor[qkv[i]];
        const char *name = api_schema[qkv[i]].name;
        schema_pointer(qkv[i], ptr);
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
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(API_K, ptr),
                          "k has %zu heads, which do not divide q's %zu",
                          k->dims[lead], q->dims[lead]);
    if (v->dims[lead] != k->dims[lead])
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(API_V, ptr),
                          "v has %zu heads but k has %zu", v->dims[lead],
                          k->dims[lead]);
    if (k->dims[lead + 2] != q->dims[lead + 2])
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(API_K, ptr),
                          "keys are %zu wide but queries are %zu: Q Kᵀ "
                          "needs them equal",
                          k->dims[lead + 2], q->dims[lead + 2]);
    if (v->dims[lead + 1] != k->dims[lead + 1])
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(API_V, ptr),
                          "v has %zu rows (keys) but k has %zu",
                          v->dims[lead + 1], k->dims[lead + 1]);
    p->batch = lead ? q->dims[0] : 0;
    p->heads = q->dims[lead];
    p->kv_heads = k->dims[lead] == p->heads ? 0 : k->dims[lead];
    const schema_value *num_kv = &fields->value[API_NUM_KV_HEADS];
    if (num_kv->present && (size_t)num_kv->number != k->dims[lead])
        return codec_fail(err, ERR_INVALID_NUM_KV_HEADS,
                          schema_pointer(API_NUM_KV_HEADS, ptr),
                          "num_kv_heads is %zu but k has %zu heads",
                          (size_t)num_kv->number, k->dims[lead]);
    p->n = q->dims[lead + 1];
    p->d_k = q->dims[lead + 2];
    p->m = k->dims[lead + 1];
    p->d_v = v->dims[lead + 2];
    const schema_value *num_heads = &fields->value[API_NUM_HEADS];
    if (num_heads->present && (size_t)num_heads->number != p->heads)
        return codec_fail(err, ERR_INVALID_NUM_HEADS,
                          schema_pointer(API_NUM_HEADS, ptr),
                          "num_heads is %zu but q has %zu heads",
                          (size_t)num_heads->number, p->heads);
    if (p->heads > limits->max_heads)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, schema_pointer(API_Q, ptr),
                          "at most %zu heads (--max-heads)", limits->max_heads);
    size_t sequences = p->batch ? p->batch : 1;
    /* products bounded by the parser's element budget */
    if (!validate_size(API_Q, sequences * p->n, p->heads * p->d_k, limits,
                       err) ||
        !validate_size(API_K, sequences * p->m, attn_kv_heads(p) * p->d_k,
                       limits, err) ||
        !validate_size(API_V, sequences * p->m, attn_kv_heads(p) * p->d_v,
                       limits, err) ||
        !bind_tensor(fields, API_Q, req, err) ||
        !bind_tensor(fields, API_K, req, err) ||
        !bind_tensor(fields, API_V, req, err))
        return false;
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
        schema_pointer(pair[i], ptr);
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
        return codec_fail(err, ERR_SHAPE_MISMATCH,
                          schema_pointer(API_PAST_V, ptr),
                          "past_v holds %zu positions but past_k %zu",
                          past_v->dims[lead + 1], past);
    size_t sequences = p->batch ? p->batch : 1;
    /* the cache counts towards the keys' limit; products bounded by the
     * parser's element budget */
    if (!validate_size(API_PAST_K, sequences * (p->m + past), h_kv * p->d_k,
                       limits, err) ||
        !bind_tensor(fields, API_PAST_K, req, err) ||
        !bind_tensor(fields, API_PAST_V, req, err))
        return false;
    p->past = past;
    p->m += past;
    return true;
}

/* ---- the scale, the heads, the labels ----------------------------------- */

/* The scale in the request's dtype; the reply's effective scale (the
 * problem's 0 divides by √d_k). */
static bool take_scale(api_request *req, codec_error *err)
{
    double scale = req->problem.scale;
    if (scale == 0) {
        req->scale = 1.0 / sqrt((double)req->problem.d_k);
        return true;
    }
    if (req->problem.dtype == TENSOR_FLOAT32 && isinf((float)scale)) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE,
                          schema_pointer(API_SCALE, ptr),
                          "%g does not fit in float32", scale);
    }
    req->scale = scale;
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
        return codec_fail(err, ERR_INVALID_HEADS,
                          schema_pointer(API_HEADS, ptr),
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
        size_t j = schema_earlier_equal(&api_schema[API_HEADS], t, i);
        if (j < i)
            return codec_fail(err, ERR_INVALID_HEADS, ptr,
                              "head %g is named twice (also at %zu)", head, j);
        req->heads[i] = (size_t)head;
        req->head_count = i + 1;
    }
    return true;
}

/* need_weights, nn.MultiheadAttention's: false drops weights from the
 * default stages, as the module returns none; return names the stages
 * itself, so the two do not go together. */
static bool take_need_weights(const api_fields *fields, api_request *req,
                              codec_error *err)
{
    const schema_value *need = &fields->value[API_NEED_WEIGHTS];
    if (!need->present)
        return true;
    if (fields->value[API_RETURN].present) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(API_NEED_WEIGHTS, ptr),
                          "need_weights is nn.MultiheadAttention's choice "
                          "of the stages returned, which return names: send "
                          "one of them");
    }
    if (!need->boolean)
        req->want &= ~ATTN_WANT(ATTN_WEIGHTS);
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
                err, ERR_INVALID_RETURN, schema_pointer(API_RETURN, ptr),
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
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(f, ptr),
                          batch ? "%s holds %zu lists of labels but the "
                                  "request holds %zu sequences"
                                : "%s holds %zu lists of labels, one per "
                                  "sequence, but the request is one sequence",
                          name, labels->lists, batch);
    size_t per_list =
        labels->lists ? labels->count / labels->lists : labels->count;
    if (per_list != count)
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(f, ptr),
                          "%s has %zu labels for %zu tokens", name, per_list,
                          count);
    *out = *labels;
    memset(labels, 0, sizeof *labels);
    return true;
}

/* Every rule, in the order a person fixes them. */
static bool take_all(api_fields *fields, const request_limits *limits,
                     api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    bind_values(fields, req);
    if (!module_options_check(fields, err) || !batch_first_inputs(fields, err))
        return false;

    if (!given_qkv(fields) && !present(fields, API_X)) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_MISSING_FIELD, schema_pointer(API_X, ptr),
                          "x is required (or q, k and v)");
    }
    bool inputs = given_qkv(fields)
                      ? take_given(fields, limits, req, err)
                      : take_inputs(fields, limits, req, err) &&
                            weights_take(fields, limits, req, err);
    if (!inputs || !take_cache(fields, limits, req, err) ||
        !take_scale(req, err) ||
        !masks_take(fields, given_qkv(fields), req, err) ||
        !positions_take(fields, req, err) ||
        !positions_rotations(fields, req, err) ||
        !take_need_weights(fields, req, err) || !check_stages(req, err) ||
        !take_heads(fields, req, err) ||
        !take_labels(fields, API_TOKENS, p->n, p->batch, &req->tokens, err))
        return false;
    if (fields->value[API_CONTEXT_TOKENS].present && !p->context && !p->k) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_MISSING_FIELD,
                          schema_pointer(API_CONTEXT, ptr),
                          "context_tokens label the rows of context, which "
                          "is absent (self-attention uses tokens)");
    }
    /* the memory this needs is checked by the endpoint, which knows how many
     * threads will work on it */
    return take_labels(fields, API_CONTEXT_TOKENS, attn_new_keys(p), p->batch,
                       &req->context_tokens, err);
}

bool validate_request(api_fields *fields, const request_limits *limits,
                      api_request *req, codec_error *err)
{
    if (take_all(fields, limits, req, err))
        return true;
    /* a refused request's arrays go with it: the account (which may parse
     * the body again, jansson after the fast parser) no longer holds them */
    parse_budget_drop(req->parse_held);
    req->parse_held = 0;
    return false;
}
