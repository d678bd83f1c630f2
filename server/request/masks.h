/*
 * masks.h - the rules of a request's masks: mask or attn_mask, key_padding
 * or key_padding_mask (torch_masks.c says which field holds each, in our
 * sense), their shapes against the scores', and what the core takes of
 * them: an allow mask, numbers added to the scores, key padding.
 *
 * Besides the shapes each names, an attn_mask given with q, k and v
 * broadcasts as scaled_dot_product_attention's does: every dimension of
 * the scores' (B, h, L, S) (or (h, L, S)), counted from the last, that the
 * mask gives is that size or 1.  A float key_padding_mask is added to its
 * keys' scores, as PyTorch 2 adds it (−∞ hides the key).  Arrays made here
 * that the body did not hold (a broadcast mask, the padding added in, the
 * allow mask of an additive mask's −∞) are charged to the parse account
 * (server/base/parse_budget.h) and recorded in req->parse_held.
 */
#ifndef SERVER_REQUEST_MASKS_H
#define SERVER_REQUEST_MASKS_H

#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* The masks of fields into req and its problem (whose shapes are known);
 * given_qkv: q, k and v came instead of x. */
bool masks_take(api_fields *fields, bool given_qkv, api_request *req,
                codec_error *err);

#endif
