/*
 * failmalloc.c - LD_PRELOAD shim: malloc() of FAILMALLOC_MIN_BYTES or more
 * returns NULL, as when the machine runs out of memory, so that a test can
 * check that a failed allocation is answered 503 and the process lives on.
 * Smaller allocations go to glibc as usual.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);

static size_t fail_from(void)
{
    static size_t limit;
    if (!limit) {
        const char *value = getenv("FAILMALLOC_MIN_BYTES");
        limit = value ? strtoull(value, NULL, 10) : (size_t)-1;
        if (!limit)
            limit = (size_t)-1;
    }
    return limit;
}

void *malloc(size_t size)
{
    if (size >= fail_from())
        return NULL;
    return __libc_malloc(size);
}
