/*
 * test_pool.c - the pool runs every job once, runs every index of a parallel
 * loop once, refuses jobs beyond its queue, survives nested loops, and lets
 * a job queued behind a big loop start before the loop ends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void count_job(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

static void every_submitted_job_runs_once(void **state)
{
    (void)state;
    atomic_int runs = 0;
    pool *p = pool_create(3, 1000);
    assert_non_null(p);
    for (int i = 0; i < 500; i++)
        assert_int_equal(pool_submit(p, count_job, &runs), 0);
    pool_destroy(p); /* runs what is queued */
    assert_int_equal(atomic_load(&runs), 500);
}

static void mark_index(void *ctx, size_t i, size_t worker)
{
    (void)worker;
    atomic_fetch_add(&((atomic_int *)ctx)[i], 1);
}

static void parallel_for_covers_each_index_exactly_once(void **state)
{
    (void)state;
    pool *p = pool_create(2, 16);
    enum { COUNT = 10007 };
    atomic_int *hits = calloc(COUNT, sizeof *hits);
    pool_parallel_for(p, COUNT, mark_index, hits);
    for (int i = 0; i < COUNT; i++)
        assert_int_equal(atomic_load(&hits[i]), 1);
    free(hits);
    pool_destroy(p);
}

static void parallel_for_without_pool_runs_on_the_caller(void **state)
{
    (void)state;
    atomic_int hits[5] = {0};
    pool_parallel_for(NULL, 5, mark_index, hits);
    for (int i = 0; i < 5; i++)
        assert_int_equal(atomic_load(&hits[i]), 1);
}

typedef struct {
    size_t threads;
    atomic_int busy[8]; /* per worker id: how many threads use it now */
    atomic_int clash;
} worker_ids;

static void check_worker_id(void *ctx, size_t i, size_t worker)
{
    (void)i;
    worker_ids *ids = ctx;
    if (worker > ids->threads || atomic_fetch_add(&ids->busy[worker], 1) != 0)
        atomic_store(&ids->clash, 1);
    struct timespec pause = {0, 10000};
    nanosleep(&pause, NULL);
    atomic_fetch_sub(&ids->busy[worker], 1);
}

static void worker_ids_are_in_range_and_never_shared(void **state)
{
    (void)state;
    pool *p = pool_create(3, 16);
    worker_ids ids = {.threads = 3};
    pool_parallel_for(p, 400, check_worker_id, &ids);
    assert_int_equal(atomic_load(&ids.clash), 0);
    pool_destroy(p);
}

typedef struct {
    pool *p;
    atomic_int inner_hits;
} nested;

static void inner_index(void *ctx, size_t i, size_t worker)
{
    (void)i;
    (void)worker;
    atomic_fetch_add(&((nested *)ctx)->inner_hits, 1);
}

static void nested_job(void *arg)
{
    nested *n = arg;
    pool_parallel_for(n->p, 100, inner_index, n);
}

static void
jobs_using_parallel_for_on_every_worker_do_not_deadlock(void **state)
{
    (void)state;
    nested n = {0};
    /* two workers, each job runs a loop of its own while the other worker is
     * busy with a job too */
    n.p = pool_create(2, 64);
    for (int i = 0; i < 40; i++)
        assert_int_equal(pool_submit(n.p, nested_job, &n), 0);
    pool_destroy(n.p);
    assert_int_equal(atomic_load(&n.inner_hits), 40 * 100);
}

static void block_job(void *arg)
{
    while (!atomic_load((atomic_int *)arg))
        usleep(1000);
}

static void a_full_queue_refuses_instead_of_growing(void **state)
{
    (void)state;
    atomic_int release = 0;
    pool *p = pool_create(1, 2);
    assert_int_equal(pool_submit(p, block_job, &release), 0);
    while (pool_queued(p) != 0) /* the worker took it */
        usleep(1000);
    assert_int_equal(pool_submit(p, block_job, &release), 0);
    assert_int_equal(pool_submit(p, block_job, &release), 0);
    assert_int_equal(pool_submit(p, block_job, &release), -1);
    assert_int_equal(pool_queued(p), 2);
    atomic_store(&release, 1);
    pool_destroy(p);
}

/* A loop whose caller waits, index by index, until a helper has run one
 * and said on which CPU (or HELPER_WAIT_MS passed): on a loaded machine the
 * helper may wait long for a CPU, and a loop the caller finished alone
 * would say nothing of where the helper runs. */
enum { HELPER_WAIT_MS = 5000 };
typedef struct {
    atomic_int helper_cpu; /* the CPU a helper ran an index on, or -1 */
    atomic_int waited_ms;  /* how long the caller has waited for it   */
} helper_seen;

static void record_helper_cpu(void *ctx, size_t i, size_t worker)
{
    (void)i;
    helper_seen *seen = ctx;
    if (worker > 0) {
        atomic_store(&seen->helper_cpu, sched_getcpu());
        return;
    }
    struct timespec pause = {0, 1000000};
    while (atomic_load(&seen->helper_cpu) < 0 &&
           atomic_fetch_add(&seen->waited_ms, 1) < HELPER_WAIT_MS)
        nanosleep(&pause, NULL);
}

static void pin_to(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
}

