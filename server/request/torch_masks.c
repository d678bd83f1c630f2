/*
 * torch_masks.c - PyTorch's names for the masks, with PyTorch's senses.
 *
 * A boolean mask means "may attend" in scaled_dot_product_attention and in
 * our `mask`, and "masked out" in nn.MultiheadAttention's attn_mask.  A
 * request that projects x mirrors the module, one that gives q, k and v
 * mirrors the function, so attn_mask takes the sense of the one it mirrors
 * and is then our mask (a float mask is added in both).  key_padding_mask
 * is the module's name of our key_padding (true = padding) and is_causal
 * its name of causal.
 */
#include "server/request/torch_masks.h"

#include <stdint.h>

/* ours and PyTorch's name for one thing: one of them only */
static bool one_name(const api_fields *fields, api_field ours, api_field theirs,
                     bool *torch, codec_error *err)
{
    bool have_ours = api_schema[ours].kind == SCHEMA_TENSOR
                         ? fields->tensor[ours].present
                         : fields->value[ours].present;
    *torch = api_schema[theirs].kind == SCHEMA_TENSOR
                 ? fields->tensor[theirs].present
                 : fields->value[theirs].present;
    if (have_ours && *torch) {
        char ptr[CODEC_POINTER_MAX];
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(theirs, ptr),
                          "%s is PyTorch's name of %s; send one of them",
                          api_schema[theirs].name, api_schema[ours].name);
    }
    return true;
}

/* attn_mask as nn.MultiheadAttention means it: booleans inverted, and in a
 * batch (N·h, L, S) read as the (N, h, L, S) it is in memory. */
static bool as_module_means(schema_tensor *t, const attn_problem *p,
                            codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    if (t->is_bool) {
        uint8_t *allow = t->data;
        size_t count = schema_element_count(t);
        for (size_t i = 0; i < count; i++)
            allow[i] = !allow[i];
    }
    if (p->batch && t->rank == 3) {
        if (t->dims[0] != p->batch * p->heads)
            return codec_fail(err, ERR_SHAPE_MISMATCH,
                              schema_pointer(API_ATTN_MASK, ptr),
                              "attn_mask holds %zu masks; in a batch its 3 "
                              "dimensions are (N·num_heads, L, S), %zu × %zu",
                              t->dims[0], p->batch, p->heads);
        t->rank = 4;
        t->dims[3] = t->dims[2];
        t->dims[2] = t->dims[1];
        t->dims[1] = p->heads;
        t->dims[0] = p->batch;
    }
    return true;
}

bool torch_masks_pick(api_fields *fields, bool projects, attn_problem *p,
                      api_field *mask, api_field *padding, codec_error *err)
{
    bool torch;
    *mask = API_MASK;
    *padding = API_KEY_PADDING;
    if (!one_name(fields, API_MASK, API_ATTN_MASK, &torch, err))
        return false;
    if (torch) {
        *mask = API_ATTN_MASK;
        schema_tensor *t = &fields->tensor[API_ATTN_MASK];
        if (projects && !as_module_means(t, p, err))
            return false;
    }
    if (!one_name(fields, API_KEY_PADDING, API_KEY_PADDING_MASK, &torch, err))
        return false;
    if (torch)
        *padding = API_KEY_PADDING_MASK;
    if (!one_name(fields, API_CAUSAL, API_IS_CAUSAL, &torch, err))
        return false;
    if (torch)
        p->causal = fields->value[API_IS_CAUSAL].boolean;
    return true;
}
