/*
 * positions.h - the rules of a request's positions and what uses them
 * (ALiBi, RoPE, the sinusoidal encoding), once the shapes are known.
 */
#ifndef SERVER_REQUEST_POSITIONS_H
#define SERVER_REQUEST_POSITIONS_H

#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* positions and context_positions (one per query and per new key, none
 * before the cache), then ALiBi's slopes: req's positions,
 * context_positions and alibi_slopes, with the problem's views of them. */
bool positions_take(api_fields *fields, api_request *req, codec_error *err);

/* rope (true or {base, dims, style}, dims even and at most d_k) into the
 * problem; the sinusoidal encoding only with an x. */
bool positions_rotations(const api_fields *fields, api_request *req,
                         codec_error *err);

#endif
