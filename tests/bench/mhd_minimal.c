/*
 * mhd_minimal.c - the ceiling of this HTTP stack: a libmicrohttpd server
 * that reads the upload and answers a constant 2 KB body, nothing else.
 *
 *     mhd_minimal            prints "listening on http://127.0.0.1:PORT",
 *                            serves until SIGTERM or SIGINT
 *
 * Its internal thread pool has one event thread per CPU and polls with
 * epoll, as a libmicrohttpd server with nothing to compute would be set
 * up; run_bench.py prints it beside attention-server and nginx.
 */
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The reply: about the size of lesson 002's answer. */
#define MINIMAL_REPLY_BYTES 2048

static char reply_body[MINIMAL_REPLY_BYTES];

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload_data;
    if (!*con_cls) { /* headers: queueing now would close the connection */
        *con_cls = conn;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a chunk of the body: read and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(
        sizeof reply_body, reply_body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

int main(void)
{
    memset(reply_body, ' ', sizeof reply_body);
    reply_body[0] = '{', reply_body[sizeof reply_body - 1] = '}';
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* the event threads too */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0,
                         NULL, NULL, answer, NULL, MHD_OPTION_THREAD_POOL_SIZE,
                         (unsigned)(cpus > 0 ? cpus : 1), MHD_OPTION_END);
    if (!d)
        return 1;
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("mhd_minimal listening on http://127.0.0.1:%u\n",
           info ? info->port : 0);
    fflush(stdout);
    int sig;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    return 0;
}
