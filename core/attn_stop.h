/*
 * attn_stop.h - stopping a forward pass from outside it.
 *
 * DESIGN
 * A job carries one attn_stop: whoever waits for the answer (the HTTP layer:
 * a client gone, a shutdown) may cancel it from any thread, and it may hold
 * a deadline.  The passes of attn_forward() read it once per block of work
 * (a row block of a product, a head's block of the fused pass), so a stopped
 * pass returns within one block; the pool's helpers leave the loop too.
 * Reading it is one relaxed atomic load and, with a deadline, one clock read.
 */
#ifndef CORE_ATTN_STOP_H
#define CORE_ATTN_STOP_H

#include <stdatomic.h>
#include <stdbool.h>

/* Why a pass stopped early, or ATTN_RUN while it may go on. */
typedef enum {
    ATTN_RUN = 0,
    ATTN_STOP_CANCELLED, /* attn_stop_cancel(): nobody waits for it   */
    ATTN_STOP_DEADLINE,  /* attn_stop_now() passed the deadline       */
} attn_stop_reason;

struct attn_stop {
    atomic_int reason; /* an attn_stop_reason, set once */
    double deadline;   /* attn_stop_now() seconds, or 0: none */
};

/* Seconds of CLOCK_MONOTONIC, the clock deadlines are written in. */
double attn_stop_now(void);

/* A stop that has not fired, with a deadline (0: none). */
void attn_stop_init(struct attn_stop *s, double deadline);

/* Stops the pass for `why` (the first reason set stays). Any thread. */
void attn_stop_cancel(struct attn_stop *s, attn_stop_reason why);

/* ATTN_RUN, or why the pass must stop now (a passed deadline is recorded
 * as the reason).  NULL never stops. */
attn_stop_reason attn_stop_check(struct attn_stop *s);

/* Whether it was cancelled: nobody waits for the answer any more.  Its
 * deadline is not read, so what comes after a finished pass (the reply's
 * encoding and compression) is not cut by it.  One relaxed load; NULL
 * never stops. */
bool attn_stop_cancelled(struct attn_stop *s);

#endif
