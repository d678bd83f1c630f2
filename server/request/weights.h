/*
 * weights.h - the weights and biases of a request that projects x (and
 * context): from our own names in either layout or PyTorch's, into the
 * core's one wide in×out layout.
 */
#ifndef SERVER_REQUEST_WEIGHTS_H
#define SERVER_REQUEST_WEIGHTS_H

#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* Sets req's w_q, w_k, w_v (required), w_o, biases and the problem's
 * heads, kv_heads, d_k, d_v, d_out, after x and context are in req (taking
 * the fields' buffers); refusals name the field to blame. */
bool weights_take(api_fields *fields, const request_limits *limits,
                  api_request *req, codec_error *err);

#endif
