/*
 * pool.c - fixed pthread workers: a FIFO of jobs plus a list of open parallel
 * loops.
 *
 * DESIGN
 * A parallel loop is a descriptor on the caller's stack with an atomic "next
 * index" counter.  The caller publishes it in the pool's list of loops that
 * want helpers, then claims indices itself.  When the caller runs out of
 * indices it withdraws the loop from the list, so no new helper can join,
 * and waits only for helpers that already joined: it never waits for a
 * thread that is not already running its loop, which is why nested use from
 * inside a job cannot deadlock.
 *
 * Fairness.  Every job first gets a worker of its own; only a worker with no
 * job waiting helps a loop.  A helper looks at the queue before each index
 * it claims, and leaves the loop when more jobs wait than workers sleep: a
 * small job queued behind a big one then starts within one index of the big
 * one's loop (a task of it, a millisecond or so), not after the whole loop,
 * and a second big job does not wait for the first one's heads.  The loop
 * goes on with its caller and other helpers; the worker that left comes back
 * to it after the job, if the loop still has indices and its caller has not
 * withdrawn it.  A helper's id in a loop is its own index in the pool plus
 * one (the caller is 0), so a worker that leaves and comes back keeps an id
 * no other thread of the loop holds.
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
    bool withdrawn;         /* the caller is done claiming (under lock)  */
    int caller_cpu;         /* where the caller runs, or -1 (not spread) */
    struct pool_loop *next;
    struct pool_loop *prev;
} pool_loop;

/* What a worker thread is started with: its pool and its index in it. */
typedef struct {
    pool *p;
    size_t index;
} pool_worker;

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t work_ready; /* a job or a loop was published         */
    pthread_cond_t loop_done;  /* a helper left a loop                  */
    pthread_t *threads;
    pool_worker *workers;
    size_t thread_count;
    pool_job *head, *tail;
    /* jobs waiting and workers waiting for work: changed under the lock,
     * read without it by helpers deciding whether to leave their loop */
    atomic_size_t queued, sleeping;
    size_t max_queued;
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

/* More jobs wait than workers sleep: a helper should go and run one. */
static bool job_needs_worker(pool *p)
{
    return atomic_load_explicit(&p->queued, memory_order_relaxed) >
           atomic_load_explicit(&p->sleeping, memory_order_relaxed);
}

/* A helper's share of a loop; false when it left early for a job. */
static bool loop_help(pool *p, pool_loop *loop, size_t worker)
{
    for (;;) {
        if (job_needs_worker(p))
            return false;
        size_t i = atomic_fetch_add(&loop->next_index, 1);
        if (i >= loop->count)
            return true;
        loop->fn(loop->ctx, i, worker);
    }
}

static bool loop_linked(const pool *p, const pool_loop *loop)
{
    return loop->prev || p->loops == loop;
}

static void loop_link(pool *p, pool_loop *loop)
{
    loop->prev = NULL;
    loop->next = p->loops;
    if (p->loops)
        p->loops->prev = loop;
    p->loops = loop;
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
    pool_worker *self = arg;
    pool *p = self->p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->head) { /* a job before any loop: each job gets a worker */
            pool_job *job = p->head;
            p->head = job->next;
            if (!p->head)
                p->tail = NULL;
            atomic_fetch_sub(&p->queued, 1);
            pthread_mutex_unlock(&p->lock);
            job->fn(job->arg);
            free(job);
            pthread_mutex_lock(&p->lock);
            continue;
        }
        if (p->loops) {
            pool_loop *loop = p->loops;
            loop->helpers_running++;
            if (--loop->helpers_wanted == 0)
                loop_unlink(p, loop);
            bool spread = p->spread;
            cpu_set_t allowed = p->allowed;
            pthread_mutex_unlock(&p->lock);
            bool moved = spread && leave_cpu(loop->caller_cpu, &allowed);
            bool finished = loop_help(p, loop, self->index + 1);
            if (moved) /* free again: the next job may run anywhere */
                sched_setaffinity(0, sizeof allowed, &allowed);
            pthread_mutex_lock(&p->lock);
            /* left for a job: the loop takes this worker back afterwards */
            if (!finished && !loop->withdrawn &&
                atomic_load(&loop->next_index) < loop->count) {
                loop->helpers_wanted++;
                if (!loop_linked(p, loop))
                    loop_link(p, loop);
            }
            if (--loop->helpers_running == 0)
                pthread_cond_broadcast(&p->loop_done);
            continue;
        }
        if (p->stopping)
            break;
        atomic_fetch_add(&p->sleeping, 1);
        pthread_cond_wait(&p->work_ready, &p->lock);
        atomic_fetch_sub(&p->sleeping, 1);
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
    p->workers = calloc(threads, sizeof *p->workers);
    if (!p->threads || !p->workers) {
        free(p->threads);
        free(p->workers);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work_ready, NULL);
    pthread_cond_init(&p->loop_done, NULL);
    p->max_queued = max_queued;
    atomic_init(&p->queued, 0);
    atomic_init(&p->sleeping, 0);
    for (size_t i = 0; i < threads; i++) {
        p->workers[i] = (pool_worker){.p = p, .index = i};
        if (pthread_create(&p->threads[i], NULL, worker_main, &p->workers[i]) !=
            0)
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
    free(p->workers);
    free(p);
}

size_t pool_size(const pool *p) { return p ? p->thread_count : 0; }

size_t pool_queued(pool *p) { return atomic_load(&p->queued); }

int pool_submit(pool *p, pool_job_fn fn, void *arg)
{
    pool_job *job = malloc(sizeof *job);
    if (!job)
        return -1;
    job->fn = fn;
    job->arg = arg;
    job->next = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->stopping || atomic_load(&p->queued) >= p->max_queued) {
        pthread_mutex_unlock(&p->lock);
        free(job);
        return -1;
    }
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    atomic_fetch_add(&p->queued, 1);
    pthread_cond_signal(&p->work_ready);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

void pool_parallel_for(pool *p, size_t count, pool_index_fn fn, void *ctx)
{
    if (count == 0)
        return;
    pool_loop loop = {.fn = fn, .ctx = ctx, .count = count, .caller_cpu = -1};
    atomic_init(&loop.next_index, 0);
    size_t helpers = p ? p->thread_count : 0;
    if (helpers > count - 1)
        helpers = count - 1;
    if (helpers > 0) {
        loop.helpers_wanted = helpers;
        pthread_mutex_lock(&p->lock);
        if (p->spread)
            loop.caller_cpu = sched_getcpu();
        loop_link(p, &loop);
        /* wake only as many sleepers as the loop wants */
        for (size_t i = 0; i < helpers; i++)
            pthread_cond_signal(&p->work_ready);
        pthread_mutex_unlock(&p->lock);
    }
    loop_run(&loop, 0);
    if (helpers > 0) {
        pthread_mutex_lock(&p->lock);
        loop.withdrawn = true; /* a helper that left does not relink it */
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
