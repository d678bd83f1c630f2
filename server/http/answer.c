/*
 * answer.c - the access handler: what each call for a request does.
 *
 * DESIGN
 * libmicrohttpd runs one event thread per CPU (--event-threads, its thread
 * pool); each accepts connections and serves them to the end.  For each
 * request the access handler is called several times:
 *   1st call   headers only: their framing (framing.c), then the route
 *              (routes.c), method, auth and Content-Type (guards.c).  A
 *              body that will be read is reserved in the memory budget now
 *              (upload.c).  An answer decided here is queued at once when
 *              a body follows (the library then closes the connection
 *              without reading it) or the framing is in doubt (the answer
 *              says Connection: close); else it waits for the last call,
 *              which keeps the connection alive.
 *   next calls body chunks, appended to a buffer capped at --max-body.
 *   last call  (no more data) inline routes answer at once; a pool route
 *              is computed in its fast lane or left for a pool job
 *              (lanes.c).
 *   next call  (a pool job's request) the connection is suspended and the
 *              request handed to the job: a call later, so that a client
 *              that half-closes still gets its reply (lanes.c says why).
 *   after the job resumes the connection, one more call queues its reply.
 * How long a request may take to arrive, and its reply to be read, is
 * enforced in one place, conn_deadline.c, which also sees a client that
 * stops sending or reading altogether (the access handler is then never
 * called).
 */
#include "server/http/exchange.h"

#include "server/base/block_cache.h"
#include "server/base/clock.h"
#include "server/base/problem.h"
#include "server/http/framing.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Body bytes read and dropped after an early answer (415, 413 of a chunked
 * body, ...), as a multiple of --max-body: enough for a client that sends a
 * finite body to get its answer, bounded for one that never stops. */
#define HTTP_DISCARD_FACTOR 3
/* The largest body of a request answered from its headers without refusing
 * it (a GET with a body, a preflight) that is still read (and dropped) so
 * that the connection stays open for the client's next request: a body this
 * small has usually arrived with the headers.  A larger one, a chunked one,
 * or one whose client waits for 100 Continue is not read: the answer goes
 * out at once and the connection is closed.  A refused request's body is
 * never read, whatever its size. */
#define HTTP_ANSWERED_BODY_READ_MAX ((unsigned long long)64 << 10)

/* The server's state for an inline endpoint, read now. */
static api_env env_now(http_server *srv)
{
    return (api_env){
        .in_flight = atomic_load(&srv->active_requests),
        .queue_depth = pool_queued(srv->workers),
        .max_queue = srv->cfg->max_queue,
        .memory_used = budget_used(&srv->memory),
        .memory_limit = srv->memory.limit,
        .connections = atomic_load(&srv->open_connections),
        .deadline_closed = conn_deadlines_expired(srv->deadlines),
        .draining = atomic_load(&srv->draining),
        .frame_ancestors = srv->cfg->frame_ancestors,
    };
}

/* The answer to a target that names no path (target.h): OPTIONS * is
 * asked what the server as a whole allows (RFC 9110 9.3.7); "*" with any
 * other method, or a target of no known form, is 400. */
static void answer_no_path(request *req, const char *method)
{
    reply *r = &req->rep;
    if (req->target == TARGET_ASTERISK && strcmp(method, "OPTIONS") == 0) {
        reply_set_static(r, 200, NULL, "", 0);
        r->allow = routes_allow_any();
    } else {
        problem_reply(r, ERR_BAD_REQUEST, NULL, "%s",
                      req->target == TARGET_ASTERISK
                          ? "the request target \"*\" is for OPTIONS only"
                          : req->target_why);
    }
}

/* Decides, from the headers, whether the request goes on (REQ_RECEIVING) or
 * is answered (REQ_REPLIED, with its reply set). */
