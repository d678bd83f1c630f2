/*
 * cpu_pin.h - threads that each stay on one CPU of the process's allowed
 * set, handed out in turn.
 *
 * DESIGN
 * The allowed set is read once, when the plan is made (the CPUs the
 * process was started on: a cpuset, `taskset`, a container's limit), and
 * each thread that asks takes the next CPU of it; with more threads than
 * CPUs they wrap around.  A thread is pinned by itself (sched_setaffinity
 * of the calling thread), so the code that starts it need not know.
 * Knows nothing of HTTP: the daemon's event threads call it
 * (--pin-event-threads, server/http/daemon.c).
 */
#ifndef SERVER_CPU_PIN_H
#define SERVER_CPU_PIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    cpu_set_t allowed; /* the process's CPUs when the plan was made */
    int count;         /* CPUs in it */
    atomic_uint taken; /* threads pinned so far */
} cpu_pin_plan;

/* Reads the calling thread's allowed set into plan; false (plan unusable)
 * when it cannot be read. */
bool cpu_pin_plan_init(cpu_pin_plan *plan);

/* Pins the calling thread to the plan's next CPU (the k-th thread pinned
 * gets CPU k mod count of the allowed set, counted in ascending order).
 * Returns that CPU's number, or -1 when the thread could not be pinned
 * (it then runs where it ran). */
int cpu_pin_this_thread(cpu_pin_plan *plan);

#endif
