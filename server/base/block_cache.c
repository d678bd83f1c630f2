/*
 * block_cache.c - per-thread kept blocks (block_cache.h).
 *
 * DESIGN
 * Each thread has a small array of kept blocks with their usable sizes
 * (malloc_usable_size), searched first fit.  The first block a thread keeps
 * registers the array with a pthread key whose destructor frees the blocks
 * when the thread ends.
 */
#include "server/base/block_cache.h"

#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct {
    void *block[BLOCK_CACHE_SLOTS];
    size_t size[BLOCK_CACHE_SLOTS]; /* usable bytes of each */
    unsigned count;
    bool registered; /* the key's destructor will free them */
} kept_blocks;

static _Thread_local kept_blocks kept;
static pthread_key_t kept_key;
static pthread_once_t kept_key_once = PTHREAD_ONCE_INIT;
static bool kept_key_made;

static void free_kept(void *arg)
{
    kept_blocks *k = arg;
    for (unsigned i = 0; i < k->count; i++)
        free(k->block[i]);
    k->count = 0;
}

static void make_kept_key(void)
{
    kept_key_made = pthread_key_create(&kept_key, free_kept) == 0;
}

void *block_alloc(size_t size)
{
    kept_blocks *k = &kept;
    if (size < BLOCK_CACHE_MIN_BYTES) /* glibc's own cache serves these */
        return malloc(size);
    for (unsigned i = 0; i < k->count; i++) {
        if (k->size[i] < size)
            continue;
        void *p = k->block[i];
        k->count--;
        k->block[i] = k->block[k->count];
        k->size[i] = k->size[k->count];
        return p;
    }
    return malloc(size);
}

void block_free(void *p)
{
    if (!p)
        return;
    kept_blocks *k = &kept;
    size_t size = malloc_usable_size(p);
    if (size < BLOCK_CACHE_MIN_BYTES || size > BLOCK_CACHE_MAX_BYTES ||
        k->count == BLOCK_CACHE_SLOTS) {
        free(p);
        return;
    }
    if (!k->registered) {
        pthread_once(&kept_key_once, make_kept_key);
        if (!kept_key_made || pthread_setspecific(kept_key, k) != 0) {
            free(p);
            return;
        }
        k->registered = true;
    }
    k->block[k->count] = p;
    k->size[k->count] = size;
    k->count++;
}

unsigned block_cache_kept(void) { return kept.count; }
