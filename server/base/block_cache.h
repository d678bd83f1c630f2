/*
 * block_cache.h - a few freed buffers kept per thread for the next request.
 *
 * glibc serves blocks above about 1 KiB (beyond its own per-thread cache)
 * from the one arena every thread shares (server/setup/alloc_setup.h),
 * under the arena's lock; so does every calloc.  A lesson-sized request's
 * body and reply buffers (4 to 8 KiB) made the event threads wait on each
 * other for that lock, and each such malloc consolidated the arena's fast
 * bins.  Here a thread keeps up to BLOCK_CACHE_SLOTS freed blocks of
 * BLOCK_CACHE_MIN_BYTES to BLOCK_CACHE_MAX_BYTES and hands them out again
 * without a lock.
 *
 * The blocks are ordinary malloc blocks: realloc() and free() take them as
 * any other, and block_free() takes any malloc block (or NULL).  What a
 * thread keeps is freed when the thread ends; at most
 * BLOCK_CACHE_SLOTS × BLOCK_CACHE_MAX_BYTES per thread is kept meanwhile,
 * outside the memory budget's reservations.
 */
#ifndef SERVER_BASE_BLOCK_CACHE_H
#define SERVER_BASE_BLOCK_CACHE_H

#include <stddef.h>

/* Blocks a thread keeps: a request's body, its reply's parts, one spare. */
#define BLOCK_CACHE_SLOTS 4
/* Smaller blocks come from glibc's per-thread cache, without a lock. */
#define BLOCK_CACHE_MIN_BYTES ((size_t)1 << 10)
/* Larger blocks belong to requests whose work dwarfs one malloc. */
#define BLOCK_CACHE_MAX_BYTES ((size_t)64 << 10)

/* malloc(size), from this thread's kept blocks when size is at least
 * BLOCK_CACHE_MIN_BYTES and one is big enough (the first that is). */
void *block_alloc(size_t size);

/* free(p), or p kept for this thread's next block_alloc(). */
void block_free(void *p);

/* How many blocks this thread keeps now (at most BLOCK_CACHE_SLOTS). */
unsigned block_cache_kept(void);

#endif
