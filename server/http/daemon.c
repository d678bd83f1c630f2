/*
 * daemon.c - request lifecycle on libmicrohttpd's event threads.
 *
 * DESIGN
 * libmicrohttpd runs one event thread per CPU (--event-threads, its thread
 * pool); each accepts connections and serves them to the end.  An event
 * thread computes only what costs less than handing it to a worker would:
 * the fast lane.  For each request the access handler is called several
 * times:
 *   1st call   headers only: their framing (framing.c), then the route
 *              (routes.c), method, auth and Content-Type (guards.c).  A
 *              body that will be read is reserved in the memory budget now,
 *              from its Content-Length (a chunked one as its buffer grows):
 *              503 when it does not fit, 413 when it never could.  An
 *              answer decided here is queued at once when a body follows
 *              (the library then closes the connection without reading
 *              it) or the framing is in doubt (the answer says Connection:
 *              close); else it waits for the last call, which keeps the
 *              connection alive.
 *   next calls body chunks, appended to a buffer capped at --max-body.
 *   last call  (no more data) inline routes answer at once; a pool route
 *              (POST /v1/attention) reserves what parsing needs.  A body
 *              of at most LIMIT_FAST_LANE_MAX_BODY bytes takes the route's
 *              fast lane: decoded here, and when its work is at most
 *              LIMIT_FAST_LANE_MAX_FLOPS computed and its reply queued
 *              here too, with no other thread involved.  Any other
 *              request (or one the lane decoded and found big, handing
 *              over what it decoded) suspends the connection and becomes
 *              a pool job.  --fast-lane off|all sends every request one
 *              way.
 *   after the job resumes the connection, one more call queues its reply.
 * The job never touches the connection after MHD_resume_connection(): from
 * then on the event thread owns the request again and frees it in the
 * "request completed" callback.  The job frees the body and gives its
 * memory back; the reply keeps its bytes reserved (reply_hold) until that
 * callback, when it has been sent or the connection has closed.  How long a
 * request may take to arrive, and its reply to be read, is enforced in one
 * place, conn_deadline.c, which also sees a client that stops sending or
 * reading altogether (the access handler is then never called).
 */
#include "server/http/daemon.h"

#include "core/tensor.h"
#include "server/base/block_cache.h"
#include "server/base/budget.h"
#include "server/base/clock.h"
#include "server/base/problem.h"
#include "server/http/conn_deadline.h"
#include "server/http/framing.h"
#include "server/http/guards.h"
#include "server/http/response.h"
#include "server/http/routes.h"
#include "server/obs/access_log.h"
#include "server/obs/metrics.h"

#include <arpa/inet.h>
#include <math.h>
#include <linux/tcp.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* libmicrohttpd's per-connection memory: headers plus the read buffer body
 * chunks arrive through.  The library zeroes what it used after every
 * request, so this is kept small: 256 KiB cost 20 % of the lesson-sized
 * request rate; 64 KiB still holds headers past guards.c's limit
 * (FRAMING_MAX_HEADER_BYTES), so our JSON 431 answers first. */
#define HTTP_CONNECTION_MEMORY ((size_t)64 << 10)
/* Body bytes read and dropped after an early answer (415, 413 of a chunked
 * body, ...), as a multiple of --max-body: enough for a client that sends a
 * finite body to get its answer, bounded for one that never stops. */
#define HTTP_DISCARD_FACTOR 3
/* Logged (never sent) when the client left before its reply: nginx's 499. */
#define HTTP_STATUS_CLIENT_GONE 499
/* Memory a request holds while it is parsed, per byte of body, before its
 * shapes are known (the worker then reserves what computing and answering
 * need): the worst case is a body of 2-byte numbers ("0,") that goes to
 * jansson, which keeps about 40 bytes per number; simdjson needs about 8
 * (its tape) plus 4 (the doubles) per such number. */
