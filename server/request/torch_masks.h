/*
 * torch_masks.h - PyTorch's mask fields (attn_mask, key_padding_mask,
 * is_causal) in the sense of the function a request mirrors, read into the
 * slots the mask rules read.
 */
#ifndef SERVER_REQUEST_TORCH_MASKS_H
#define SERVER_REQUEST_TORCH_MASKS_H

#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* Which fields hold the request's mask and key padding (*mask, *padding:
 * API_MASK and API_KEY_PADDING, or PyTorch's attn_mask and
 * key_padding_mask), each in our sense once this returns: a boolean
 * attn_mask of a request that projects x (nn.MultiheadAttention's, true =
 * masked out) is inverted in place, and its (N·h, L, S) form in a batch
 * read as (N, h, L, S).  is_causal sets the problem's causal.  Ours and
 * PyTorch's name for one thing together: conflicting_fields. */
bool torch_masks_pick(api_fields *fields, bool projects, attn_problem *p,
                      api_field *mask, api_field *padding, codec_error *err);

#endif
