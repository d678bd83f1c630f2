/*
 * encode.h - a computed attention result → /v1's JSON response body.
 */
#ifndef SERVER_JSON_ENCODE_H
#define SERVER_JSON_ENCODE_H

#include "core/attention.h"
#include "core/pool.h"
#include "server/base/buf.h"
#include "server/base/buf_chain.h"
#include "server/json/encode_tensor.h"
#include "server/request/request.h"

/* Appends the parameters the computation used, as both protocols' replies
 * echo them: "num_heads":2,"head_dim":4,"value_dim":4,"scale":0.5,
 * "causal":false (members, without braces). */
void encode_parameters(buf *out, const api_request *req);

/* Appends the whole 200 response document to out; large tensors are
 * formatted in pieces on `workers` (may be NULL), each piece a part of the
 * chain.  A cancelled req->problem.stop ends it early, the document
 * incomplete (encode_tensor()): the caller reads the stop after it. */
void encode_response(const api_request *req, const attn_result *result,
                     pool *workers, buf_chain *out);

#endif
