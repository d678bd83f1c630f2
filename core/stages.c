/*
 * stages.c - the names of the forward pass's stages, as the API writes them.
 * A file of its own, free of OpenBLAS, so that a tool built for the build
 * machine (tools/gen_web_fields.c, which prints the page's fields from the
 * schema) links it without the core's libraries: a cross build has them
 * only for the target.
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
