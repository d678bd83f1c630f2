/*
 * routes.h - the route table: every path the service answers, one row each.
 *
 * Lookup, 404 and 405, the Allow header, the CORS preflight's allowed
 * methods, authentication, the lane a request runs in and its metrics label
 * (its path) all read this table; a new route is one row in routes.c.
 */
#ifndef SERVER_HTTP_ROUTES_H
#define SERVER_HTTP_ROUTES_H

#include "server/api/endpoint.h"

#include <stdbool.h>
#include <stddef.h>

/* The methods a route serves, as bits.  OPTIONS is not among them: the HTTP
 * layer answers the CORS preflight for every route. */
enum { ROUTE_GET = 1u << 0, ROUTE_HEAD = 1u << 1, ROUTE_POST = 1u << 2 };

typedef enum {
    ROUTE_INLINE, /* answered on the event thread: cheap, no body */
    ROUTE_POOL,   /* the body is read, then a pool job answers, or the
                     route's fast lane when the work is small */
} route_lane;

typedef struct {
    const char *path;
    bool prefix;      /* serves every path that starts with `path` and no
                         other row serves exactly */
    unsigned methods; /* ROUTE_GET | ROUTE_HEAD | ROUTE_POST */
    route_lane lane;
    bool needs_auth;    /* the bearer token of --api-key-file */
    api_handler answer; /* ROUTE_INLINE's endpoint, else NULL */
    api_job_fn job;     /* ROUTE_POOL's endpoint, else NULL */
    /* ROUTE_POOL's fast lane, or NULL (every request is a pool job), and
     * what frees a request it deferred */
    api_inline_fn try_inline;
    api_drop_fn drop;
    /* the shape of every error on this route, the HTTP layer's too */
    reply_error_shape errors;
    /* a body of any Content-Type (or none) is read; else only
     * application/json (415) */
    bool any_content_type;
    /* a request header handed to the job (api_job.header), or NULL */
    const char *job_header;
} route;

/* The route serving path: the row of that exact path, else the prefix row
 * it starts with; or NULL (404). */
const route *routes_find(const char *path);

/* Whether r serves method ("GET", "POST", ...); OPTIONS is not asked here. */
bool routes_allows(const route *r, const char *method);

/* The Allow header's value for r ("GET, HEAD, OPTIONS"), derived from its
 * methods; a static string. */
const char *routes_allow_header(const route *r);

/* The Allow header's value for the server as a whole (OPTIONS *): every
 * method some route serves, and OPTIONS; a static string. */
const char *routes_allow_any(void);

/* The label of row r (not NULL) in the metrics: its path, followed by "*"
 * for a prefix row; a static string. */
const char *routes_label(const route *r);

/* Rows in the table; row i; the index of a row, where NULL (no route) is
 * routes_count(), which metrics count as "other". */
size_t routes_count(void);
const route *routes_at(size_t i);
size_t routes_index(const route *r);

/* False, with a message, when a row's lane and its endpoint disagree, or
 * its path is too long for its label (the server must not start then). */
bool routes_check(char *err, size_t err_size);

#endif
