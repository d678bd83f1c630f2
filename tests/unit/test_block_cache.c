/*
 * test_block_cache.c - server/base/block_cache: a thread hands its freed
 * blocks out again, keeps them from other threads, and keeps at most its
 * slots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/block_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* The block cache is per thread, so each test runs on a thread of its own
 * (its kept blocks start empty and are freed when it ends: a leak here
 * fails the ASan and valgrind runs).  cmocka's asserts belong to the test's
 * own thread: a thread function returns the first check that failed, or
 * NULL, and the test asserts that. */
#define THREAD_CHECK(cond)                                                     \
    do {                                                                       \
        if (!(cond))                                                           \
            return (void *)#cond;                                              \
    } while (0)

/* fn(arg) on a new thread: what it returned, or why it could not run. */
static const char *on_a_new_thread(void *(*fn)(void *), void *arg)
{
    pthread_t thread;
    void *failed = NULL;
    if (pthread_create(&thread, NULL, fn, arg) != 0 ||
        pthread_join(thread, &failed) != 0)
        return "the thread did not run";
    return failed;
}

static void expect_thread_passes(void *(*fn)(void *))
{
    const char *failed = on_a_new_thread(fn, NULL);
    if (failed)
        fail_msg("on its thread: %s", failed);
}

static void *keep_and_take_back(void *arg)
{
    (void)arg;
    char *block = block_alloc(4096);
    THREAD_CHECK(block != NULL && block_cache_kept() == 0);
    block_free(block);
    THREAD_CHECK(block_cache_kept() == 1);
    /* a request for more than any kept block goes to malloc */
    free(block_alloc(8192));
    THREAD_CHECK(block_cache_kept() == 1);
    /* far below BLOCK_CACHE_MIN_BYTES too (glibc's own cache serves it),
     * and such a block, or one above BLOCK_CACHE_MAX_BYTES, is not kept */
    char *small = block_alloc(BLOCK_CACHE_MIN_BYTES / 8);
    unsigned kept_beside_small = block_cache_kept();
    block_free(small);
    block_free(block_alloc(2 * BLOCK_CACHE_MAX_BYTES));
    THREAD_CHECK(kept_beside_small == 1 && block_cache_kept() == 1);
    char *again = block_alloc(3000);
    THREAD_CHECK(again == block && block_cache_kept() == 0);
    block_free(again); /* kept until the thread ends */
    return NULL;
}

static void *take_from_an_empty_thread(void *arg)
{
    (void)arg;
    THREAD_CHECK(block_cache_kept() == 0);
    return NULL;
}

static void *keep_one_for_another_thread(void *arg)
{
    (void)arg;
    char *block = block_alloc(4096);
    block_free(block);
    const char *failed = on_a_new_thread(take_from_an_empty_thread, NULL);
    if (failed)
        return (void *)failed;
    THREAD_CHECK(block_cache_kept() == 1);
    char *again = block_alloc(4096);
    bool kept = again == block;
    free(again);
    THREAD_CHECK(kept);
    return NULL;
}

static void *keep_at_most_the_slots(void *arg)
{
    (void)arg;
    char *freed[BLOCK_CACHE_SLOTS + 1];
    for (size_t i = 0; i <= BLOCK_CACHE_SLOTS; i++)
        freed[i] = block_alloc(2048);
    for (size_t i = 0; i <= BLOCK_CACHE_SLOTS; i++)
        block_free(freed[i]); /* the last one finds every slot taken */
    THREAD_CHECK(block_cache_kept() == BLOCK_CACHE_SLOTS);
    char *taken[BLOCK_CACHE_SLOTS];
    bool among_first = true;
    for (size_t i = 0; i < BLOCK_CACHE_SLOTS; i++) {
        taken[i] = block_alloc(2048);
        bool found = false;
        for (size_t j = 0; j < BLOCK_CACHE_SLOTS; j++)
            found |= taken[i] == freed[j];
        among_first &= found;
    }
    for (size_t i = 0; i < BLOCK_CACHE_SLOTS; i++)
        free(taken[i]);
    THREAD_CHECK(among_first && block_cache_kept() == 0);
    return NULL;
}

static void a_thread_hands_a_freed_block_out_again(void **state)
{
    (void)state;
    expect_thread_passes(keep_and_take_back);
}

static void a_block_kept_by_one_thread_is_not_another_threads(void **state)
{
    (void)state;
    expect_thread_passes(keep_one_for_another_thread);
}

static void a_thread_keeps_at_most_its_slots(void **state)
{
    (void)state;
    expect_thread_passes(keep_at_most_the_slots);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_thread_hands_a_freed_block_out_again),
        cmocka_unit_test(a_block_kept_by_one_thread_is_not_another_threads),
        cmocka_unit_test(a_thread_keeps_at_most_its_slots),
    };
    return cmocka_run_group_tests_name("block_cache", tests, NULL, NULL);
}
