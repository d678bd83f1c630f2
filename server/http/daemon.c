/*
 * daemon.c - the daemon's lifecycle: start, drain, stop.
 *
 * DESIGN
 * libmicrohttpd runs one event thread per CPU, each serving the
 * connections it accepted; what each call for a request does is in
 * answer.c, and exchange.h says which file does what.  Here the daemon is
 * started with its callbacks, connections are counted and watched
 * (conn_deadline.c), and a drain stops accepting, waits for the requests
 * in flight and then tells the jobs still queued to answer 503.
 */
#include "server/http/daemon.h"

#include "server/http/exchange.h"
#include "server/base/clock.h"
#include "server/http/framing.h"
#include "server/http/static_coding.h"
#include "server/obs/metrics.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* How often http_wait_idle() looks at the requests in flight. */
#define HTTP_IDLE_POLL_NS (20 * 1000 * 1000)

/* --pin-event-threads: libmicrohttpd has no hook when it starts a thread,
 * so each event thread pins itself on the first connection it accepts
 * (the notification runs on that thread); a thread that never accepts one
 * is never pinned, and takes no CPU from the others' turns. */
static void pin_event_thread(http_server *srv)
{
    static _Thread_local bool pinned;
    if (pinned)
        return;
    pinned = true;
    cpu_pin_this_thread(&srv->event_cpus);
}

static void connection_notify(void *cls, struct MHD_Connection *conn,
                              void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    http_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        if (srv->cfg->pin_event_threads)
            pin_event_thread(srv);
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

/* Metrics count requests under the routes' labels (their paths). */
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
        labels[i] = routes_label(routes_at(i));
    return metrics_set_routes(labels, count);
}

static http_server *start_failed(http_server *srv)
{
    conn_deadlines_stop(srv->deadlines);
    inflight_stop(srv->computing);
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
    srv->computing = inflight_start();
    if (!srv->computing) {
        snprintf(err, err_size, "cannot start the hang-up watcher");
        return start_failed(srv);
    }
    atomic_init(&srv->next_request_id, 1);
    if (cfg->pin_event_threads && !cpu_pin_plan_init(&srv->event_cpus)) {
        snprintf(err, err_size,
                 "--pin-event-threads: cannot read the CPUs "
                 "this process may use");
        return start_failed(srv);
    }
    static_coding_init(); /* out of memory: coded per request instead */
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
         * (non-blocking, so at worst in vain): less CPU per lesson-sized
         * request (docs/performance.md, "The server's constants") */
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_TURBO |
            MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)cfg->port, NULL, NULL, answer_access, srv,
        /* one event thread per CPU, each serving the connections it
         * accepted: a fast-lane request waits behind no other thread */
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->event_threads,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, completion_request_completed, srv,
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, FRAMING_CONNECTION_MEMORY,
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

void http_cancel_all(http_server *srv)
{
    atomic_store(&srv->abandon, true);
    inflight_cancel_all(srv->computing);
}

bool http_wait_idle(http_server *srv, double seconds)
{
    double deadline = clock_seconds() + seconds;
    while (atomic_load(&srv->active_requests) > 0) {
        if (clock_seconds() >= deadline)
            return false;
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
    inflight_stop(srv->computing);
    free(srv);
}
