/*
 * main.c - configuration → pool → HTTP daemon → wait for a signal (giving
 * memory back when idle) → drain.
 *
 * The drain: SIGTERM or SIGINT stops accepting (/readyz answers 503) and
 * waits for the requests in flight, --grace seconds at most.  Then, or at
 * once when a second SIGTERM or SIGINT arrives, every computation still
 * running or queued is cancelled (the core leaves its pass within a block
 * of work) and answered 503 draining; the replies get MAIN_LAST_SEND_SECONDS
 * to reach their clients, and the process exits: within grace + 1 s, or
 * 1 s after the second signal.
 */
#include "core/pool.h"
#include "server/base/clock.h"
#include "server/obs/access_log.h"
#include "server/obs/metrics.h"
#include "server/setup/alloc_setup.h"
#include "server/setup/blas_setup.h"
#include "server/setup/build_info.h"
#include "server/setup/config.h"
#include "server/http/daemon.h"
#include "server/base/parse_budget.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* SIGTERM/SIGINT are caught by a handler, not blocked and sigwait()ed:
 * OpenBLAS starts threads when it loads, before main() could block anything,
 * and a signal delivered to one of those would kill the process.  The handler
 * (on whatever thread) writes the signal number to a pipe main() reads.
 * SIGHUP, which would kill the process and drop the requests in flight, is
 * caught the same way and ignored: the server has no configuration to
 * reload, and a closed terminal or a supervisor's reload request must not
 * stop it (SIGTERM drains). */
static int stop_pipe[2] = {-1, -1};

/* How often main() looks at the server while it waits for a signal. */
#define MAIN_TICK_MS 250
/* How often the drain looks for the requests in flight to be done. */
#define MAIN_DRAIN_TICK_MS 20
/* After the cancellation, the time the replies (503 draining, and every
 * reply computed before it) have to reach their clients: the computations
 * stop within a block of work (milliseconds), and a second and the
 * process's own teardown bound the exit. */
#define MAIN_LAST_SEND_SECONDS 0.8

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    ssize_t ignored = write(stop_pipe[1], &byte, 1);
    (void)ignored;
    errno = saved;
}

static bool install_signal_handlers(void)
{
    if (pipe2(stop_pipe, O_CLOEXEC) != 0)
        return false;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGTERM, &sa, NULL) == 0 &&
           sigaction(SIGINT, &sa, NULL) == 0 &&
           sigaction(SIGHUP, &sa, NULL) == 0;
}

/* Gives freed memory back once the server has been idle (no request in
 * flight, none completed) for ALLOC_SETUP_IDLE_SECONDS, once per quiet
 * spell, and while busy when the resident set passes the budget by
 * ALLOC_SETUP_BUSY_MARGIN (alloc_setup.h). */
typedef struct {
    unsigned long long seen, trimmed;
    double quiet_since, busy_trimmed_at;
    size_t budget;
} idle_trim;

static void give_back_when_idle(http_server *srv, idle_trim *t)
{
    unsigned long long completed;
    bool idle = http_idle(srv, &completed);
    double now = clock_seconds();
    if (!idle || completed != t->seen) {
        t->seen = completed;
        t->quiet_since = now;
        if (now - t->busy_trimmed_at >= ALLOC_SETUP_BUSY_SECONDS &&
            alloc_setup_resident_bytes() >
                t->budget + ALLOC_SETUP_BUSY_MARGIN) {
            alloc_setup_give_back();
            t->busy_trimmed_at = now;
        }
    } else if (completed != t->trimmed &&
               now - t->quiet_since >= ALLOC_SETUP_IDLE_SECONDS) {
        alloc_setup_give_back();
        t->trimmed = completed;
    }
}

/* SIGTERM's or SIGINT's number when one arrives within timeout_ms, else 0
 * (SIGHUP is logged and ignored). */
static int next_stop_signal(int timeout_ms)
{
    struct pollfd p = {.fd = stop_pipe[0], .events = POLLIN};
    unsigned char sig = 0;
    if (poll(&p, 1, timeout_ms) <= 0 || read(stop_pipe[0], &sig, 1) != 1)
        return 0;
    if (sig != SIGHUP)
        return sig;
    char event[64];
    snprintf(event, sizeof event,
             "{\"event\":\"signal_ignored\",\"signal\":%d}", sig);
    access_log_event(event);
    return 0;
}