#define HTTP_PARSE_BYTES_PER_BODY_BYTE 32
/* The largest body of a request answered from its headers without refusing
 * it (a GET with a body, a preflight) that is still read (and dropped) so
 * that the connection stays open for the client's next request: a body this
 * small has usually arrived with the headers.  A larger one, a chunked one,
 * or one whose client waits for 100 Continue is not read: the answer goes
 * out at once and the connection is closed.  A refused request's body is
 * never read, whatever its size. */
#define HTTP_ANSWERED_BODY_READ_MAX ((unsigned long long)64 << 10)
/* A body without Content-Length starts in a buffer this big, doubled as it
 * grows. */
#define HTTP_BODY_START_CAP 4096
/* Room for the value of the request header a route hands its job: a byte
 * count (20 digits at most); a longer value is handed over empty, which
 * the job refuses. */
#define HTTP_JOB_HEADER_MAX 32
/* Replies shorter than this go to the kernel in one send (its smallest
 * socket send buffer, tcp_wmem's default): they are not cut off halfway, so
 * the bytes the client acknowledged before them are not asked for (a
 * getsockopt per reply, 4 % of a lesson-sized request's CPU here); one cut
 * off anyway reports 0 bytes out. */
#define HTTP_ACKED_MIN_BYTES ((size_t)16 << 10)
/* How often http_wait_idle() looks at the requests in flight. */
#define HTTP_IDLE_POLL_NS (20 * 1000 * 1000)

struct http_server {
    const config *cfg;
    pool *workers;
    struct MHD_Daemon *daemon;
    unsigned port;
    guard_api_key api_key;
    atomic_size_t active_requests;
    atomic_size_t open_connections; /* counted by connection_notify() */
    atomic_ullong completed_requests;
    budget memory;
    conn_deadlines *deadlines;
    atomic_bool draining;
    atomic_bool abandon; /* grace is over: answer queued jobs with 503 */
    atomic_ullong next_request_id;
};

typedef enum {
    REQ_RECEIVING, /* headers seen, body arriving            */
    REQ_WORKING,   /* suspended, a pool job owns the request */
    REQ_REPLIED,   /* reply ready to queue                   */
} request_state;

typedef struct {
    http_server *srv;
    struct MHD_Connection *conn;
    const route *route; /* NULL: no such path */
    const char *method;
    char path[128];
    char job_header[HTTP_JOB_HEADER_MAX]; /* the route's job_header */
    bool has_job_header;
    char id[ACCESS_LOG_ID_MAX];
    char origin_allowed[256]; /* Access-Control-Allow-Origin value or "" */
    request_state state;
    bool discard_body; /* an early error is waiting; drop the body */
    bool close;        /* close the connection after the answer */
    conn_watch *watch; /* this connection's deadline, may be NULL */
    int fd;            /* the client's socket, to notice it hanging up */
    size_t discarded;  /* body bytes dropped after an early answer */
    char *body;
    size_t body_len, body_cap;
    size_t upload_reserved; /* the body buffer's bytes in the budget */
    size_t parse_reserved;  /* what parsing the body may take */
    void *deferred;         /* the fast lane's decoding, for the job */
    const char *lane;       /* "inline" or "pool" once computed, for the log */
    reply rep;
    size_t bytes_out;              /* the body's length, once queued */
    unsigned long long acked_base; /* the socket's bytes acked at queueing */
    bool acked_known;
    api_attention_stats stats;
    double t_start, t_queued, t_work_start, t_work_end;
} request;

/* ---- answering -------------------------------------------------------- */

/* Bytes the peer has acknowledged on socket fd so far (TCP_INFO). */
static bool socket_bytes_acked(int fd, unsigned long long *acked)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_acked) +
                  sizeof info.tcpi_bytes_acked)
        return false;
    *acked = info.tcpi_bytes_acked;
    return true;
}

/* Seconds a client may take to read a reply of `bytes`: --request-timeout,
 * plus the bytes at --min-send-rate. */
