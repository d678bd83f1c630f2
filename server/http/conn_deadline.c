#include "server/http/conn_deadline.h"

#include "server/base/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

/* How often the watcher looks: a deadline is enforced within this much. */
#define CONN_DEADLINE_TICK_MS 250

struct conn_watch {
    int fd;
    bool armed;
    bool expired;
    double since;
    double limit; /* seconds from `since`: the request's or the reply's */
    conn_watch *prev, *next;
};

struct conn_deadlines {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool stopping;
    double timeout;
    conn_watch *head;
    atomic_ullong expired;
};

static void *watcher_main(void *arg)
{
    conn_deadlines *cd = arg;
    pthread_mutex_lock(&cd->lock);
    while (!cd->stopping) {
        double now = clock_seconds();
        for (conn_watch *w = cd->head; w; w = w->next)
            if (w->armed && !w->expired && now - w->since > w->limit) {
                /* the fd is still open: close() happens only after
                 * conn_deadlines_close(), which needs this lock.  With
                 * linger 0 that close() resets the connection and drops
                 * what the kernel still holds to send, instead of sending
                 * it on at the slow reader's pace */
                struct linger reset = {.l_onoff = 1, .l_linger = 0};
                setsockopt(w->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
                shutdown(w->fd, SHUT_RDWR);
                w->expired = true;
                atomic_fetch_add(&cd->expired, 1);
            }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += CONN_DEADLINE_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&cd->wake, &cd->lock, &until);
    }
    pthread_mutex_unlock(&cd->lock);
    return NULL;
}

conn_deadlines *conn_deadlines_start(unsigned timeout_seconds)
{
    conn_deadlines *cd = calloc(1, sizeof *cd);
    if (!cd)
        return NULL;
    pthread_mutex_init(&cd->lock, NULL);
    pthread_cond_init(&cd->wake, NULL);
    cd->timeout = timeout_seconds;
    atomic_init(&cd->expired, 0);
    if (pthread_create(&cd->thread, NULL, watcher_main, cd) != 0) {
        free(cd);
        return NULL;
    }
    return cd;
}

void conn_deadlines_stop(conn_deadlines *cd)
{
    if (!cd)
        return;
    pthread_mutex_lock(&cd->lock);
    cd->stopping = true;
    pthread_cond_signal(&cd->wake);
    pthread_mutex_unlock(&cd->lock);
    pthread_join(cd->thread, NULL);
    while (cd->head) {
        conn_watch *next = cd->head->next;
        free(cd->head);
        cd->head = next;
    }
    pthread_mutex_destroy(&cd->lock);
    pthread_cond_destroy(&cd->wake);
    free(cd);
}

conn_watch *conn_deadlines_open(conn_deadlines *cd, int fd)
{
    conn_watch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fd = fd;
    w->armed = true;
    w->since = clock_seconds();
    w->limit = cd->timeout;
    pthread_mutex_lock(&cd->lock);
    w->next = cd->head;
    if (cd->head)
        cd->head->prev = w;
    cd->head = w;
    pthread_mutex_unlock(&cd->lock);
    return w;
}

void conn_deadlines_disarm(conn_deadlines *cd, conn_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&cd->lock);
    w->armed = false;
    pthread_mutex_unlock(&cd->lock);
}

void conn_deadlines_sending(conn_deadlines *cd, conn_watch *w, double seconds)
{
    if (!w)
        return;
    pthread_mutex_lock(&cd->lock);
    w->armed = true;
    w->since = clock_seconds();
    w->limit = seconds;
    pthread_mutex_unlock(&cd->lock);
}

void conn_deadlines_rearm(conn_deadlines *cd, conn_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&cd->lock);
    w->armed = true;
    w->since = clock_seconds();
    w->limit = cd->timeout;
    pthread_mutex_unlock(&cd->lock);
}

void conn_deadlines_close(conn_deadlines *cd, conn_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&cd->lock);
    if (w->prev)
        w->prev->next = w->next;
    else
        cd->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    pthread_mutex_unlock(&cd->lock);
    free(w);
}

unsigned long long conn_deadlines_expired(conn_deadlines *cd)
{
    return cd ? atomic_load(&cd->expired) : 0;
}
