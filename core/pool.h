/*
 * pool.h - a fixed set of pthread workers running jobs and parallel loops.
 *
 * The pool knows nothing of attention.  It offers two things:
 *   - pool_submit(): queue a job (bounded queue; refuses instead of growing);
 *   - pool_parallel_for(): split an index range over the workers.  The caller
 *     works on the range too, so a job running on a worker may call it without
 *     any risk of deadlock: if every other worker is busy, the caller simply
 *     does all the work itself.
 * Jobs come before loops: a worker helps a loop only while no job waits, and
 * a helper leaves its loop between two indices when a job needs a worker,
 * coming back afterwards.  So a job queued behind a big one starts within
 * one index of the big one's loops, and up to pool_size() jobs run at once,
 * each on a worker of its own, helped by the workers that have no job.
 */
#ifndef CORE_POOL_H
#define CORE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pool pool;

typedef void (*pool_job_fn)(void *arg);
/* Runs index i of a parallel loop; `worker` is in [0, pool_size()] and is
 * unique among the threads running the same loop at the same time, so it can
 * index per-thread scratch memory (the caller is 0; a worker helping is its
 * own index in the pool plus one, the same each time it joins). */
typedef void (*pool_index_fn)(void *ctx, size_t i, size_t worker);

/* Starts `threads` workers (>= 1) with room for `max_queued` waiting jobs.
 * Returns NULL on failure.  The caller owns the pool; pool_destroy() frees. */
pool *pool_create(size_t threads, size_t max_queued);

/* From now on, a worker that joins a parallel loop while it runs on the CPU
 * of the thread that opened the loop moves to another of the CPUs this
 * thread may run on (its affinity is narrowed for the loop, then restored).
 * Left to itself, the scheduler often wakes a worker that slept through an
 * idle spell on the waker's CPU (likely because on virtual machines an idle
 * vCPU looks preempted), and the loop then runs at one thread's speed.
 * Binding the workers to CPUs for good avoids that too, but costs
 * throughput when a client shares the CPUs; moving a worker only when it
 * collides with the caller does not.  Returns false when this thread may use
 * fewer than two CPUs. */
bool pool_spread_loops(pool *p);

/* Runs every job already queued, then joins the workers and frees the pool. */
void pool_destroy(pool *p);

size_t pool_size(const pool *p);

/* Jobs waiting for a worker (not counting running ones). */
size_t pool_queued(pool *p);

/* Queues fn(arg).  Returns 0, or -1 when the queue is full or the pool is
 * shutting down (the job is then not run and arg stays the caller's). */
int pool_submit(pool *p, pool_job_fn fn, void *arg);

/* Calls fn(ctx, i, worker) for every i in [0, count) and returns when all
 * calls have returned.  p may be NULL (then the caller runs everything). */
void pool_parallel_for(pool *p, size_t count, pool_index_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