static double send_seconds(const config *cfg, size_t bytes)
{
    return cfg->request_timeout + (double)bytes / (double)cfg->min_send_rate;
}

static enum MHD_Result queue_reply(request *req)
{
    http_server *srv = req->srv;
    response_meta meta = {
        .request_id = req->id,
        .allow_origin = req->origin_allowed,
        .vary_origin = strcmp(srv->cfg->cors_origins, "*") != 0,
        .close = req->close || atomic_load(&srv->draining),
    };
    req->acked_known = req->rep.body_len >= HTTP_ACKED_MIN_BYTES &&
                       socket_bytes_acked(req->fd, &req->acked_base);
    enum MHD_Result ret =
        response_queue(req->conn, &req->rep, &meta, &req->bytes_out);
    if (ret == MHD_YES)
        conn_deadlines_sending(srv->deadlines, req->watch,
                               send_seconds(srv->cfg, req->bytes_out));
    return ret;
}

/* The body bytes that reached the client: all of them when the library
 * finished sending; else what TCP says the client acknowledged since the
 * reply was queued (its headers included), at most the body. */
static size_t bytes_sent(const request *req,
                         enum MHD_RequestTerminationCode toe)
{
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        return req->bytes_out;
    unsigned long long acked;
    if (!req->acked_known || !socket_bytes_acked(req->fd, &acked) ||
        acked < req->acked_base)
        return 0;
    acked -= req->acked_base;
    return acked < req->bytes_out ? (size_t)acked : req->bytes_out;
}

/* Gives back the memory reserved for the body and its parsing. */
static void release_upload(request *req)
{
    budget_release(&req->srv->memory,
                   req->upload_reserved + req->parse_reserved);
    req->upload_reserved = 0;
    req->parse_reserved = 0;
}

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
    };
}

/* ---- the worker side -------------------------------------------------- */

/* A suspended connection does not notice its client leaving; a job peeks at
 * the socket before spending time on a request nobody waits for. */
