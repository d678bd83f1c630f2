/*
 * metrics.h - counters for GET /metrics (Prometheus text format 0.0.4).
 *
 * Lock-free: every counter is an atomic, updated once per request in the
 * "request completed" callback (and once per reply body compressed), read
 * when /metrics is scraped.  The routes
 * are not listed here: the HTTP layer's route table names them.
 */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include "server/base/buf.h"

#include <stdbool.h>
#include <stddef.h>

/* Routes that can be labelled; room for twice today's table.  The counters
 * are static so that recording a request never allocates or fails. */
#define METRICS_MAX_ROUTES 32

/* The labels requests are counted under, in the exposition's order:
 * metrics_record()'s route i is labels[i], and any index at or past count is
 * "other".  Called once before the first request (the HTTP layer hands in
 * its route table's labels); the strings must stay valid.  False when there
 * are more than METRICS_MAX_ROUTES. */
bool metrics_set_routes(const char *const *labels, size_t count);

/* What the server runs with, for attention_build_info: the architecture,
 * the SIMD level of the core's loops and what computes the products
 * (server/setup/build_info.h).  Called once before the first scrape; the
 * strings must stay valid. */
void metrics_set_build_info(const char *arch, const char *simd,
                            const char *products);

/* Records one finished request. */
void metrics_record(size_t route, unsigned status, double seconds,
                    size_t bytes_in, size_t bytes_out);

/* Records where the time of a request handed to a lane went: its wait for
 * a worker always, its forward pass when it ran (compute_seconds > 0), its
 * reply's encoding when there was one (encode_seconds > 0). */
void metrics_record_work(double queue_seconds, double compute_seconds,
                         double encode_seconds);

/* Records one error reply by its code (a name of server/base/error_codes.h's
 * table; another name is not counted). */
void metrics_record_refusal(const char *code);

/* Records one reply body compressed for its request (server/http/lanes.c,
 * answer.c); the assets' forms made at start-up are not counted. */
void metrics_note_compression(void);

/* Appends the exposition; gauges are passed in by the caller, who owns them. */
void metrics_render(buf *out, size_t in_flight, size_t queue_depth,
                    size_t memory_reserved, size_t connections,
                    const char *version, const char *blas_core);

#endif
