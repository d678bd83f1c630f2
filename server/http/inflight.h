/*
 * inflight.h - the computations in flight, and what stops them.
 *
 * DESIGN
 * A request handed to a pool job has its connection suspended: libmicrohttpd
 * no longer looks at the socket, so a client that hangs up goes unnoticed
 * until the job is done.  Each such computation is listed here with its
 * socket and its stop (core/attn_stop.h); a thread of this module sleeps in
 * poll() on the listed sockets and, when one hangs up, cancels that stop: the
 * core leaves its pass within a block of work.  A hang-up is a reset, an
 * error or both directions shut (POLLHUP, POLLERR), or a failed write.  The
 * end of a client's stream alone may be a half-close (shutdown(SHUT_WR) once
 * the request is sent, as `nc -N` does) or a close() of both directions: to
 * an HTTP/1.1 client the watcher then writes an interim "100 Continue",
 * which a half-closed client reads and a closed socket answers with a reset
 * (RFC 9110 15.2 allows a 1xx before any final response, and no 1xx to an
 * HTTP/1.0 client: such a client is taken as gone only on a reset or when
 * its reply cannot be written).  At the end of the shutdown's
 * grace every listed stop is cancelled too.  Each entry says which of the
 * two stopped it, so that the HTTP layer answers 499 (logged only: nobody
 * reads it) or 503 draining.
 */
#ifndef SERVER_HTTP_INFLIGHT_H
#define SERVER_HTTP_INFLIGHT_H

#include "core/attn_stop.h"

#include <stdatomic.h>
#include <stdbool.h>

typedef struct inflight inflight;

/* Why a listed computation was cancelled. */
typedef enum {
    INFLIGHT_RUNNING = 0,
    INFLIGHT_CLIENT_GONE, /* its client hung up                    */
    INFLIGHT_SHUTDOWN,    /* the server stopped waiting (SIGTERM)   */
} inflight_why;

/* One computation; lives in its request.  Fields are the module's. */
typedef struct inflight_entry {
    int fd;
    bool interim_ok; /* an interim 100 may be written to fd */
    bool probed;     /* the end of its stream was seen (watcher only) */
    struct attn_stop *stop;
    atomic_int why; /* an inflight_why, set once before the stop fires */
    unsigned long long serial;
    struct inflight_entry *prev, *next;
} inflight_entry;

/* Starts the watching thread; NULL on failure. */
inflight *inflight_start(void);
/* Stops it; every entry must have been removed. */
void inflight_stop(inflight *in);

/* Lists e, for the client on socket fd, whose computation reads stop;
 * interim_ok when an interim 100 may be written to fd (HTTP/1.1) until e is
 * removed.  When cancel_all() has run, the stop is cancelled at once. */
void inflight_add(inflight *in, inflight_entry *e, int fd, bool interim_ok,
                  struct attn_stop *stop);
/* Unlists e; after this, nothing of the module touches e or its stop. */
void inflight_remove(inflight *in, inflight_entry *e);
/* Why e's stop was cancelled by this module, or INFLIGHT_RUNNING. */
inflight_why inflight_stopped_why(const inflight_entry *e);

/* Cancels every listed stop, and every one added from now on, as
 * INFLIGHT_SHUTDOWN. */
void inflight_cancel_all(inflight *in);

#endif
