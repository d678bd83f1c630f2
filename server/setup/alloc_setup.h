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
 */
#ifndef SERVER_ALLOC_SETUP_H
#define SERVER_ALLOC_SETUP_H

void alloc_setup_reuse_large_buffers(void);

#endif
