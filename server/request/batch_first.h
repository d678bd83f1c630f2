/*
 * batch_first.h - nn.MultiheadAttention's batch_first: a batch of x and
 * context as (L, N, E), sequence first (the module's default, False), read
 * as the (N, L, E) the core takes, and the stages of the same kind returned
 * as the module returns them.
 *
 * In a batch, "batch_first": false means x (L, N, E) and context (S, N,
 * E_k) come sequence first, and so do the stages with a row per token and
 * no head axis (x_pe, concat, output: (L, N, width)); the per-head stages
 * stay (N, h, L, S), as the module's weights are whatever batch_first
 * says, and so do the masks (key_padding_mask (N, S), attn_mask (N·h, L,
 * S)) and the labels (one list per sequence).  One sequence (x of rank 2)
 * is the same either way, as in the module.
 */
#ifndef SERVER_REQUEST_BATCH_FIRST_H
#define SERVER_REQUEST_BATCH_FIRST_H

#include "core/attention.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>
#include <stddef.h>

/* x and context of a sequence-first batch (batch_first false, x of rank 3)
 * turned (N, L, E) in place, dims included; batch_first with q, k and v
 * (scaled_dot_product_attention has none) is conflicting_fields. */
bool batch_first_inputs(api_fields *fields, codec_error *err);

/* Whether stage s of req is returned sequence first: (L, N, width). */
bool batch_first_swapped(const api_request *req, attn_stage s);

/* The shape of an input of `rows` rows of `width` as the request sent it
 * ((rows, width), or (B, rows, width) or (rows, B, width) in a batch);
 * returns its rank. */
int batch_first_input_shape(const api_request *req, size_t rows, size_t width,
                            size_t dims[3]);

/* The stages batch_first_swapped() names, turned (L, N, width) in place. */
void batch_first_outputs(const api_request *req, attn_result *result);

/* Turns a × b rows of row_bytes each (row (i, j) at i·b + j) into b × a
 * (row (j, i) at j·a + i) in place, by following the permutation's cycles:
 * no memory beyond a few words. */
void batch_first_transpose(void *rows, size_t a, size_t b, size_t row_bytes);

#endif
