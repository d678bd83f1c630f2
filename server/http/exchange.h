/*
 * exchange.h - what the daemon's files share: the server, one request and
 * its states, and the calls one file makes into another.
 *
 * DESIGN
 * A request travels through six files, each of one job:
 *   answer.c      the access handler: what each of libmicrohttpd's calls
 *                 for a request does, and the route decided from the
 *                 headers
 *   upload.c      the memory budget of the body: reserved from its
 *                 Content-Length (or as a chunked body grows), and what
 *                 parsing it needs once it has arrived
 *   lanes.c       the fast lane on the event thread, or the hand-off to a
 *                 pool job (suspend, compute, resume)
 *   reply_queue.c the reply onto the connection (from answer.c or lanes.c)
 *   completion.c  the "request completed" callback: the access log line,
 *                 the metrics, and everything the request held given back
 *   daemon.c      the lifecycle: start, drain, stop
 * The job never touches the connection after MHD_resume_connection(): from
 * then on the event thread owns the request again and frees it in the
 * "request completed" callback.
 */
#ifndef SERVER_HTTP_EXCHANGE_H
#define SERVER_HTTP_EXCHANGE_H

#include "core/pool.h"
#include "server/api/endpoint.h"
#include "server/base/budget.h"
#include "server/base/reply.h"
#include "server/http/conn_deadline.h"
#include "server/http/guards.h"
#include "server/http/inflight.h"
#include "server/http/reply_coding.h"
#include "server/http/routes.h"
#include "server/http/target.h"
#include "server/http/trace.h"
#include "server/obs/access_log.h"
#include "server/setup/config.h"
#include "server/setup/cpu_pin.h"

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Logged (never sent) when the client left before its reply: nginx's 499. */
#define HTTP_STATUS_CLIENT_GONE 499
/* Room for the value of the request header a route hands its job: a byte
 * count (20 digits at most); a longer value is handed over empty, which
 * the job refuses. */
#define HTTP_JOB_HEADER_MAX 32

/* The server daemon.h hands out, opaque there; its files read it here.
 * (The typedef repeats daemon.h's, as C11 allows, so that this header
 * needs nothing of the lifecycle's.) */
typedef struct http_server http_server;
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
    inflight *computing; /* the computations a client or SIGTERM may stop */
    atomic_bool draining;
    atomic_bool abandon; /* grace is over: answer queued jobs with 503 */
    atomic_ullong next_request_id;
    cpu_pin_plan event_cpus; /* --pin-event-threads: who gets which CPU */
};

typedef enum {
    REQ_RECEIVING, /* headers seen, body arriving            */
    REQ_HANDING,   /* whole, for a pool job on the next call */
    REQ_WORKING,   /* suspended, a pool job owns the request */
    REQ_REPLIED,   /* reply ready to queue                   */
} request_state;

typedef struct {
    http_server *srv;
    struct MHD_Connection *conn;
    const route *route;     /* NULL: no such path */
    target_form target;     /* the request target's form (target.h) */
    const char *target_why; /* why a TARGET_INVALID one is refused */
    const char *method;
    char path[128];
    char job_header[HTTP_JOB_HEADER_MAX]; /* the route's job_header */
    bool has_job_header;
    char id[ACCESS_LOG_ID_MAX];
    const char *id_replaced;  /* why the client's X-Request-ID was, or NULL */
    trace_context trace;      /* its W3C trace and the service's span */
    char origin_allowed[256]; /* Access-Control-Allow-Origin value or "" */
    request_state state;
    bool discard_body; /* an early error is waiting; drop the body */
    bool close;        /* close the connection after the answer */
    conn_watch *watch; /* this connection's deadline, may be NULL */
    int fd;            /* the client's socket, to notice it hanging up */
    bool interim_ok;   /* HTTP/1.1: an interim 1xx may precede the reply */
    size_t discarded;  /* body bytes dropped after an early answer */
    struct content_coding *coding; /* the body's inflater, or NULL */
    char *body;
    size_t body_len, body_cap;
    size_t upload_reserved; /* the body buffer's bytes in the budget */
    size_t parse_reserved;  /* what parsing the body may take */
    void *deferred;         /* the fast lane's decoding, for the job */
    const char *lane;       /* "inline" or "pool" once computed, for the log */
    reply rep;
    reply_accept accept;           /* what Accept-Encoding allows the reply */
    bool coded;                    /* rep went through reply_coding_apply() */
    size_t bytes_out;              /* the body's length, once queued */
    unsigned long long acked_base; /* the socket's bytes acked at queueing */
    bool acked_known;
    api_attention_stats stats;
    struct attn_stop stop;  /* read by the computation (core/attn_stop.h) */
    inflight_entry watched; /* listed while it computes on a worker */
    const char *stopped;    /* why the computation stopped, for the log */
    double t_start, t_received, t_queued, t_work_start, t_work_end;
} request;

/* answer.c: libmicrohttpd's access handler (cls is the server). */
enum MHD_Result answer_access(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls);

/* upload.c: a body of `declared` bytes is coming: refused (413) over
 * --max-body, and (503) when the budget cannot hold it and what parsing it
 * needs now; else both are reserved and the body allocated in one piece.
 * False when refused (req->rep is set, req->state REQ_REPLIED). */
bool upload_accept(request *req, unsigned long long declared);
/* upload.c: appends a chunk of the body, its buffer and the buffer's
 * parsing reserved as it grows; false when refused (413, 503), with what
 * the request held given back. */
bool upload_append(request *req, const char *data, size_t size);
/* upload.c: the body has arrived: what is reserved for its parsing is cut
 * down to its length. */
void upload_fit_parsing(request *req);
/* upload.c: gives back the memory reserved for the body and its parsing. */
void upload_release(request *req);

/* content_coding.c: reads the request's Content-Encoding; false, answered
 * 415, when the server does not decode it (gzip and deflate it does). */
bool coding_begin(request *req, struct MHD_Connection *conn);
/* content_coding.c: inflates a chunk of the body into it (through
 * upload_append()); false when refused (413, 503, 400). */
bool coding_append(request *req, const char *data, size_t size);
/* content_coding.c: the body has arrived; false, answered 400, when its
 * compressed stream did not end. */
bool coding_finish(request *req);
/* content_coding.c: frees the inflater, if any. */
void coding_free(request *req);

/* lanes.c: the body has arrived (and is reserved): the request is answered
 * in its route's fast lane, or left REQ_HANDING for a pool job. */
enum MHD_Result lanes_start(request *req);
/* lanes.c: the call after lanes_start() left the request REQ_HANDING: the
 * connection is suspended and the request handed to a pool job. */
enum MHD_Result lanes_hand_over(request *req);

/* reply_queue.c: queues req->rep on its connection. */
enum MHD_Result reply_queue(request *req);

/* completion.c: called just before the reply is queued: notes what the
 * client has acknowledged so far, from which what reached it is worked
 * out when the request completes. */
void completion_note_acked(request *req);
/* completion.c: libmicrohttpd's "request completed" callback (cls is the
 * server). */
void completion_request_completed(void *cls, struct MHD_Connection *conn,
                                  void **con_cls,
                                  enum MHD_RequestTerminationCode toe);

#endif
