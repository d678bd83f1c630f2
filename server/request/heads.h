/*
 * heads.h - the query heads a reply holds ("heads": a list of indices):
 * every stage with a head axis is returned for those heads only, in the
 * order given, so plane j of q, scores, weights, head_outputs, ... belongs
 * to query head heads[j], and plane j of k, v, k_rope, k_cache, v_cache to
 * that head's key/value head (⌊heads[j] · h_kv / h⌋).  The core computes
 * every head (the output needs them all); the reply is cut down after.
 */
#ifndef SERVER_REQUEST_HEADS_H
#define SERVER_REQUEST_HEADS_H

#include "core/attention.h"
#include "server/request/request.h"

#include <stdbool.h>
#include <stddef.h>

/* The shape stage s is returned in: attn_stage_shape()'s, with the head
 * axis holding req->head_count heads when the request names some, without
 * it for averaged weights, and (n, B, width) for a sequence-first batch's
 * stages of that kind (batch_first.h). */
int api_stage_shape(const api_request *req, attn_stage s,
                    size_t dims[ATTN_MAX_RANK]);

/* The stages of result as the reply holds them: every per-head stage
 * replaced by its planes of the request's heads (nothing to do when it
 * names none), a sequence-first batch's x_pe, concat and output turned
 * (n, B, width) in place, then averaged weights by their mean over the
 * heads; false when out of memory. */
bool api_select_heads(const api_request *req, attn_result *result);

#endif
