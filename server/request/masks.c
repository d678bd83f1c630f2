/*
 * masks.c - a request's masks, checked and made what the core takes
 * (masks.h).
 *
 * Shapes: (B, h, n, m) stands for the scores of a batch, (h, n, m) for
 * one sequence's.  A mask the core takes is one (n, m) plane, or one per
 * head (h, n, m), per sequence (B, n, m), or both (B, h, n, m): its
 * layout, the problem's mask_per_sequence and mask_per_head.
 */
#include "server/request/masks.h"

#include "server/base/parse_budget.h"
#include "server/request/bind.h"
#include "server/request/torch_masks.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* bytes more held for req (charged to the parse account); 413 when the
 * account cannot hold them. */
static bool hold(api_request *req, size_t bytes, const char *what,
                 codec_error *err)
{
    if (!parse_budget_hold(bytes))
        return codec_fail(err, ERR_LIMIT_EXCEEDED, NULL,
                          "%s needs %zu bytes more than a body of this size "
                          "may hold while it is read",
                          what, bytes);
    req->parse_held += bytes;
    return true;
}

/* ---- the mask's layout --------------------------------------------------- */

/* Our rule (and nn.MultiheadAttention's once torch_masks.c read it): (n,
 * m), (h, n, m) for one sequence; in a batch (B, n, m) or (B, h, n, m). */
static bool named_layout(const schema_tensor *mask, api_field f,
                         attn_problem *p, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    const char *name = api_schema[f].name;
    schema_pointer(f, ptr);
    size_t lead = p->batch && mask->rank >= 3 ? 1 : 0;
    size_t heads = mask->rank - lead == 3 ? 1 : 0;
    if (mask->rank == 4 && !p->batch)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s has 4 dimensions, (B, h, n, m), but x is "
                          "one sequence: send (n, m) or (h, n, m)",
                          name);
    if (lead && mask->dims[0] != p->batch)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s holds %zu masks but x holds %zu sequences", name,
                          mask->dims[0], p->batch);
    if (heads && mask->dims[lead] != p->heads)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s holds %zu masks per sequence but there "
                          "are %zu heads",
                          name, mask->dims[lead], p->heads);
    size_t rows = mask->dims[lead + heads];
    size_t cols = mask->dims[lead + heads + 1];
    if (rows != p->n || cols != p->m)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s is %zu×%zu but the scores are %zu×%zu "
                          "(queries × keys)",
                          name, rows, cols, p->n, p->m);
    p->mask_per_sequence = lead;
    p->mask_per_head = heads;
    return true;
}

/* Bytes of one element of t as parsed. */
static size_t element_size(const schema_tensor *t)
{
    return t->is_bool ? 1 : t->is_float32 ? sizeof(float) : sizeof(double);
}

/* t, whose dims broadcast to (sequences, heads, n, m) as `from` says
 * (from[k] is that size or 1), copied out to that whole shape. */
static bool broadcast(api_request *req, schema_tensor *t, const size_t from[4],
                      const size_t to[4], codec_error *err)
{
    size_t elem = element_size(t);
    size_t count = to[0] * to[1] * to[2] * to[3]; /* at most the scores' */
    if (!hold(req, count * elem, "attn_mask broadcast to the scores", err))
        return false;
    char *whole = malloc(count * elem + 1);
    if (!whole)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    const char *src = t->data;
    size_t at = 0;
    for (size_t b = 0; b < to[0]; b++)
        for (size_t hd = 0; hd < to[1]; hd++)
            for (size_t i = 0; i < to[2]; i++)
                for (size_t j = 0; j < to[3]; j++, at++) {
                    size_t in = (((from[0] > 1 ? b : 0) * from[1] +
                                  (from[1] > 1 ? hd : 0)) *
                                     from[2] +
                                 (from[2] > 1 ? i : 0)) *
                                    from[3] +
                                (from[3] > 1 ? j : 0);
                    memcpy(whole + at * elem, src + in * elem, elem);
                }
    free(t->data);
    t->data = whole;
    return true;
}

/* scaled_dot_product_attention's rule for attn_mask with q, k and v: the
 * mask's dimensions, counted from the last, are the scores' or 1.  A mask
 * that is whole in its last two (n, m) is taken as it is, one plane per
 * sequence and per head where it has them; else it is copied out. */
static bool broadcast_layout(api_request *req, schema_tensor *t,
                             codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    schema_pointer(API_ATTN_MASK, ptr);
    const size_t scores[4] = {p->batch ? p->batch : 1, p->heads, p->n, p->m};
    int rank = p->batch ? 4 : 3;
    if (t->rank > rank)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "attn_mask has %d dimensions but the scores have "
                          "%d, %s",
                          t->rank, rank,
                          p->batch ? "(N, h, L, S)" : "(h, L, S)");
    size_t from[4] = {1, 1, 1, 1};
    for (int k = 0; k < t->rank; k++)
        from[4 - t->rank + k] = t->dims[k];
    for (int k = 0; k < 4; k++)
        if (from[k] != scores[k] && from[k] != 1)
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "attn_mask does not broadcast to the scores "
                              "(N, h, L, S) = (%zu, %zu, %zu, %zu): its "
                              "dimension of %zu is neither %zu nor 1",
                              scores[0], scores[1], scores[2], scores[3],
                              from[k], scores[k]);
    p->mask_per_sequence = p->batch && from[0] > 1;
    p->mask_per_head = from[1] > 1;
    if (from[2] == scores[2] && from[3] == scores[3])
        return true; /* its planes in order already */
    size_t to[4] = {from[0], from[1], scores[2], scores[3]};
    if (!broadcast(req, t, from, to, err))
        return false;
    t->rank = 4;
    memcpy(t->dims, to, sizeof to);
    return true;
}

