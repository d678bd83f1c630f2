/*
 * trace.h - W3C Trace Context (https://www.w3.org/TR/trace-context/): the
 * trace a request belongs to, and the span the service opens for it.
 *
 * A request whose `traceparent` is valid joins its trace: its trace id and
 * flags are kept, its parent id is the client's span.  One without, or with
 * one the specification says to ignore (a malformed value, version ff, an
 * all-zero id, the header sent twice), starts a trace of its own, and why
 * the client's was ignored is kept for the access log.  A valid
 * `tracestate` with a valid traceparent is echoed in the reply; another is
 * dropped, and why is kept for the log.  Every reply carries the
 * `traceparent` of the service's span (version 00, the trace's id, the
 * span's id, the trace's flags).
 */
#ifndef SERVER_HTTP_TRACE_H
#define SERVER_HTTP_TRACE_H

#include <microhttpd.h>

/* Characters of a version-00 traceparent ("00-" 32 "-" 16 "-" 2). */
#define TRACE_PARENT_LEN 55
/* The longest tracestate echoed: the specification asks a participant to
 * propagate at least 512 characters; a longer one is dropped whole. */
#define TRACE_STATE_MAX 512

typedef struct {
    char trace_id[33];  /* 32 lowercase hex digits, never all zero */
    char parent_id[17]; /* the client's span, "" when it sent none valid */
    char span_id[17];   /* the service's span for this request */
    char flags[3];      /* the trace's flags (2 hex digits) */
    char state[TRACE_STATE_MAX + 1]; /* the tracestate to echo, or "" */
    /* why the client's traceparent was ignored ("malformed",
     * "invalid_version", "zero_trace_id", "zero_parent_id", "repeated"),
     * or NULL (static) */
    const char *parent_ignored;
    /* why its tracestate was dropped ("malformed", "too_many_members",
     * "too_long"), or NULL (static) */
    const char *state_ignored;
} trace_context;

/* Reads the request's traceparent and tracestate into t, with a span id of
 * its own (and a new trace id when the client's trace is not joined). */
void trace_begin(struct MHD_Connection *conn, trace_context *t);

/* The traceparent of the service's span (TRACE_PARENT_LEN characters and
 * a NUL). */
void trace_parent_header(const trace_context *t,
                         char out[TRACE_PARENT_LEN + 1]);

#endif
