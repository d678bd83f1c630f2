/*
 * attention.h - POST /v1/attention: decode → core → encode.
 *
 * Runs on a pool worker, or (api_attention_inline(): the fast lane) on
 * the event thread that received the request, for small work.
 */
#ifndef SERVER_API_ATTENTION_H
#define SERVER_API_ATTENTION_H

#include "core/pool.h"
#include "server/base/budget.h"
#include "server/base/buf_chain.h"
#include "server/base/service_limits.h"
#include "server/base/reply.h"
#include "server/json/codec_error.h"
#include "server/json/request.h"

#include <stdbool.h>
#include <stddef.h>

/* What one request was, for the access log and metrics. */
typedef struct {
    size_t n, m, d, heads;
    double work; /* api_attention_work() */
    double compute_seconds;
} api_attention_stats;

/* Decodes body, reserves what computing and encoding it needs from
 * `memory` (503 when it does not fit), computes on `workers` and fills out.
 * A 200 reply keeps its body's bytes reserved (reply_hold) until
 * reply_clear().  The computation reads `stop` (core/attn_stop.h; NULL:
 * none) once per block of work: when it fires, before or during the
 * computation, out is left with status 0 and the caller, who knows why it
 * fired (a client gone, a shutdown, the deadline), answers. */
void api_attention(pool *workers, const request_limits *limits, budget *memory,
                   const char *body, size_t len, reply *out,
                   api_attention_stats *stats, attn_stop *stop);

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

/* api_attention() past decoding: reserves, computes and has enc write the
 * reply (a 200 reply holds its bytes, as above).  Takes req's buffers (req
 * is left empty). */
void api_attention_decoded(pool *workers, const request_limits *limits,
                           budget *memory, api_request *req,
                           const api_encoder *enc, reply *out,
                           api_attention_stats *stats, attn_stop *stop);

/* The work request req asks for, in floating-point operations: its
 * products and softmax, and the reply's numbers counted as operations of
 * the same time (attention.c says how many). */
double api_attention_work(const api_request *req);

/* The fast lane: api_attention() on the calling thread alone (no pool).
 * Decodes body; a refusal is answered (true).  When the request's work is
 * at most max_work it is computed and answered here (true); else nothing is
 * answered, *deferred is the decoded request (the caller's) and the result
 * false: api_attention_continue() finishes it, api_attention_drop() frees
 * it. */
bool api_attention_inline(const request_limits *limits, budget *memory,
                          const char *body, size_t len, double max_work,
                          reply *out, api_attention_stats *stats,
                          attn_stop *stop, api_request **deferred);

/* api_attention() of a request api_attention_inline() decoded and deferred;
 * frees `deferred`. */
void api_attention_continue(pool *workers, const request_limits *limits,
                            budget *memory, api_request *deferred, reply *out,
                            api_attention_stats *stats, attn_stop *stop);

/* Frees a deferred request that will not run (NULL: nothing). */
void api_attention_drop(api_request *deferred);

/* A codec's refusal as the reply: 503 with Retry-After, or its status with
 * the pointer; in the error shape of out's route. */
void api_codec_error_reply(const codec_error *err, reply *out);

#endif
