/*
 * alloc_setup.h - keep freed tensor buffers for reuse.
 *
 * glibc serves allocations above 128 KiB..32 MiB with a fresh mmap() and
 * returns them on free(), so every request pays again for the page faults and
 * zeroing of its (h, n, m) weights: 25 % of the time of a 1024-token request
 * here.  Raising the mmap and trim thresholds keeps freed memory in the heap
 * for the next request, as PyTorch's caching allocator does.  Resident memory
 * then plateaus at the largest working set, which --memory-budget bounds.
 *
 * All threads share the one main arena.  With an arena per thread a
 * mid-size request (n=256, d=256, h=8 with its weights, 12.6 MB of reply)
 * took 3,800 page faults each time and 50 ms end to end; with one arena it
 * takes 16 and 41 ms (a worker's arena grows in heaps of at most 64 MiB,
 * which are probably what was unmapped again whatever the trim threshold).
 * Lesson-sized throughput is the same or better (wrk side by side:
 * 131,800-134,900 against 122,900-131,900 requests in 4 s): the hot paths
 * allocate little.
 */
#ifndef SERVER_ALLOC_SETUP_H
#define SERVER_ALLOC_SETUP_H

void alloc_setup_reuse_large_buffers(void);

#endif