/* ---- what the core takes ---------------------------------------------------
 */

/* An additive mask's −∞ hides its key: the core takes it as an allow mask
 * beside the numbers (0 there), so masked_scores says −∞ and a query whose
 * every key is hidden gets zero weights, as with a boolean mask. */
static bool hide_minus_infinity(api_request *req, size_t count,
                                codec_error *err)
{
    bool f32 = req->problem.dtype == TENSOR_FLOAT32;
    float *bias32 = req->bias;
    double *bias64 = req->bias;
    size_t i = 0;
    while (i < count && !isinf(f32 ? bias32[i] : bias64[i]))
        i++;
    if (i == count)
        return true;
    if (!hold(req, count, "the allow mask of the mask's −∞", err))
        return false;
    uint8_t *allow = malloc(count);
    if (!allow)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (i = 0; i < count; i++) {
        bool hidden = isinf(f32 ? bias32[i] : bias64[i]);
        allow[i] = !hidden;
        if (hidden && f32)
            bias32[i] = 0;
        else if (hidden)
            bias64[i] = 0;
    }
    req->allow = allow;
    return true;
}

/* The mask's numbers or booleans into req, its layout checked. */
static bool take_mask(api_fields *fields, api_field f, bool given_qkv,
                      api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    schema_tensor *mask = &fields->tensor[f];
    bool broadcasts = given_qkv && f == API_ATTN_MASK;
    if (!(broadcasts ? broadcast_layout(req, mask, err)
                     : named_layout(mask, f, p, err)))
        return false;
    if (mask->is_bool) {
        req->allow = mask->data;
        mask->data = NULL;
        return true;
    }
    return bind_numbers(fields, f, p->dtype, &req->bias, err) &&
           hide_minus_infinity(req, schema_element_count(mask), err);
}

/* key_padding (or key_padding_mask): (m), or (B, m) in a batch. */
static bool padding_shape(const schema_tensor *padding, api_field f,
                          const attn_problem *p, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    const char *name = api_schema[f].name;
    schema_pointer(f, ptr);
    int rank = p->batch ? 2 : 1;
    if (padding->rank != rank)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s has %d dimensions; %s", name, padding->rank,
                          p->batch ? "a batch takes (B, m), one row of "
                                     "keys per sequence"
                                   : "one sequence takes (m)");
    if (p->batch && padding->dims[0] != p->batch)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s has %zu rows for %zu sequences", name,
                          padding->dims[0], p->batch);
    if (padding->dims[rank - 1] != p->m)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%s has %zu entries for %zu keys", name,
                          padding->dims[rank - 1], p->m);
    return true;
}

/* A float key_padding_mask (B, m) added to every query's score of its key:
 * the mask becomes one per sequence (and per head if it was), its numbers
 * the sum (0 without a mask), −∞ on either side a hidden key. */
static bool add_padding(const schema_tensor *padding, api_request *req,
                        codec_error *err)
{
    attn_problem *p = &req->problem;
    size_t sequences = p->batch ? p->batch : 1;
    size_t heads = p->mask_per_head ? p->heads : 1, plane = p->n * p->m;
    size_t count = sequences * heads * plane; /* at most the scores' */
    bool f32 = p->dtype == TENSOR_FLOAT32;
    size_t elem = tensor_dtype_size(p->dtype);
    if (!hold(req, count * (elem + 1),
              "the float key_padding_mask added to "
              "the scores",
              err))
        return false;
    char *bias = malloc(count * elem + 1);
    uint8_t *allow = malloc(count + 1);
    if (!bias || !allow) {
        free(bias);
        free(allow);
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    }
    size_t at = 0;
    for (size_t b = 0; b < sequences; b++)
        for (size_t hd = 0; hd < heads; hd++)
            for (size_t i = 0; i < p->n; i++)
                for (size_t j = 0; j < p->m; j++, at++) {
                    size_t in =
                        ((p->mask_per_sequence ? b : 0) * heads + hd) * plane +
                        i * p->m + j;
                    double pad = schema_number(padding, b * p->m + j);
                    double was = !req->bias ? 0
                                 : f32      ? ((const float *)req->bias)[in]
                                            : ((const double *)req->bias)[in];
                    bool hidden =
                        pad == -INFINITY || (req->allow && !req->allow[in]);
                    double sum = hidden ? 0 : was + pad;
                    allow[at] = !hidden;
                    if (f32)
                        ((float *)bias)[at] = (float)sum;
                    else
                        ((double *)bias)[at] = sum;
                }
    free(req->bias);
    free(req->allow);
    req->bias = bias;
    req->allow = allow;
    p->mask_per_sequence = p->batch != 0;
    return true;
}

bool masks_take(api_fields *fields, bool given_qkv, api_request *req,
                codec_error *err)
{
    attn_problem *p = &req->problem;
    api_field mask_f, pad_f;
    if (!torch_masks_pick(fields, !given_qkv, p, &mask_f, &pad_f, err))
        return false;
    if (fields->tensor[mask_f].present &&
        !take_mask(fields, mask_f, given_qkv, req, err))
        return false;
    schema_tensor *padding = &fields->tensor[pad_f];
    if (padding->present) {
        if (!padding_shape(padding, pad_f, p, err))
            return false;
        if (!padding->is_bool) {
            if (!add_padding(padding, req, err))
                return false;
        } else {
            req->key_padding = padding->data;
            padding->data = NULL;
        }
    }
    p->allow = req->allow;
    p->bias = req->bias;
    p->key_padding = req->key_padding;
    return true;
}
