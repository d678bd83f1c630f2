#include "server/setup/alloc_setup.h"

#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

/* Allocations up to this size come from the heap and are reused: above the
 * 1 GiB a single request may hold by default (--max-request-memory). */
#define ALLOC_SETUP_MMAP_THRESHOLD (1 << 30)

void alloc_setup_reuse_large_buffers(void)
{
    mallopt(M_MMAP_THRESHOLD, ALLOC_SETUP_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, ALLOC_SETUP_MMAP_THRESHOLD);
    mallopt(M_ARENA_MAX, 1);
}

void alloc_setup_give_back(void) { malloc_trim(0); }

size_t alloc_setup_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    int got = f ? fscanf(f, "%lu %lu", &size, &resident) : 0;
    if (f)
        fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return got == 2 && page > 0 ? (size_t)resident * (size_t)page : 0;
}
