/*
 * inflight.h - the computations in flight, and what stops them.
 *
 * DESIGN
 * A request handed to a pool job has its connection suspended: libmicrohttpd
 * no longer looks at the socket, so a client that hangs up goes unnoticed
 * until the job is done.  Each such computation is listed here with its
 * socket and its stop (core/attn_stop.h); a thread of this module sleeps in
 * poll() on the listed sockets and, when one hangs up, cancels that stop: the
 * core leaves its pass within a block of work.  At the end of the shutdown's
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
    struct attn_stop *stop;
    atomic_int why; /* an inflight_why, set once before the stop fires */
    unsigned long long serial;
    struct inflight_entry *prev, *next;
} inflight_entry;

/* Starts the watching thread; NULL on failure. */
inflight *inflight_start(void);
/* Stops it; every entry must have been removed. */
void inflight_stop(inflight *in);

/* Lists e, for the client on socket fd, whose computation reads stop.  When
 * cancel_all() has run, the stop is cancelled at once. */
void inflight_add(inflight *in, inflight_entry *e, int fd,
                  struct attn_stop *stop);
/* Unlists e; after this, nothing of the module touches e or its stop. */
void inflight_remove(inflight *in, inflight_entry *e);
/* Why e's stop was cancelled by this module, or INFLIGHT_RUNNING. */
inflight_why inflight_stopped_why(const inflight_entry *e);

/* Cancels every listed stop, and every one added from now on, as
 * INFLIGHT_SHUTDOWN. */
void inflight_cancel_all(inflight *in);

#endif
