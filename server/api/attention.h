/*
 * attention.h - what the computing endpoints share: a decoded request
 * through the core to a reply (POST /v1/attention's api_attention() and
 * its fast lane are declared with every endpoint, in endpoint.h).
 */
#ifndef SERVER_API_ATTENTION_H
#define SERVER_API_ATTENTION_H

#include "core/pool.h"
#include "server/api/endpoint.h"
#include "server/base/buf_chain.h"
#include "server/base/reply.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"

#include <stdbool.h>
#include <stddef.h>

/* How a computed result becomes the 200 reply: /v1's JSON document, or
 * another protocol's (the Open Inference Protocol, oip.c). */
typedef struct {
    /* appends the body to out (the result is the caller's) */
    void (*encode)(const api_request *req, const attn_result *result,
                   pool *workers, buf_chain *out, void *ctx);
    /* may be NULL; called once the 200 reply holds the body, to set what
     * the protocol says besides it (content type, headers) */
    void (*finish)(reply *out, void *ctx);
    void *ctx;
} api_encoder;

/* api_attention() past decoding, for the job's request: reserves,
 * computes and has enc write the reply (a 200 reply holds its bytes, as
 * api_attention() says).  Takes req's buffers (req is left empty). */
void api_attention_decoded(const api_job *job, api_request *req,
                           const api_encoder *enc, reply *out);

/* The work request req asks for, in floating-point operations: its
 * products and softmax, and the reply's numbers counted as operations of
 * the same time (attention.c says how many). */
double api_attention_work(const api_request *req);

/* A fast lane's decoded request (size bytes at decoded, taken as they are)
 * moved into a new block, *deferred, for its pool job; false, with out the
 * out_of_memory reply and the request still the caller's, when there is no
 * memory for it. */
bool api_defer(const void *decoded, size_t size, void **deferred, reply *out);

/* A codec's refusal as the reply: 503 with Retry-After, or its status with
 * the pointer; in the error shape of out's route. */
void api_codec_error_reply(const codec_error *err, reply *out);

#endif
