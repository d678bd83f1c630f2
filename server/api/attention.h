/*
 * attention.h - POST /v1/attention: decode → core → encode.
 *
 * Runs on a pool worker, never on the event thread.
 */
#ifndef SERVER_API_ATTENTION_H
#define SERVER_API_ATTENTION_H

#include "core/pool.h"
#include "server/base/budget.h"
#include "server/base/service_limits.h"
#include "server/base/reply.h"

#include <stdbool.h>
#include <stddef.h>

/* What one request was, for the access log and metrics. */
typedef struct {
    size_t n, m, d, heads;
    double compute_seconds;
} api_attention_stats;

/* Asked between the stages of a request: true means nobody waits for the
 * answer any more, and the work stops (out is left with status 0). */
typedef bool (*api_cancelled_fn)(void *ctx);

/* Decodes body, reserves what computing and encoding it needs from
 * `memory` (503 when it does not fit), computes on `workers` and fills out.
 * `cancelled` may be NULL. */
void api_attention(pool *workers, const request_limits *limits, budget *memory,
                   const char *body, size_t len, reply *out,
                   api_attention_stats *stats, api_cancelled_fn cancelled,
                   void *cancelled_ctx);

#endif
