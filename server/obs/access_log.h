/*
 * access_log.h - one JSON line per request on stderr, and the server's
 * events ({"event": ...}) in order with them.
 *
 * Never logs a body, a header value other than the request id, the
 * traceparent's ids and the User-Agent (ACCESS_LOG_AGENT_MAX bytes of it,
 * bytes beyond ASCII as '?'), or a token; of a body, /v2's request "id"
 * alone (as the User-Agent).
 *
 * Lines are collected in memory and written in batches by a thread of
 * their own (access_log.c), so a request pays a copy of its line, not a
 * write(): a line reaches stderr at most ACCESS_LOG_FLUSH_MS after it was
 * logged, and access_log_flush() / access_log_stop() write every line
 * logged before them (the drain on SIGTERM calls them).
 */
#ifndef SERVER_ACCESS_LOG_H
#define SERVER_ACCESS_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* Request ids: 1 to 64 characters of [A-Za-z0-9._-]. */
#define ACCESS_LOG_ID_MAX 65
/* The User-Agent (and /v2's request id) is logged up to this many bytes:
 * enough for a browser's (about 120), bounded for one that sends
 * kilobytes. */
#define ACCESS_LOG_AGENT_MAX 256

/* The longest a logged line waits in memory, in milliseconds: a log reader
 * (tail -f, a shipper, a test) sees it within a twentieth of a second, and
 * a trickle of requests costs at most 20 writes a second. */
#define ACCESS_LOG_FLUSH_MS 50

typedef struct {
    const char *id, *method, *path;
    const char *id_replaced; /* why the client's request id was, or NULL */
    /* the W3C trace (server/http/trace.h): its id, the service's span, the
     * client's span ("" or NULL: none), why the client's traceparent or
     * tracestate was ignored (NULL: it was not); NULL trace_id: no trace */
    const char *trace_id, *span_id, *parent_id;
    const char *traceparent_ignored, *tracestate_ignored;
    const char *infer_id; /* /v2's request "id", or NULL */
    unsigned status;
    const char *code;       /* an error reply's code, else NULL          */
    const char *client;     /* the client's address, or NULL             */
    const char *user_agent; /* its User-Agent header, or NULL            */
    bool completed;         /* false: the client went away before the reply */
    size_t bytes_in, bytes_out;
    double queue_seconds;   /* waiting for a worker                      */
    double work_seconds;    /* on the worker: decode, compute, encode    */
    double compute_seconds; /* the forward pass alone                    */
    double encode_seconds;  /* the reply's encoding alone                */
    double total_seconds;   /* first header byte to the reply queued     */
    size_t n, d, heads;
    double work;      /* estimated floating-point operations (attention.h) */
    const char *lane; /* "inline" or "pool" where it computed, else NULL */
    /* why its computation was stopped ("client_gone", "deadline",
     * "shutdown"), else NULL; compute_seconds then says how long it ran */
    const char *stopped;
} access_log_entry;

/* Starts the writer thread; request lines are logged only when `requests`
 * is true (--access-log), events always.  Without the thread (it could not
 * start, or before this call, or after access_log_stop()) every line is
 * written at once. */
void access_log_start(bool requests);

/* Logs one request's line. */
void access_log_write(const access_log_entry *e);

/* Logs an event line: `json` is one JSON object, without the newline. */
void access_log_event(const char *json);

/* Returns once every line logged before the call is written. */
void access_log_flush(void);

/* Writes every line logged so far and stops the writer thread. */
void access_log_stop(void);

#endif
