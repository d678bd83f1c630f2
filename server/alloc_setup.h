/*
 * alloc_setup.h - keep freed tensor buffers for reuse.
 *
 * glibc serves allocations above 128 KiB..32 MiB with a fresh mmap() and
 * returns them on free(), so every request pays again for the page faults and
 * zeroing of its (h, n, m) weights: 25 % of the time of a 1024-token request
 * here.  Raising the mmap and trim thresholds keeps freed memory in the heap
 * for the next request, as PyTorch's caching allocator does.  Resident memory
 * then plateaus at the largest working set, which --memory-budget bounds.
 */
#ifndef SERVER_ALLOC_SETUP_H
#define SERVER_ALLOC_SETUP_H

void alloc_setup_reuse_large_buffers(void);

#endif
