/*
 * access_log.h - one JSON line per request on stderr.
 *
 * Never logs a body, a header value other than the request id, or a token.
 */
#ifndef SERVER_ACCESS_LOG_H
#define SERVER_ACCESS_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* Request ids: 1 to 64 characters of [A-Za-z0-9._-]. */
#define ACCESS_LOG_ID_MAX 65

typedef struct {
    const char *id, *method, *path;
    unsigned status;
    bool completed; /* false: the client went away before the reply */
    size_t bytes_in, bytes_out;
    double queue_seconds;   /* waiting for a worker                      */
    double work_seconds;    /* on the worker: decode, compute, encode    */
    double compute_seconds; /* the forward pass alone                    */
    double total_seconds;   /* first header byte to the reply queued     */
    size_t n, d, heads;
} access_log_entry;

void access_log_write(const access_log_entry *e);

/* Turns logging off (tests and benchmarks that flood the server). */
void access_log_enable(bool on);

#endif
