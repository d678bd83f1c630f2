/*
 * pool.c - fixed pthread workers: a FIFO of jobs plus a list of open parallel
 * loops.
 *
 * DESIGN
 * A parallel loop is a descriptor on the caller's stack with an atomic "next
 * index" counter.  The caller publishes it in the pool's list of loops that
 * want helpers, then claims indices itself.  An idle worker prefers helping an
 * open loop over starting a new job (finishing started work first keeps
 * latency low).  When the caller runs out of indices it withdraws the loop
 * from the list, so no new helper can join, and waits only for helpers that
 * already joined: it never waits for a thread that is not already running its
 * loop, which is why nested use from inside a job cannot deadlock.
 */
#include "core/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct pool_job {
    pool_job_fn fn;
    void *arg;
    struct pool_job *next;
} pool_job;

typedef struct pool_loop {
    pool_index_fn fn;
    void *ctx;
    size_t count;
    atomic_size_t next_index;
    size_t helpers_wanted;  /* slots still open to helpers (under lock) */
    size_t helpers_running; /* helpers inside the loop (under lock)      */
    size_t next_worker_id;  /* 0 is the caller; helpers take 1, 2, ...  */
    int caller_cpu;         /* where the caller runs, or -1 (not spread) */
    struct pool_loop *next;
    struct pool_loop *prev;
} pool_loop;

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t work_ready; /* a job or a loop was published         */
    pthread_cond_t loop_done;  /* a helper left a loop                  */
    pthread_t *threads;
    size_t thread_count;
    pool_job *head, *tail;
    size_t queued, max_queued;
    pool_loop *loops; /* loops that still accept helpers */
    bool stopping;
    bool spread;       /* pool_spread_loops(): helpers leave the caller's CPU */
    cpu_set_t allowed; /* the CPUs they may move to                         */
};

static void loop_run(pool_loop *loop, size_t worker)
{
    for (;;) {
        size_t i = atomic_fetch_add(&loop->next_index, 1);
        if (i >= loop->count)
            return;
        loop->fn(loop->ctx, i, worker);
    }
}

static void loop_unlink(pool *p, pool_loop *loop)
{
    if (loop->prev)
        loop->prev->next = loop->next;
    else if (p->loops == loop)
        p->loops = loop->next;
    else
        return; /* not linked */
    if (loop->next)
        loop->next->prev = loop->prev;
    loop->next = loop->prev = NULL;
}

/* A helper that finds itself on the CPU of the loop's caller moves to the
 * other allowed CPUs for the loop.  True when it narrowed its affinity. */
static bool leave_cpu(int caller_cpu, const cpu_set_t *allowed)
{
    if (caller_cpu < 0 || sched_getcpu() != caller_cpu)
        return false;
    cpu_set_t others = *allowed;
    CPU_CLR(caller_cpu, &others);
    return CPU_COUNT(&others) > 0 &&
           sched_setaffinity(0, sizeof others, &others) == 0;
}

static void *worker_main(void *arg)
{
    pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->loops) {
            pool_loop *loop = p->loops;
            size_t worker = loop->next_worker_id++;
            loop->helpers_running++;
            if (--loop->helpers_wanted == 0)
                loop_unlink(p, loop);
            bool spread = p->spread;
            cpu_set_t allowed = p->allowed;
            pthread_mutex_unlock(&p->lock);
            bool moved = spread && leave_cpu(loop->caller_cpu, &allowed);
            loop_run(loop, worker);
            if (moved) /* free again: the next job may run anywhere */
                sched_setaffinity(0, sizeof allowed, &allowed);
            pthread_mutex_lock(&p->lock);
            if (--loop->helpers_running == 0)
                pthread_cond_broadcast(&p->loop_done);
            continue;
        }
        if (p->head) {
            pool_job *job = p->head;
            p->head = job->next;
            if (!p->head)
                p->tail = NULL;
            p->queued--;
            pthread_mutex_unlock(&p->lock);
            job->fn(job->arg);
            free(job);
            pthread_mutex_lock(&p->lock);
            continue;
        }
        if (p->stopping)
            break;
        pthread_cond_wait(&p->work_ready, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

pool *pool_create(size_t threads, size_t max_queued)
{
    if (threads == 0)
        return NULL;
    pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->threads = calloc(threads, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work_ready, NULL);
    pthread_cond_init(&p->loop_done, NULL);
    p->max_queued = max_queued;
    for (size_t i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            break;
        p->thread_count++;
    }
    if (p->thread_count != threads) {
        pool_destroy(p);
        return NULL;
    }
    return p;
}

void pool_destroy(pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->work_ready);
    pthread_mutex_unlock(&p->lock);
    for (size_t i = 0; i < p->thread_count; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work_ready);
    pthread_cond_destroy(&p->loop_done);
    free(p->threads);
    free(p);
}

size_t pool_size(const pool *p) { return p ? p->thread_count : 0; }

size_t pool_queued(pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t queued = p->queued;
    pthread_mutex_unlock(&p->lock);
    return queued;
}

int pool_submit(pool *p, pool_job_fn fn, void *arg)
{
    pool_job *job = malloc(sizeof *job);
    if (!job)
        return -1;
    job->fn = fn;
    job->arg = arg;
    job->next = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->stopping || p->queued >= p->max_queued) {
        pthread_mutex_unlock(&p->lock);
        free(job);
        return -1;
    }
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    p->queued++;
    pthread_cond_signal(&p->work_ready);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

void pool_parallel_for(pool *p, size_t count, pool_index_fn fn, void *ctx)
{
    if (count == 0)
        return;
    pool_loop loop = {.fn = fn,
                      .ctx = ctx,
                      .count = count,
                      .next_worker_id = 1,
                      .caller_cpu = -1};
    atomic_init(&loop.next_index, 0);
    size_t helpers = p ? p->thread_count : 0;
    if (helpers > count - 1)
        helpers = count - 1;
    if (helpers > 0) {
        loop.helpers_wanted = helpers;
        pthread_mutex_lock(&p->lock);
        if (p->spread)
            loop.caller_cpu = sched_getcpu();
        loop.next = p->loops;
        if (p->loops)
            p->loops->prev = &loop;
        p->loops = &loop;
        /* wake only as many sleepers as the loop wants */
        for (size_t i = 0; i < helpers; i++)
            pthread_cond_signal(&p->work_ready);
        pthread_mutex_unlock(&p->lock);
    }
    loop_run(&loop, 0);
    if (helpers > 0) {
        pthread_mutex_lock(&p->lock);
        loop_unlink(p, &loop);
        while (loop.helpers_running > 0)
            pthread_cond_wait(&p->loop_done, &p->lock);
        pthread_mutex_unlock(&p->lock);
    }
}

bool pool_spread_loops(pool *p)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
        CPU_COUNT(&allowed) < 2)
        return false;
    pthread_mutex_lock(&p->lock);
    p->allowed = allowed;
    p->spread = true;
    pthread_mutex_unlock(&p->lock);
    return true;
}
