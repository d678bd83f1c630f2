/*
 * stages.c - the forward pass's stages: their names, as the API writes them,
 * which of them a problem has, and their shapes.  A file of its own, free of
 * OpenBLAS, so that a tool built for the build machine
 * (tools/gen_web_fields.c, which prints the page's fields and stages) links
 * it without the core's libraries: a cross build has them only for the
 * target.
 */
#include "core/attention.h"

#include <stddef.h>

static const char *const stage_names[ATTN_STAGE_COUNT] = {
    [ATTN_X_PE] = "x_pe",
    [ATTN_Q] = "q",
    [ATTN_K] = "k",
    [ATTN_V] = "v",
    [ATTN_Q_ROPE] = "q_rope",
    [ATTN_K_ROPE] = "k_rope",
    [ATTN_K_CACHE] = "k_cache",
    [ATTN_V_CACHE] = "v_cache",
    [ATTN_SCORES] = "scores",
    [ATTN_SCALED_SCORES] = "scaled_scores",
    [ATTN_MASKED_SCORES] = "masked_scores",
    [ATTN_WEIGHTS] = "weights",
    [ATTN_HEAD_OUTPUTS] = "head_outputs",
    [ATTN_CONCAT] = "concat",
    [ATTN_OUTPUT] = "output",
};

const char *attn_stage_name(attn_stage s)
{
    return (unsigned)s < ATTN_STAGE_COUNT ? stage_names[s] : NULL;
}

bool attn_stage_applies(const attn_problem *p, attn_stage s)
{
    switch (s) {
    case ATTN_X_PE:
        return p->sinusoidal && p->x;
    case ATTN_Q_ROPE:
    case ATTN_K_ROPE:
        return p->rope_dims > 0;
    default:
        return (unsigned)s < ATTN_STAGE_COUNT;
    }
}

/* The shape of stage s of one sequence. */
static int sequence_stage_shape(const attn_problem *p, attn_stage s,
                                size_t dims[3])
{
    size_t h = p->heads, h_kv = attn_kv_heads(p), m_new = attn_new_keys(p);
    switch (s) {
    case ATTN_X_PE:
        dims[0] = p->n, dims[1] = p->d;
        return 2;
    case ATTN_Q:
    case ATTN_Q_ROPE:
        dims[0] = h, dims[1] = p->n, dims[2] = p->d_k;
        return 3;
    case ATTN_K:
    case ATTN_K_ROPE:
        dims[0] = h_kv, dims[1] = m_new, dims[2] = p->d_k;
        return 3;
    case ATTN_V:
        dims[0] = h_kv, dims[1] = m_new, dims[2] = p->d_v;
        return 3;
    case ATTN_K_CACHE:
        dims[0] = h_kv, dims[1] = p->m, dims[2] = p->d_k;
        return 3;
    case ATTN_V_CACHE:
        dims[0] = h_kv, dims[1] = p->m, dims[2] = p->d_v;
        return 3;
    case ATTN_SCORES:
    case ATTN_SCALED_SCORES:
    case ATTN_MASKED_SCORES:
    case ATTN_WEIGHTS:
        dims[0] = h, dims[1] = p->n, dims[2] = p->m;
        return 3;
    case ATTN_HEAD_OUTPUTS:
        dims[0] = h, dims[1] = p->n, dims[2] = p->d_v;
        return 3;
    case ATTN_CONCAT:
        dims[0] = p->n, dims[1] = h * p->d_v;
        return 2;
    case ATTN_OUTPUT:
        dims[0] = p->n, dims[1] = p->w_o ? p->d_out : h * p->d_v;
        return 2;
    default:
        return 0;
    }
}

int attn_stage_shape(const attn_problem *p, attn_stage s,
                     size_t dims[ATTN_MAX_RANK])
{
    if (!p->batch)
        return sequence_stage_shape(p, s, dims);
    dims[0] = p->batch;
    int rank = sequence_stage_shape(p, s, dims + 1);
    return rank ? rank + 1 : 0;
}