/* Blocks until SIGTERM or SIGINT arrives, giving memory back when idle;
 * returns the signal's number. */
static int serve_until_stop_signal(http_server *srv, size_t budget)
{
    idle_trim trim = {.budget = budget};
    for (;;) {
        int sig = next_stop_signal(MAIN_TICK_MS);
        if (sig)
            return sig;
        give_back_when_idle(srv, &trim);
    }
}

/* Waits for the requests in flight to be done, `grace` seconds at most;
 * a second SIGTERM or SIGINT ends the wait (its number in *second).  True
 * when they are done. */
static bool wait_in_flight(http_server *srv, unsigned grace, int *second)
{
    double deadline = clock_seconds() + grace;
    unsigned long long completed;
    while (!http_idle(srv, &completed)) {
        double left_ms = (deadline - clock_seconds()) * 1000;
        if (left_ms <= 0)
            return false;
        *second =
            next_stop_signal(left_ms < MAIN_DRAIN_TICK_MS ? (int)left_ms + 1
                                                          : MAIN_DRAIN_TICK_MS);
        if (*second)
            return false;
    }
    return true;
}

/* The drain (above); true when every request finished on its own. */
static bool drain(http_server *srv, unsigned grace)
{
    http_begin_drain(srv);
    int second = 0;
    if (wait_in_flight(srv, grace, &second))
        return true;
    char event[96];
    if (second)
        snprintf(event, sizeof event,
                 "{\"event\":\"cancelling\",\"signal\":%d}", second);
    else
        snprintf(event, sizeof event,
                 "{\"event\":\"cancelling\",\"grace_over_s\":%u}", grace);
    access_log_event(event);
    http_cancel_all(srv);
    http_wait_idle(srv, MAIN_LAST_SEND_SECONDS);
    return false;
}

int main(int argc, char **argv)
{
    config cfg;
    config_action action = config_parse(&cfg, argc, argv);
    if (action != CONFIG_RUN)
        return action == CONFIG_EXIT_OK ? 0 : 2;
    blas_setup_kernels(argv);
    build_info info = build_info_apply(cfg.kernels);
    metrics_set_build_info(info.arch, info.simd, info.products);
    access_log_start(cfg.access_log);
    blas_setup_single_threaded();
    alloc_setup_reuse_large_buffers();
    json_object_seed(0);    /* before any thread uses jansson */
    parse_budget_install(); /* jansson's allocations charge the parse */

    signal(SIGPIPE, SIG_IGN);
    if (!install_signal_handlers()) {
        fprintf(stderr, "cannot install signal handlers\n");
        return 1;
    }

    pool *workers = pool_create(cfg.threads, cfg.max_queue);
    if (!workers) {
        fprintf(stderr, "cannot start %zu worker threads\n", cfg.threads);
        return 1;
    }
    bool spread = cfg.spread_loops && pool_spread_loops(workers);
    char err[256];
    http_server *srv = http_start(&cfg, workers, err, sizeof err);
    if (!srv) {
        fprintf(stderr, "%s\n", err);
        pool_destroy(workers);
        return 1;
    }
    printf("attention-server %s listening on http://%s:%u (%zu threads%s%s, "
           "BLAS core %s)\n",
           CONFIG_VERSION, cfg.host, http_port(srv), cfg.threads,
           spread ? ", loops spread over CPUs" : "",
           cfg.pin_event_threads ? ", event threads pinned one per CPU" : "",
           blas_setup_corename());
    fflush(stdout);

    int sig = serve_until_stop_signal(srv, cfg.memory_budget);
    char event[96];
    snprintf(event, sizeof event,
             "{\"event\":\"draining\",\"signal\":%d,\"grace_s\":%u}", sig,
             cfg.grace);
    access_log_event(event);
    bool idle = drain(srv, cfg.grace);
    pool_destroy(workers); /* runs what is queued; every job resumes */
    http_stop(srv);
    /* every request's line is logged by now (http_stop() completed the
     * last ones); the event follows them and the writer writes it all */
    access_log_event(idle ? "{\"event\":\"stopped\",\"clean\":true}"
                          : "{\"event\":\"stopped\",\"clean\":false}");
    access_log_stop();
    return 0;
}
