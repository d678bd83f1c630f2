/*
 * metrics.h - counters for GET /metrics (Prometheus text format 0.0.4).
 *
 * Lock-free: every counter is an atomic, updated once per request in the
 * "request completed" callback, read when /metrics is scraped.
 */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include "server/base/buf.h"

#include <stddef.h>

/* The routes metrics are kept for; anything else counts as "other". */
typedef enum {
    METRICS_ROUTE_ATTENTION,
    METRICS_ROUTE_HEALTHZ,
    METRICS_ROUTE_READYZ,
    METRICS_ROUTE_METRICS,
    METRICS_ROUTE_OPENAPI,
    METRICS_ROUTE_INDEX,
    METRICS_ROUTE_OTHER,
    METRICS_ROUTE_COUNT
} metrics_route;

/* Maps a request path to its route label. */
metrics_route metrics_route_of(const char *path);

/* Records one finished request. */
void metrics_record(metrics_route route, unsigned status, double seconds,
                    size_t bytes_in, size_t bytes_out);

/* Appends the exposition; gauges are passed in by the caller, who owns them. */
void metrics_render(buf *out, size_t in_flight, size_t queue_depth,
                    size_t memory_reserved, size_t connections,
                    const char *version, const char *blas_core);

#endif