static void a_helper_on_the_callers_cpu_moves_to_another(void **state)
{
    (void)state;
    cpu_set_t allowed;
    assert_int_equal(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &allowed))
            first = c;
    if (CPU_COUNT(&allowed) < 2) {
        pool *p = pool_create(1, 4);
        assert_false(pool_spread_loops(p)); /* one CPU: nowhere to go */
        pool_destroy(p);
        skip();
    }
    /* a worker that can only run where the caller runs (it inherits the
     * creating thread's affinity): the worst placement the scheduler can
     * make, forced */
    pin_to(first);
    pool *p = pool_create(1, 4);
    assert_int_equal(sched_setaffinity(0, sizeof allowed, &allowed), 0);
    assert_true(pool_spread_loops(p));
    pin_to(first);
    helper_seen seen = {.helper_cpu = -1, .waited_ms = 0};
    pool_parallel_for(p, 32, record_helper_cpu, &seen);
    assert_true(atomic_load(&seen.helper_cpu) >= 0); /* a helper ran one */
    /* and it left the caller's CPU */
    assert_int_not_equal(atomic_load(&seen.helper_cpu), first);
    assert_int_equal(sched_setaffinity(0, sizeof allowed, &allowed), 0);
    pool_destroy(p);
}

/* A big job: a loop of many slow indices, the kind a big request opens;
 * it counts the indices done and whether a helper (worker id > 0) ran one
 * after `after_small` was set. */
enum { BIG_INDICES = 200 };
typedef struct {
    pool *p;
    atomic_int done;        /* indices of the big loop finished         */
    atomic_int helped;      /* a helper ran one of them                  */
    atomic_int small_done;  /* the small job has run                     */
    atomic_int done_before; /* big indices done when the small one ran */
    atomic_int helped_after_small;
} big_and_small;

static void big_index(void *ctx, size_t i, size_t worker)
{
    (void)i;
    big_and_small *b = ctx;
    if (worker > 0) {
        atomic_store(&b->helped, 1);
        if (atomic_load(&b->small_done))
            atomic_store(&b->helped_after_small, 1);
    }
    struct timespec pause = {0, 2000000}; /* 2 ms: one task of a big job */
    nanosleep(&pause, NULL);
    atomic_fetch_add(&b->done, 1);
}

static void big_job(void *arg)
{
    big_and_small *b = arg;
    pool_parallel_for(b->p, BIG_INDICES, big_index, b);
}

static void small_job(void *arg)
{
    big_and_small *b = arg;
    atomic_store(&b->done_before, atomic_load(&b->done));
    atomic_store(&b->small_done, 1);
}

/* Both workers busy with one big job (its caller and a helper); a small
 * job submitted then starts before the big loop is over, and the helper
 * that ran it goes back to the big loop. */
static void a_job_queued_behind_a_big_loop_starts_within_one_index(void **state)
{
    (void)state;
    big_and_small b = {0};
    b.p = pool_create(2, 16);
    assert_int_equal(pool_submit(b.p, big_job, &b), 0);
    while (!atomic_load(&b.helped)) /* both workers are in the big loop */
        usleep(100);
    assert_int_equal(pool_submit(b.p, small_job, &b), 0);
    while (atomic_load(&b.done) < BIG_INDICES)
        usleep(1000);
    pool_destroy(b.p);
    assert_int_equal(atomic_load(&b.small_done), 1);
    /* the small job did not wait for the big loop: on a quiet machine it
     * runs after 2 or 3 indices; a loaded one may delay it, not by 150 */
    assert_true(atomic_load(&b.done_before) < BIG_INDICES / 4);
    assert_int_equal(atomic_load(&b.helped_after_small), 1);
}

/* Jobs queued while every worker helps a loop opened by a thread outside
 * the pool (the loop's caller) each get a worker, and every index of the
 * loop still runs exactly once. */
static void helpers_leave_for_jobs_and_every_index_runs_once(void **state)
{
    (void)state;
    pool *p = pool_create(3, 1000);
    enum { COUNT = 20000 };
    atomic_int *hits = calloc(COUNT, sizeof *hits);
    atomic_int runs = 0;
    for (int round = 0; round < 20; round++) {
        for (int j = 0; j < 10; j++)
            assert_int_equal(pool_submit(p, count_job, &runs), 0);
        pool_parallel_for(p, COUNT, mark_index, hits);
    }
    pool_destroy(p);
    for (int i = 0; i < COUNT; i++)
        assert_int_equal(atomic_load(&hits[i]), 20);
    assert_int_equal(atomic_load(&runs), 200);
    free(hits);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_submitted_job_runs_once),
        cmocka_unit_test(parallel_for_covers_each_index_exactly_once),
        cmocka_unit_test(parallel_for_without_pool_runs_on_the_caller),
        cmocka_unit_test(worker_ids_are_in_range_and_never_shared),
        cmocka_unit_test(
            jobs_using_parallel_for_on_every_worker_do_not_deadlock),
        cmocka_unit_test(a_full_queue_refuses_instead_of_growing),
        cmocka_unit_test(a_helper_on_the_callers_cpu_moves_to_another),
        cmocka_unit_test(
            a_job_queued_behind_a_big_loop_starts_within_one_index),
        cmocka_unit_test(helpers_leave_for_jobs_and_every_index_runs_once),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
