/*
 * cpu_pin.c - threads pinned one to a CPU of the allowed set (cpu_pin.h).
 */
#include "server/setup/cpu_pin.h"

bool cpu_pin_plan_init(cpu_pin_plan *plan)
{
    CPU_ZERO(&plan->allowed);
    atomic_init(&plan->taken, 0);
    if (sched_getaffinity(0, sizeof plan->allowed, &plan->allowed) != 0)
        plan->count = 0;
    else
        plan->count = CPU_COUNT(&plan->allowed);
    return plan->count > 0;
}

/* The k-th CPU (from 0, ascending) of the set, or -1. */
static int nth_cpu(const cpu_set_t *set, int k)
{
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, set) && k-- == 0)
            return cpu;
    return -1;
}

int cpu_pin_this_thread(cpu_pin_plan *plan)
{
    if (plan->count <= 0)
        return -1;
    unsigned k = atomic_fetch_add(&plan->taken, 1);
    int cpu = nth_cpu(&plan->allowed, (int)(k % (unsigned)plan->count));
    if (cpu < 0)
        return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
}