static void route_request(http_server *srv, request *req, const char *method)
{
    const route *rt = req->route;
    reply *r = &req->rep;
    req->state = REQ_REPLIED; /* unless the request goes on */
    if (req->target != TARGET_PATH) {
        answer_no_path(req, method);
    } else if (!rt) {
        problem_reply(r, ERR_NOT_FOUND, NULL,
                      "no such path; the API is POST /v1/attention");
    } else if (strcmp(method, "OPTIONS") == 0) { /* CORS preflight */
        reply_set_static(r, 204, NULL, "", 0);
        r->allow = routes_allow_header(rt);
    } else if (!routes_allows(rt, method)) {
        problem_reply(r, ERR_METHOD_NOT_ALLOWED, NULL,
                      "%s does not accept %s; allowed: %s", req->path, method,
                      routes_allow_header(rt));
        r->allow = routes_allow_header(rt);
    } else if (rt->needs_auth && !guard_authorized(&srv->api_key, req->conn)) {
        problem_reply(r, ERR_UNAUTHORIZED, NULL,
                      "a valid bearer token is required (Authorization: "
                      "Bearer <key>)");
        r->www_authenticate = true;
    } else if (rt->lane == ROUTE_INLINE) {
        api_env env = env_now(srv);
        env.path = req->path;
        rt->answer(&env, r);
    } else if (!rt->any_content_type && !guard_json_content_type(req->conn)) {
        problem_reply(r, ERR_UNSUPPORTED_MEDIA_TYPE, NULL,
                      "send the request with Content-Type: application/json");
    } else {
        req->state = REQ_RECEIVING;
    }
}

/* First call: headers only.  Returns the request, its route looked up. */
static request *request_begin(http_server *srv, struct MHD_Connection *conn,
                              const char *url, const char *method)
{
    /* malloc, not calloc: glibc's calloc skips the per-thread cache and
     * takes the shared arena's lock, which the event threads contend for */
    request *req = malloc(sizeof *req);
    if (!req)
        return NULL;
    *req = (request){0};
    req->srv = srv;
    req->conn = conn;
    req->t_start = clock_seconds();
    req->method = method;
    const char *path;
    req->target = target_read(url, &path, &req->target_why);
    /* cut to fit, as snprintf's "%s" would, without parsing a format */
    const char *logged = path ? path : url;
    size_t path_len = strnlen(logged, sizeof req->path - 1);
    memcpy(req->path, logged, path_len);
    req->path[path_len] = '\0';
    atomic_fetch_add(&srv->active_requests, 1);
    req->id_replaced =
        guard_request_id(conn, atomic_fetch_add(&srv->next_request_id, 1),
                         req->id, sizeof req->id);
    trace_begin(conn, &req->trace);
    req->rep.trace_id = req->trace.trace_id;
    guard_cors_origin(srv->cfg->cors_origins, conn, req->origin_allowed,
                      sizeof req->origin_allowed);
    req->accept = reply_coding_accept(
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding"));
    req->route = path ? routes_find(path) : NULL;
    if (req->route) {
        req->rep.error_shape = req->route->errors;
        const char *value =
            req->route->job_header
                ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                              req->route->job_header)
                : NULL;
        req->has_job_header = value != NULL;
        if (value && strlen(value) < sizeof req->job_header)
            memcpy(req->job_header, value, strlen(value) + 1);
    }
    return req;
}

/* Whether `answer`, decided from the headers, must go out now, before the
 * body: for a refusal whenever a body follows, however small (it is not
 * read, nor 100 Continue granted, and with libmicrohttpd 0.9.75 an answer
 * queued before the body is read closes the connection); for another
 * answer, see HTTP_ANSWERED_BODY_READ_MAX. */
static bool answer_before_body(struct MHD_Connection *conn, const reply *answer)
{
    if (!framing_has_body(conn))
        return false;
    const char *expect =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Expect");
    return answer->status >= 400 || expect ||
           MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                       "Transfer-Encoding") ||
           framing_content_length(conn) > HTTP_ANSWERED_BODY_READ_MAX;
}

