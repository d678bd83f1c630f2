/*
 * alloc_setup.h - keep freed tensor buffers for reuse.
 *
 * glibc serves allocations above 128 KiB..32 MiB with a fresh mmap() and
 * returns them on free(), so every request would pay again for the page
 * faults and zeroing of its (h, n, m) weights, a large share of a big
 * request's time.  Raising the mmap and trim thresholds keeps freed memory in
 * the heap for the next request, as PyTorch's caching allocator does.
 * Resident memory then plateaus at the largest working set, which
 * --memory-budget bounds.
 *
 * All threads share the one main arena.  A worker's own arena grows in heaps
 * of at most 64 MiB, which glibc probably unmaps again whatever the trim
 * threshold: with an arena per thread, a mid-size request faults its memory
 * in anew every time.  The hot paths allocate little, so one arena costs
 * lesson-sized throughput nothing.
 *
 * What the heap keeps is given back to the system once the server has been
 * idle for ALLOC_SETUP_IDLE_SECONDS (malloc_trim): reuse while busy, a small
 * resident set while idle, as a container's memory limit wants.  While busy
 * it is given back too when the resident set passes the memory budget by
 * ALLOC_SETUP_BUSY_MARGIN: freed buffers of one size do not always fit the
 * next requests' (the heap fragments), and the process must stay within
 * the budget plus its base whatever the mix of requests.
 */
#ifndef SERVER_ALLOC_SETUP_H
#define SERVER_ALLOC_SETUP_H

#include <stddef.h>

/* Seconds without a request in flight before freed memory is given back.
 * Faulting a mid-size request's memory in again costs more CPU than the
 * request itself (docs/performance.md, "The server's constants"), so a
 * client asking every few seconds keeps its buffers; memory is still back
 * well within the 10 s a test or an autoscaler waits. */
#define ALLOC_SETUP_IDLE_SECONDS 5.0
/* Resident bytes beyond --memory-budget at which freed memory is given back
 * even while busy: half the fixed base docs/reliability.md plans for, so
 * the rest of the base absorbs what grows between two looks. */
#define ALLOC_SETUP_BUSY_MARGIN ((size_t)32 << 20)
/* The least time between two such give-backs while busy. */
#define ALLOC_SETUP_BUSY_SECONDS 1.0

void alloc_setup_reuse_large_buffers(void);

/* Returns the heap's free pages to the system (malloc_trim); call when idle.
 * Takes a few milliseconds per GiB of free heap. */
void alloc_setup_give_back(void);

/* The process's resident bytes (/proc/self/statm), or 0 when unknown. */
size_t alloc_setup_resident_bytes(void);

#endif
