/*
 * test_cpu_pin.c - threads pinned from a plan take the allowed CPUs in
 * ascending order, one each, wrapping around when they outnumber them, and
 * never a CPU outside the set the plan was made with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/setup/cpu_pin.h"

#include <pthread.h>
#include <sched.h>

typedef struct {
    cpu_pin_plan *plan;
    int cpu;       /* what cpu_pin_this_thread() returned */
    cpu_set_t set; /* the thread's CPUs afterwards */
} pinned_thread;

static void *pin_one(void *arg)
{
    pinned_thread *t = arg;
    t->cpu = cpu_pin_this_thread(t->plan);
    sched_getaffinity(0, sizeof t->set, &t->set);
    return NULL;
}

/* Pins `count` threads from plan, one after another. */
static void pin_threads(cpu_pin_plan *plan, pinned_thread *threads, int count)
{
    for (int i = 0; i < count; i++) {
        threads[i].plan = plan;
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, pin_one, &threads[i]), 0);
        pthread_join(th, NULL);
    }
}

/* The k-th CPU of set, ascending. */
static int nth_cpu(const cpu_set_t *set, int k)
{
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, set) && k-- == 0)
            return cpu;
    return -1;
}

static void threads_take_the_allowed_cpus_in_turn_and_wrap(void **state)
{
    (void)state;
    cpu_pin_plan plan;
    assert_true(cpu_pin_plan_init(&plan));
    cpu_set_t allowed;
    assert_int_equal(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int count = CPU_COUNT(&allowed);
    assert_int_equal(plan.count, count);
    /* one more than the CPUs: the last wraps to the first */
    enum { MOST = 9 };
    int threads = count + 1 < MOST ? count + 1 : MOST;
    pinned_thread pinned[MOST];
    pin_threads(&plan, pinned, threads);
    for (int i = 0; i < threads; i++) {
        int want = nth_cpu(&allowed, i % count);
        assert_int_equal(pinned[i].cpu, want);
        assert_int_equal(CPU_COUNT(&pinned[i].set), 1);
        assert_true(CPU_ISSET(want, &pinned[i].set));
    }
}

static void a_plan_keeps_the_set_it_was_made_with(void **state)
{
    (void)state;
    cpu_set_t allowed, last;
    assert_int_equal(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int cpu = nth_cpu(&allowed, CPU_COUNT(&allowed) - 1);
    CPU_ZERO(&last);
    CPU_SET(cpu, &last);
    /* the plan is made on the last CPU alone, as under `taskset -c N` */
    assert_int_equal(sched_setaffinity(0, sizeof last, &last), 0);
    cpu_pin_plan plan;
    bool made = cpu_pin_plan_init(&plan);
    sched_setaffinity(0, sizeof allowed, &allowed);
    assert_true(made);
    pinned_thread pinned[2];
    pin_threads(&plan, pinned, 2); /* threads that may run anywhere */
    for (int i = 0; i < 2; i++)
        assert_int_equal(pinned[i].cpu, cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_take_the_allowed_cpus_in_turn_and_wrap),
        cmocka_unit_test(a_plan_keeps_the_set_it_was_made_with),
    };
    return cmocka_run_group_tests_name("cpu_pin", tests, NULL, NULL);
}
