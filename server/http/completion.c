/*
 * completion.c - a request's end: what reached the client, the access log
 * line and the metrics, and everything it held given back.
 *
 * DESIGN
 * libmicrohttpd calls the "request completed" callback once per request,
 * when its reply has been sent or its connection has closed; the request
 * is freed there, its reply too (and with it the bytes the reply kept in
 * the memory budget).  A request the library answered itself, before the
 * access handler saw it, is logged and counted here too.
 */
#include "server/http/exchange.h"

#include "server/base/block_cache.h"
#include "server/base/clock.h"
#include "server/obs/metrics.h"

#include <arpa/inet.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Replies shorter than this go to the kernel in one send (its smallest
 * socket send buffer, tcp_wmem's default): they are not cut off halfway, so
 * the bytes the client acknowledged before them are not asked for (a
 * getsockopt per reply, a visible share of a lesson-sized request's CPU:
 * docs/performance.md, "The server's constants"); one cut off anyway
 * reports 0 bytes out. */
#define HTTP_ACKED_MIN_BYTES ((size_t)16 << 10)

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

void completion_note_acked(request *req)
{
    req->acked_known = req->rep.body_len >= HTTP_ACKED_MIN_BYTES &&
                       socket_bytes_acked(req->fd, &req->acked_base);
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

/* The last client address this event thread wrote as text: clients come
 * back on keep-alive connections, and inet_ntop() cost about 1 % of a
 * lesson-sized request (docs/performance.md, "What a request costs"). */
static _Thread_local struct {
    sa_family_t family;
    unsigned char addr[sizeof(struct in6_addr)];
    char text[INET6_ADDRSTRLEN];
} last_client;

/* The client's address as text (IPv4 or IPv6), or NULL; the text lives
 * until this thread's next call. */
static const char *client_address(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = info ? info->client_addr : NULL;
    if (!sa)
        return NULL;
    const void *addr =
        sa->sa_family == AF_INET
            ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
        : sa->sa_family == AF_INET6
            ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
            : NULL;
    if (!addr)
        return NULL;
    size_t size = sa->sa_family == AF_INET ? sizeof(struct in_addr)
                                           : sizeof(struct in6_addr);
    if (last_client.family == sa->sa_family &&
        memcmp(last_client.addr, addr, size) == 0)
        return last_client.text;
    last_client.family = AF_UNSPEC;
    if (!inet_ntop(sa->sa_family, addr, last_client.text,
                   sizeof last_client.text))
        return NULL;
    memcpy(last_client.addr, addr, size);
    last_client.family = sa->sa_family;
    return last_client.text;
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
        .client = client_address(conn),
        .completed = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK,
    };
    access_log_write(&entry);
    metrics_record(routes_index(NULL), entry.status, 0, 0, 0);
}

void completion_request_completed(void *cls, struct MHD_Connection *conn,
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
        .id_replaced = req->id_replaced,
        .trace_id = req->trace.trace_id,
        .span_id = req->trace.span_id,
        .parent_id = req->trace.parent_id,
        .traceparent_ignored = req->trace.parent_ignored,
        .tracestate_ignored = req->trace.state_ignored,
        .infer_id = req->stats.infer_id[0] ? req->stats.infer_id : NULL,
        .method = req->method,
        .path = req->path,
        .status = req->rep.status,
        .code = req->rep.code,
        .client = client_address(conn),
        .user_agent =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent"),
        .completed = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK,
        .bytes_in = req->body_len,
        .bytes_out = bytes_sent(req, toe),
        .total_seconds = clock_seconds() - req->t_start,
        .n = req->stats.n,
        .d = req->stats.d,
        .heads = req->stats.heads,
        .work = req->stats.work,
        .lane = req->lane,
        .stopped = req->stopped,
    };
    if (req->t_work_start > 0) {
        entry.queue_seconds = req->t_work_start - req->t_queued;
        entry.work_seconds = req->t_work_end - req->t_work_start;
        entry.compute_seconds = req->stats.compute_seconds;
        entry.encode_seconds = req->stats.encode_seconds;
        metrics_record_work(entry.queue_seconds, entry.compute_seconds,
                            entry.encode_seconds);
    }
    access_log_write(&entry);
    metrics_record_refusal(req->rep.code);
    metrics_record(routes_index(req->route), req->rep.status,
                   entry.total_seconds, req->body_len, entry.bytes_out);
    conn_deadlines_rearm(srv->deadlines, req->watch);
    upload_release(req);
    if (req->deferred) /* closed before its job took what was decoded */
        req->route->drop(req->deferred);
    reply_clear(&req->rep); /* and what the reply held of the budget */
    block_free(req->body);
    coding_free(req);
    free(req);
    atomic_fetch_add(&srv->completed_requests, 1);
    atomic_fetch_sub(&srv->active_requests, 1);
}