/* The first call: the request is set up and its headers checked.  An
 * answer decided here is queued now when a body that will not be read
 * follows (the library then closes the connection, and grants no 100
 * Continue) or when the framing is in doubt (Connection: close, so that no
 * byte after these headers is read as another request); else it waits for
 * the last call, which keeps the connection alive. */
static enum MHD_Result access_first(http_server *srv,
                                    struct MHD_Connection *conn,
                                    const char *url, const char *method,
                                    const char *version, void **con_cls)
{
    request *req = request_begin(srv, conn, url, method);
    if (!req)
        return MHD_NO;
    *con_cls = req;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    req->watch = info ? info->socket_context : NULL;
    const union MHD_ConnectionInfo *fd_info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    req->fd = fd_info ? fd_info->connect_fd : -1;
    req->interim_ok = strcmp(version, MHD_HTTP_VERSION_1_1) == 0;
    if (framing_refused(conn, method, url, version, &req->rep)) {
        req->state = REQ_REPLIED;
        req->close = true;
        return reply_queue(req);
    }
    /* A chunked body and its trailer section are decoded inside the
     * library, out of framing.c's sight, and 0.9.75 reads trailers more
     * loosely than RFC 9112: a name holding a bare CR is taken as a field,
     * a line that starts with a NUL ends the section.  A peer that reads
     * them strictly finds the message's end elsewhere, so no byte after a
     * chunked body is read: its answer closes the connection. */
    if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding"))
        req->close = true;
    route_request(srv, req, method);
    /* a coded body is counted as it inflates (content_coding.c), a plain
     * one from its Content-Length */
    if (req->state == REQ_RECEIVING &&
        (!coding_begin(req, conn) ||
         (!req->coding && !upload_accept(req, framing_content_length(conn))))) {
        /* a body refused for its size is never read */
        req->close = true;
        return reply_queue(req);
    }
    if (req->state == REQ_REPLIED && answer_before_body(conn, &req->rep)) {
        req->close = true;
        return reply_queue(req);
    }
    req->discard_body = req->state == REQ_REPLIED;
    return MHD_YES;
}

/* A chunk of the body.  Its time is not checked here: the connection's
 * deadline (conn_deadline.c) cuts a body that arrives too slowly. */
static enum MHD_Result access_chunk(request *req, const char *data, size_t size)
{
    if (req->discard_body) {
        /* an answer is waiting for the end of a body we do not keep; a
         * body without Content-Length (chunked) may never end, so past
         * a bounded allowance the connection is closed instead */
        req->discarded += size;
        return req->discarded / HTTP_DISCARD_FACTOR > req->srv->cfg->max_body
                   ? MHD_NO
                   : MHD_YES;
    }
    if (!(req->coding ? coding_append(req, data, size)
                      : upload_append(req, data, size))) {
        /* refused (413, 503): the buffer goes at once, the rest of the
         * body is dropped */
        block_free(req->body);
        req->body = NULL;
        req->body_cap = 0;
        upload_release(req);
        req->discard_body = true;
        req->discarded = size;
    }
    return MHD_YES;
}

enum MHD_Result answer_access(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    http_server *srv = cls;
    request *req = *con_cls;
    if (!req)
        return access_first(srv, conn, url, method, version, con_cls);
    if (*upload_data_size > 0) {
        size_t size = *upload_data_size;
        *upload_data_size = 0;
        return access_chunk(req, upload_data, size);
    }
    conn_deadlines_disarm(srv->deadlines, req->watch); /* fully arrived */
    if (req->state == REQ_RECEIVING && req->coding && !coding_finish(req))
        return reply_queue(req);
    switch (req->state) {
    case REQ_RECEIVING:
        return lanes_start(req);
    case REQ_HANDING:
        return lanes_hand_over(req);
    case REQ_WORKING:
        return MHD_YES; /* spurious call while suspended */
    case REQ_REPLIED:
        return reply_queue(req);
    }
    return MHD_NO;
}