static bool client_gone(const request *req)
{
    if (req->fd < 0)
        return false;
    struct pollfd p = {.fd = req->fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 &&
           (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static bool client_gone_hook(void *arg) { return client_gone(arg); }

static void pool_job(void *arg)
{
    request *req = arg;
    http_server *srv = req->srv;
    req->t_work_start = clock_seconds();
    req->lane = "pool";
    if (client_gone(req)) {
        /* nobody to answer: 499 (as nginx logs it) is only logged */
        reply_set_static(&req->rep, HTTP_STATUS_CLIENT_GONE, NULL, "", 0);
    } else if (atomic_load(&srv->abandon)) {
        problem_reply(&req->rep, ERR_DRAINING, NULL,
                      "the server shut down before this request could run");
    } else {
        api_job job = {
            .workers = srv->workers,
            .limits = &srv->cfg->request,
            .memory = &srv->memory,
            .body = req->body,
            .body_len = req->body_len,
            .header = req->has_job_header ? req->job_header : NULL,
            .stats = &req->stats,
            .cancelled = client_gone_hook,
            .cancelled_ctx = req,
            .deferred = req->deferred,
        };
        req->deferred = NULL; /* the job's now */
        req->route->job(&job, &req->rep);
        if (req->rep.status == 0) /* cancelled: the client left */
            reply_set_static(&req->rep, HTTP_STATUS_CLIENT_GONE, NULL, "", 0);
    }
    req->t_work_end = clock_seconds();
    if (req->deferred) { /* not run: the client left, or the drain ended */
        req->route->drop(req->deferred);
        req->deferred = NULL;
    }
    block_free(req->body);
    req->body = NULL;
    release_upload(req);
    req->state = REQ_REPLIED;
    /* from here on the event thread owns req */
    MHD_resume_connection(req->conn);
}

static size_t estimate_memory(size_t body_len)
{
    size_t estimate;
    if (!tensor_mul_size(body_len, HTTP_PARSE_BYTES_PER_BODY_BYTE, &estimate))
        return SIZE_MAX;
    return estimate;
}

static void refuse_over_budget(request *req)
{
    problem_reply(&req->rep, ERR_OVERLOADED, NULL,
                  "the server's memory budget for requests in flight "
                  "is used up; retry shortly");
    req->state = REQ_REPLIED;
}

/* The body has arrived: what parsing it needs is reserved (503 when it
 * does not fit); false when refused. */
static bool reserve_parsing(request *req)
{
    size_t need = estimate_memory(req->body_len);
    if (!budget_reserve(&req->srv->memory, need)) {
        refuse_over_budget(req);
        return false;
    }
    req->parse_reserved = need;
    return true;
}

/* Suspends the connection and queues the request (and what the fast lane
 * deferred, if anything) as a pool job; 503 when the queue is full. */
static enum MHD_Result submit_job(request *req)
{
    http_server *srv = req->srv;
    req->state = REQ_WORKING;
    req->t_queued = clock_seconds();
    MHD_suspend_connection(req->conn);
    if (pool_submit(srv->workers, pool_job, req) != 0) {
        MHD_resume_connection(req->conn);
        if (req->deferred) {
            req->route->drop(req->deferred);
            req->deferred = NULL;
        }
        req->state = REQ_REPLIED;
        problem_reply(&req->rep, ERR_OVERLOADED, NULL,
                      "%zu requests are already waiting; retry shortly",
                      srv->cfg->max_queue);
        return MHD_YES; /* queued on the call that follows the resume */
    }
    return MHD_YES;
}

/* Whether the request takes its route's fast lane (--fast-lane). */
static bool takes_fast_lane(const request *req)
{
    if (!req->route->try_inline)
        return false;
    switch (req->srv->cfg->fast_lane) {
    case CONFIG_LANE_OFF:
        return false;
    case CONFIG_LANE_ALL:
        return true;
    case CONFIG_LANE_AUTO:
        break;
    }
    return req->body_len <= LIMIT_FAST_LANE_MAX_BODY;
}

/* The fast lane: the request is decoded here and, when its work is small,
 * computed and its reply queued here; else what was decoded goes to a
 * pool job. */
static enum MHD_Result answer_inline(request *req)
{
    http_server *srv = req->srv;
    req->t_queued = req->t_work_start = clock_seconds();
    api_job job = {
        .limits = &srv->cfg->request,
        .memory = &srv->memory,
        .body = req->body,
        .body_len = req->body_len,
        .header = req->has_job_header ? req->job_header : NULL,
        .stats = &req->stats,
    };
    double max_work = srv->cfg->fast_lane == CONFIG_LANE_ALL
                          ? HUGE_VAL
                          : LIMIT_FAST_LANE_MAX_FLOPS;
    if (!req->route->try_inline(&job, max_work, &req->rep, &req->deferred))
        return submit_job(req);
    req->lane = "inline";
    req->t_work_end = clock_seconds();
    block_free(req->body);
    req->body = NULL;
    release_upload(req);
    req->state = REQ_REPLIED;
    return queue_reply(req);
}

static enum MHD_Result start_work(request *req)
{
    if (!reserve_parsing(req))
        return queue_reply(req);
    return takes_fast_lane(req) ? answer_inline(req) : submit_job(req);
}

/* ---- the access handler ----------------------------------------------- */

/* Decides, from the headers, whether the request goes on (REQ_RECEIVING) or
 * is answered (REQ_REPLIED, with its reply set). */
static void route_request(http_server *srv, request *req, const char *url,
                          const char *method)
{
    const route *rt = req->route;
    reply *r = &req->rep;
    req->state = REQ_REPLIED; /* unless the request goes on */
    if (!rt) {
        problem_reply(r, ERR_NOT_FOUND, NULL,
                      "no such path; the API is POST /v1/attention");
    } else if (strcmp(method, "OPTIONS") == 0) { /* CORS preflight */
        reply_set_static(r, 204, NULL, "", 0);
        r->allow = routes_allow_header(rt);
    } else if (!routes_allows(rt, method)) {
        problem_reply(r, ERR_METHOD_NOT_ALLOWED, NULL,
                      "%s does not accept %s; allowed: %s", url, method,
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
    snprintf(req->path, sizeof req->path, "%s", url);
    atomic_fetch_add(&srv->active_requests, 1);
    guard_request_id(conn, atomic_fetch_add(&srv->next_request_id, 1), req->id,
                     sizeof req->id);
    guard_cors_origin(srv->cfg->cors_origins, conn, req->origin_allowed,
                      sizeof req->origin_allowed);
    req->route = routes_find(url);
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

static void refuse_body_too_large(request *req)
{
    problem_reply(&req->rep, ERR_BODY_TOO_LARGE, NULL,
                  "the body is larger than %zu bytes (--max-body)",
                  req->srv->cfg->max_body);
    req->state = REQ_REPLIED;
}

/* Reserves a body buffer of `cap` bytes in the budget (what is reserved
 * already counts); false, with the request refused, when it does not fit. */
static bool reserve_upload(request *req, size_t cap)
{
    if (cap <= req->upload_reserved)
        return true;
    if (!budget_reserve(&req->srv->memory, cap - req->upload_reserved)) {
        refuse_over_budget(req);
        return false;
    }
    req->upload_reserved = cap;
    return true;
}

static bool body_append(request *req, const char *data, size_t size)
{
    size_t max = req->srv->cfg->max_body;
    if (size > max - req->body_len) {
        refuse_body_too_large(req);
        return false;
    }
    if (req->body_len + size > req->body_cap) {
        size_t cap = req->body_cap ? req->body_cap : HTTP_BODY_START_CAP;
        while (cap < req->body_len + size)
            cap *= 2;
        if (cap > max)
            cap = max;
        if (!reserve_upload(req, cap))
            return false;
        char *grown = realloc(req->body, cap);
        if (!grown) {
            problem_reply(&req->rep, ERR_OUT_OF_MEMORY, NULL,
                          "the server could not allocate memory for "
                          "the body");
            req->state = REQ_REPLIED;
            return false;
        }
        req->body = grown;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, data, size);
    req->body_len += size;
    return true;
}

/* A body of `declared` bytes is coming: refused (413) over --max-body, and
 * (503) when the budget cannot hold it and what parsing it needs now; else
 * the body is reserved (parsing is reserved when it has arrived) and
 * allocated in one piece.  False when refused. */
static bool accept_upload(request *req, unsigned long long declared)
{
    http_server *srv = req->srv;
    if (declared > srv->cfg->max_body) {
        refuse_body_too_large(req);
        return false;
    }
    size_t len = (size_t)declared, parse = estimate_memory(len);
    size_t used = budget_used(&srv->memory);
    size_t free_now = used < srv->memory.limit ? srv->memory.limit - used : 0;
    if (parse > free_now || len > free_now - parse) {
        refuse_over_budget(req);
        return false;
    }
    if (!reserve_upload(req, len))
        return false;
    if (len > 0) {
        /* the whole body in one allocation, no realloc chain */
        req->body = block_alloc(len);
        req->body_cap = req->body ? len : 0;
    }
    return true;
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
    if (framing_refused(conn, method, url, version, &req->rep)) {
        req->state = REQ_REPLIED;
        req->close = true;
        return queue_reply(req);
    }
    /* A chunked body and its trailer section are decoded inside the
     * library, out of framing.c's sight, and 0.9.75 reads trailers more
     * loosely than RFC 9112: a name holding a bare CR is taken as a field,
     * a line that starts with a NUL ends the section.  A peer that reads
     * them strictly finds the message's end elsewhere, so no byte after a
     * chunked body is read: its answer closes the connection. */
    if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding"))
        req->close = true;
    route_request(srv, req, url, method);
    if (req->state == REQ_RECEIVING &&
        !accept_upload(req, framing_content_length(conn))) {
        /* a body refused for its size is never read */
        req->close = true;
        return queue_reply(req);
    }
    if (req->state == REQ_REPLIED && answer_before_body(conn, &req->rep)) {
        req->close = true;
        return queue_reply(req);
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
    if (!body_append(req, data, size)) {
        /* refused (413, 503): the buffer goes at once, the rest of the
         * body is dropped */
        block_free(req->body);
        req->body = NULL;
        req->body_cap = 0;
        release_upload(req);
        req->discard_body = true;
        req->discarded = size;
    }
    return MHD_YES;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *conn,
                                      const char *url, const char *method,
                                      const char *version,
                                      const char *upload_data,
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
    switch (req->state) {
    case REQ_RECEIVING:
        return start_work(req);
    case REQ_WORKING:
        return MHD_YES; /* spurious call while suspended */
    case REQ_REPLIED:
        return queue_reply(req);
    }
    return MHD_NO;
}

/* A request libmicrohttpd answered itself, before the access handler saw
 * it (a Content-Length it cannot read, a request line or headers too big
 * for its memory, ...): logged and counted with the library's status, so
 * that every answer shows in the access log and the metrics.  The request
 * line is known to the library only; the path is logged empty. */
static void library_answer_completed(struct MHD_Connection *conn,
                                     enum MHD_RequestTerminationCode toe)
{
    const union MHD_ConnectionInfo *status =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
    access_log_entry entry = {
        .id = "-",
        .method = "",
        .path = "",
        .status = status ? status->http_status : 0,
        .completed = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK,
    };
    access_log_write(&entry);
    metrics_record(routes_index(NULL), entry.status, 0, 0, 0);
}

static void request_completed(void *cls, struct MHD_Connection *conn,
                              void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    http_server *srv = cls;
    request *req = *con_cls;
    if (!req) {
        library_answer_completed(conn, toe);
        return;
    }
    *con_cls = NULL;
    access_log_entry entry = {
        .id = req->id,
        .method = req->method,
        .path = req->path,
        .status = req->rep.status,
        .completed = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK,
        .bytes_in = req->body_len,
        .bytes_out = bytes_sent(req, toe),
        .total_seconds = clock_seconds() - req->t_start,
        .n = req->stats.n,
        .d = req->stats.d,
        .heads = req->stats.heads,
        .work = req->stats.work,
        .lane = req->lane,
    };
    if (req->t_work_start > 0) {
        entry.queue_seconds = req->t_work_start - req->t_queued;
        entry.work_seconds = req->t_work_end - req->t_work_start;
        entry.compute_seconds = req->stats.compute_seconds;
    }
    access_log_write(&entry);
    metrics_record(routes_index(req->route), req->rep.status,
                   entry.total_seconds, req->body_len, entry.bytes_out);
    conn_deadlines_rearm(srv->deadlines, req->watch);
    release_upload(req);
    reply_clear(&req->rep); /* and what the reply held of the budget */
    block_free(req->body);
    free(req);
    atomic_fetch_add(&srv->completed_requests, 1);
    atomic_fetch_sub(&srv->active_requests, 1);
}

/* ---- lifecycle -------------------------------------------------------- */

static void connection_notify(void *cls, struct MHD_Connection *conn,
                              void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    http_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&srv->open_connections, 1);
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context =
            info ? conn_deadlines_open(srv->deadlines, info->connect_fd) : NULL;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&srv->open_connections, 1);
        conn_deadlines_close(srv->deadlines, *socket_context);
        *socket_context = NULL;
    }
}

static void log_mhd_error(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap;
    /* libmicrohttpd's messages can quote request data; they are not logged */
}

/* Metrics count requests under the route table's labels. */
static bool label_metrics(char *err, size_t err_size)
{
    const char *labels[METRICS_MAX_ROUTES];
    size_t count = routes_count();
    if (count > METRICS_MAX_ROUTES) {
        snprintf(err, err_size, "%zu routes; metrics label at most %d", count,
                 METRICS_MAX_ROUTES);
        return false;
    }
    for (size_t i = 0; i < count; i++)
        labels[i] = routes_at(i)->label;
    return metrics_set_routes(labels, count);
}

static http_server *start_failed(http_server *srv)
{
    conn_deadlines_stop(srv->deadlines);
    free(srv);
    return NULL;
}

http_server *http_start(const config *cfg, pool *workers, char *err,
                        size_t err_size)
{
    if (!routes_check(err, err_size) || !label_metrics(err, err_size))
        return NULL;
    http_server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    srv->cfg = cfg;
    srv->workers = workers;
    budget_init(&srv->memory, cfg->memory_budget);
    srv->deadlines = conn_deadlines_start(cfg->request_timeout);
    if (!srv->deadlines) {
        snprintf(err, err_size, "cannot start the deadline watcher");
        return start_failed(srv);
    }
    atomic_init(&srv->next_request_id, 1);
    if (cfg->api_key_file[0] &&
        !guard_load_api_key(&srv->api_key, cfg->api_key_file, err, err_size))
        return start_failed(srv);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)cfg->port)};
    if (inet_pton(AF_INET, cfg->host, &addr.sin_addr) != 1) {
        snprintf(err, err_size, "--listen needs an IPv4 address, got %s",
                 cfg->host);
        return start_failed(srv);
    }
    srv->daemon = MHD_start_daemon(
        /* poll(), not epoll: with epoll this libmicrohttpd misses a client's
         * hang-up that arrives with its last bytes, and the connection then
         * lingers until the idle timeout (tests/http: dropped uploads).
         * Turbo: a socket is read or written before poll() says it is ready
         * (non-blocking, so at worst in vain): 11 % less CPU per
         * lesson-sized request here (38.7 to 34.5 µs) */
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_TURBO |
            MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)cfg->port, NULL, NULL, access_handler, srv,
        /* one event thread per CPU, each serving the connections it
         * accepted: a fast-lane request waits behind no other thread */
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->event_threads,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, srv,
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONNECTION_MEMORY,
        MHD_OPTION_NOTIFY_CONNECTION, connection_notify, srv,
        MHD_OPTION_EXTERNAL_LOGGER, log_mhd_error, NULL,
        MHD_OPTION_UNESCAPE_CALLBACK, framing_unescape, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, framing_drop_query, NULL,
        /* no MHD_OPTION_LISTENING_ADDRESS_REUSE: it sets SO_REUSEPORT, and
         * a second server started on the same port then silently took half
         * of the connections instead of failing; libmicrohttpd's default
         * SO_REUSEADDR still allows a restart over TIME_WAIT sockets */
        MHD_OPTION_END);
    if (!srv->daemon) {
        snprintf(err, err_size, "cannot listen on %s:%u", cfg->host, cfg->port);
        return start_failed(srv);
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : cfg->port;
    return srv;
}

unsigned http_port(const http_server *srv) { return srv->port; }

bool http_idle(http_server *srv, unsigned long long *completed)
{
    *completed = atomic_load(&srv->completed_requests);
    return atomic_load(&srv->active_requests) == 0;
}

void http_begin_drain(http_server *srv)
{
    atomic_store(&srv->draining, true);
    MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

bool http_wait_idle(http_server *srv, unsigned seconds)
{
    double deadline = clock_seconds() + seconds;
    while (atomic_load(&srv->active_requests) > 0) {
        if (clock_seconds() >= deadline) {
            atomic_store(&srv->abandon, true);
            return false;
        }
        struct timespec pause = {0, HTTP_IDLE_POLL_NS};
        nanosleep(&pause, NULL);
    }
    return true;
}

void http_stop(http_server *srv)
{
    if (!srv)
        return;
    MHD_stop_daemon(srv->daemon);
    conn_deadlines_stop(srv->deadlines);
    free(srv);
}
