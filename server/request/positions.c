/*
 * positions.c - the rules of where tokens sit: positions and
 * context_positions (after a KV cache, none before it), ALiBi's slopes
 * (the paper's, or one per head), RoPE's dimensions against d_k, and the
 * sinusoidal encoding, which needs an x to add to.
 */
#include "server/request/positions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Field f's `count` positions: whole numbers from 0 to
 * SCHEMA_MAX_POSITION, and from m₀ on after a cache of m₀ (equal ones are
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
        return codec_fail(err, ERR_SHAPE_MISMATCH, schema_pointer(f, ptr),
                          "%s has %zu entries for %zu tokens",
                          api_schema[f].name, t->dims[0], count);
    *out = malloc(count * sizeof **out + 1);
    if (!*out)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        double position = schema_number(t, i);
        if (!(position >= 0) || position != floor(position) ||
            position > SCHEMA_MAX_POSITION) {
            /* quoted as sent: 2^53 + 1 arrives as 2^53 */
            char sent[NUMBER_WORDS_MAX];
            codec_pointer(ptr, api_schema[f].name, &i, 1);
            schema_quote_number(fields, ptr, position, sent);
            return codec_fail(err, ERR_INVALID_POSITIONS, ptr,
                              "positions are whole numbers from 0 to 2^53 - "
                              "1, each exact as a double; got %s",
                              sent);
        }
        (*out)[i] = (int64_t)position;
        if (past && (*out)[i] < (int64_t)past) {
            codec_pointer(ptr, api_schema[f].name, &i, 1);
            return codec_fail(err, ERR_INVALID_POSITIONS, ptr,
                              "position %.0f comes before the new tokens: the "
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

bool positions_take(api_fields *fields, api_request *req, codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    if (fields->tensor[API_CONTEXT_POSITIONS].present && !p->context && !p->k)
        return codec_fail(err, ERR_MISSING_FIELD,
                          schema_pointer(API_CONTEXT, ptr),
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

    bool paper =
        fields->value[API_ALIBI].present && fields->value[API_ALIBI].boolean;
    const schema_tensor *slopes = &fields->tensor[API_ALIBI_SLOPES];
    if (paper && slopes->present)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(API_ALIBI_SLOPES, ptr),
                          "alibi asks for the paper's slopes and "
                          "alibi_slopes gives others; send one of them");
    if (!paper && !slopes->present)
        return true;
    if (slopes->present && slopes->dims[0] != p->heads)
        return codec_fail(err, ERR_SHAPE_MISMATCH,
                          schema_pointer(API_ALIBI_SLOPES, ptr),
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

bool positions_rotations(const api_fields *fields, api_request *req,
                         codec_error *err)
{
    attn_problem *p = &req->problem;
    char ptr[CODEC_POINTER_MAX];
    if (p->sinusoidal && p->q)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(API_POSITIONAL_ENCODING, ptr),
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
        schema_pointer(API_ROPE, ptr);
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
