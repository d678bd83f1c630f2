/*
 * main.c - configuration → pool → HTTP daemon → wait for a signal → drain.
 */
#include "../core/pool.h"
#include "blas_setup.h"
#include "config.h"
#include "http.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    config cfg;
    config_action action = config_parse(&cfg, argc, argv);
    if (action != CONFIG_RUN)
        return action == CONFIG_EXIT_OK ? 0 : 2;
    blas_setup_kernels(argv);
    blas_setup_single_threaded();
    json_object_seed(0); /* before any thread uses jansson */

    /* every thread inherits this mask; only sigwait() below sees them */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    pool *workers = pool_create(cfg.threads, cfg.max_queue);
    if (!workers) {
        fprintf(stderr, "cannot start %zu worker threads\n", cfg.threads);
        return 1;
    }
    char err[256];
    http_server *srv = http_start(&cfg, workers, err, sizeof err);
    if (!srv) {
        fprintf(stderr, "%s\n", err);
        pool_destroy(workers);
        return 1;
    }
    printf("attention-server %s listening on http://%s:%u (%zu threads, "
           "BLAS core %s)\n",
           CONFIG_VERSION, cfg.host, http_port(srv), cfg.threads,
           blas_setup_corename());
    fflush(stdout);

    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr, "{\"event\":\"draining\",\"signal\":%d,\"grace_s\":%u}\n",
            sig, cfg.grace);
    http_begin_drain(srv);
    bool idle = http_wait_idle(srv, cfg.grace);
    pool_destroy(workers); /* runs what is queued; every job resumes */
    http_stop(srv);
    fprintf(stderr, "{\"event\":\"stopped\",\"clean\":%s}\n",
            idle ? "true" : "false");
    return 0;
}
