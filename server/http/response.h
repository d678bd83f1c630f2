/*
 * response.h - a reply turned into a libmicrohttpd response, with the
 * headers every answer of the service carries.
 */
#ifndef SERVER_HTTP_RESPONSE_H
#define SERVER_HTTP_RESPONSE_H

#include "server/base/reply.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* What the headers say beyond the reply itself. */
typedef struct {
    const char *request_id;   /* X-Request-ID */
    const char *traceparent;  /* the service's span (trace.h) */
    const char *tracestate;   /* echoed, or "" for none */
    const char *allow_origin; /* Access-Control-Allow-Origin, "" for none */
    bool vary_origin;         /* the answer depends on Origin */
    bool close;               /* Connection: close (the server is draining) */
} response_meta;

/* Queues r on conn.  The response takes what r owned (its body or parts;
 * r keeps its status and headers, and reply_clear() on it frees nothing
 * more); *bytes_out is set to the body's length.  MHD_NO when out of memory
 * or when libmicrohttpd refuses. */
enum MHD_Result response_queue(struct MHD_Connection *conn, reply *r,
                               const response_meta *meta, size_t *bytes_out);

#endif
