/*
 * reply.h - what an endpoint hands back to the HTTP layer.
 *
 * Endpoints never touch libmicrohttpd: they fill a reply (on a pool worker,
 * or on the event thread for the cheap ones), and the event thread turns it
 * into a response (server/http/response.c).
 */
#ifndef SERVER_REPLY_H
#define SERVER_REPLY_H

#include "server/base/budget.h"

#include <stdbool.h>
#include <stddef.h>

/* One piece of a body sent in pieces (malloc'd). */
typedef struct {
    char *data;
    size_t len;
} reply_part;

/* The shape of an error body (problem.c): RFC 9457 problem+json, or the
 * Open Inference Protocol's {"error": "..."} that its clients read. */
typedef enum {
    REPLY_ERRORS_PROBLEM,
    REPLY_ERRORS_OIP,
} reply_error_shape;

typedef struct {
    unsigned status;
    const char *content_type; /* static string                         */
    char *body;               /* malloc'd, or static when body_static  */
    size_t body_len;
    bool body_static;
    reply_part *parts; /* or the body in pieces (all owned)    */
    size_t part_count;
    const char *allow;         /* Allow header (405), static, or NULL   */
    unsigned retry_after;      /* Retry-After seconds (503), 0 = none   */
    bool www_authenticate;     /* add WWW-Authenticate: Bearer (401)    */
    const char *cache_control; /* static, or NULL                       */
    /* Content-Security-Policy: frame-ancestors FRAME_ANCESTORS (a source
     * list that outlives the reply), or NULL: no policy */
    const char *frame_ancestors;
    /* Content-Encoding of the body (server/http/reply_coding.c), static,
     * or NULL: the body as it is */
    const char *content_encoding;
    /* Inference-Header-Content-Length: the bytes of the body's JSON, which
     * binary tensors follow (Open Inference Protocol); 0 = no header */
    size_t json_header_len;
    /* set from the route before anything is built, and kept when the reply
     * is cleared or set again: it belongs to the route, not to one body */
    reply_error_shape error_shape;
    /* the request's W3C trace id, which an error body names; set with
     * error_shape and kept as it is, or NULL */
    const char *trace_id;
    /* the code of an error body (problem.c, static), for the access log;
     * NULL for any other body */
    const char *code;
    budget *held_in; /* the budget the body's bytes are in    */
    size_t held;     /* bytes of held_in this reply keeps     */
} reply;

void reply_set_static(reply *r, unsigned status, const char *content_type,
                      const char *body, size_t len);
/* Takes ownership of body (malloc'd). */
void reply_set_owned(reply *r, unsigned status, const char *content_type,
                     char *body, size_t len);
/* Takes ownership of parts (malloc'd array) and of every parts[i].data:
 * the body is their concatenation, sent without joining them. */
void reply_set_parts(reply *r, unsigned status, const char *content_type,
                     reply_part *parts, size_t count);
/* The reply keeps `bytes` already reserved in b until reply_clear(), which
 * runs when the reply has been sent or its connection has closed: a body
 * waiting for a slow reader stays counted in the memory budget. */
void reply_hold(reply *r, budget *b, size_t bytes);
/* Frees parts[0 .. count) and the array. */
void reply_parts_free(reply_part *parts, size_t count);
/* Frees what the reply owns, releases what it holds of a budget, and
 * empties r, all but its error_shape. */
void reply_clear(reply *r);

#endif
