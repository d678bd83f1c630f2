/*
 * attn_stop.c - the stop flag and deadline of a forward pass (attn_stop.h).
 */
#include "core/attn_stop.h"

#include <time.h>

double attn_stop_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void attn_stop_init(struct attn_stop *s, double deadline)
{
    atomic_init(&s->reason, ATTN_RUN);
    s->deadline = deadline;
}

void attn_stop_cancel(struct attn_stop *s, attn_stop_reason why)
{
    int expected = ATTN_RUN;
    atomic_compare_exchange_strong(&s->reason, &expected, (int)why);
}

attn_stop_reason attn_stop_check(struct attn_stop *s)
{
    if (!s)
        return ATTN_RUN;
    int why = atomic_load_explicit(&s->reason, memory_order_relaxed);
    if (why != ATTN_RUN)
        return (attn_stop_reason)why;
    if (s->deadline > 0 && attn_stop_now() >= s->deadline) {
        attn_stop_cancel(s, ATTN_STOP_DEADLINE);
        return (attn_stop_reason)atomic_load(&s->reason);
    }
    return ATTN_RUN;
}

bool attn_stop_cancelled(struct attn_stop *s)
{
    return s && atomic_load_explicit(&s->reason, memory_order_relaxed) ==
                    ATTN_STOP_CANCELLED;
}
