#include "server/http/inflight.h"

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* A socket the watcher polls, and the entry it stood for when listed: an
 * entry removed (and its memory reused) meanwhile is told by its serial. */
typedef struct {
    inflight_entry *entry;
    unsigned long long serial;
} watched;

struct inflight {
    pthread_mutex_t lock;
    pthread_t thread;
    int wake_fd; /* an eventfd: the list changed, or stop */
    bool stopping, cancelling_all;
    inflight_entry *head;
    unsigned long long next_serial;
    /* the watcher's own arrays, rebuilt on every round */
    struct pollfd *fds;
    watched *seen;
    size_t cap;
};

static void wake(inflight *in)
{
    uint64_t one = 1;
    ssize_t ignored = write(in->wake_fd, &one, sizeof one);
    (void)ignored;
}

/* Cancels e's stop for `why`, unless something cancelled it already.
 * Under the lock. */
static void cancel(inflight_entry *e, inflight_why why)
{
    int running = INFLIGHT_RUNNING;
    if (atomic_compare_exchange_strong(&e->why, &running, (int)why))
        attn_stop_cancel(e->stop, ATTN_STOP_CANCELLED);
}

static bool listed(const inflight *in, const watched *w)
{
    for (const inflight_entry *e = in->head; e; e = e->next)
        if (e == w->entry)
            return e->serial == w->serial;
    return false;
}

/* The sockets of the computations still running, after the wake eventfd;
 * their count.  Under the lock; false when out of memory. */
static bool gather(inflight *in, size_t *count)
{
    size_t n = 0;
    for (inflight_entry *e = in->head; e; e = e->next) {
        if (atomic_load(&e->why) != INFLIGHT_RUNNING ||
            atomic_load(&e->stop->reason) != ATTN_RUN)
            continue; /* stopped already: nothing more to watch */
        if (n + 1 >= in->cap) {
            size_t cap = in->cap ? 2 * in->cap : 64;
            struct pollfd *fds = realloc(in->fds, cap * sizeof *fds);
            if (fds)
                in->fds = fds;
            watched *seen = realloc(in->seen, cap * sizeof *seen);
            if (seen)
                in->seen = seen;
            if (!fds || !seen)
                return false;
            in->cap = cap;
        }
        /* once the end of its stream was seen, only a reset or an error
         * (always polled) is news */
        in->fds[1 + n] =
            (struct pollfd){.fd = e->fd, .events = e->probed ? 0 : POLLRDHUP};
        in->seen[n] = (watched){e, e->serial};
        n++;
    }
    in->fds[0] = (struct pollfd){.fd = in->wake_fd, .events = POLLIN};
    *count = n;
    return true;
}

/* The client's stream ended: a half-close, or a close() of both
 * directions.  An interim 100 tells them apart (inflight.h): a closed
 * socket answers it with a reset, which the next poll() sees; one that
 * cannot be written whole is a hang-up now.  Under the lock, so that the
 * bytes go out before inflight_remove() returns and never after. */
static void stream_ended(inflight_entry *e)
{
    static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
    e->probed = true;
    if (!e->interim_ok)
        return;
    ssize_t sent =
        send(e->fd, interim, strlen(interim), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent != (ssize_t)strlen(interim))
        cancel(e, INFLIGHT_CLIENT_GONE);
}

/* What poll() said of a listed entry's socket.  Under the lock. */
static void look_at(inflight_entry *e, short revents)
{
    if (revents & (POLLHUP | POLLERR | POLLNVAL))
        cancel(e, INFLIGHT_CLIENT_GONE);
    else if ((revents & POLLRDHUP) && !e->probed)
        stream_ended(e);
}

/* Sleeps in poll() until a listed client hangs up or the list changes. */
static void *watcher_main(void *arg)
{
    inflight *in = arg;
    pthread_mutex_lock(&in->lock);
    while (!in->stopping) {
        size_t n = 0;
        /* out of memory: poll the wake eventfd alone and try again when
         * the list changes */
        if (!gather(in, &n))
            n = 0;
        pthread_mutex_unlock(&in->lock);
        int ready = poll(in->fds, n + 1, -1);
        uint64_t drained;
        if (ready > 0 && (in->fds[0].revents & POLLIN)) {
            ssize_t ignored = read(in->wake_fd, &drained, sizeof drained);
            (void)ignored;
        }
        pthread_mutex_lock(&in->lock);
        for (size_t i = 0; ready > 0 && i < n; i++)
            if (in->fds[1 + i].revents && listed(in, &in->seen[i]))
                look_at(in->seen[i].entry, in->fds[1 + i].revents);
    }
    pthread_mutex_unlock(&in->lock);
    return NULL;
}

inflight *inflight_start(void)
{
    inflight *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->cap = 64;
    in->fds = malloc(in->cap * sizeof *in->fds);
    in->seen = malloc(in->cap * sizeof *in->seen);
    in->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_mutex_init(&in->lock, NULL);
    if (!in->fds || !in->seen || in->wake_fd < 0 ||
        pthread_create(&in->thread, NULL, watcher_main, in) != 0) {
        if (in->wake_fd >= 0)
            close(in->wake_fd);
        pthread_mutex_destroy(&in->lock);
        free(in->fds);
        free(in->seen);
        free(in);
        return NULL;
    }
    return in;
}

void inflight_stop(inflight *in)
{
    if (!in)
        return;
    pthread_mutex_lock(&in->lock);
    in->stopping = true;
    pthread_mutex_unlock(&in->lock);
    wake(in);
    pthread_join(in->thread, NULL);
    close(in->wake_fd);
    pthread_mutex_destroy(&in->lock);
    free(in->fds);
    free(in->seen);
    free(in);
}

void inflight_add(inflight *in, inflight_entry *e, int fd, bool interim_ok,
                  struct attn_stop *stop)
{
    e->fd = fd;
    e->interim_ok = interim_ok;
    e->probed = false;
    e->stop = stop;
    atomic_init(&e->why, INFLIGHT_RUNNING);
    pthread_mutex_lock(&in->lock);
    e->serial = ++in->next_serial;
    e->prev = NULL;
    e->next = in->head;
    if (in->head)
        in->head->prev = e;
    in->head = e;
    if (in->cancelling_all)
        cancel(e, INFLIGHT_SHUTDOWN);
    pthread_mutex_unlock(&in->lock);
    if (fd >= 0)
        wake(in);
}

void inflight_remove(inflight *in, inflight_entry *e)
{
    pthread_mutex_lock(&in->lock);
    if (e->prev)
        e->prev->next = e->next;
    else
        in->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    pthread_mutex_unlock(&in->lock);
    /* the watcher's poll() holds a reference to the socket, which would
     * keep it open (no FIN to the client) after libmicrohttpd closes it:
     * woken, the watcher lets go */
    if (e->fd >= 0)
        wake(in);
}

inflight_why inflight_stopped_why(const inflight_entry *e)
{
    return (inflight_why)atomic_load(&e->why);
}

void inflight_cancel_all(inflight *in)
{
    pthread_mutex_lock(&in->lock);
    in->cancelling_all = true;
    for (inflight_entry *e = in->head; e; e = e->next)
        cancel(e, INFLIGHT_SHUTDOWN);
    pthread_mutex_unlock(&in->lock);
}
