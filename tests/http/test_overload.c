/*
 * test_overload.c - a server past its capacity answers 503 with Retry-After
 * and serves again afterwards: a full queue, and a memory budget smaller than
 * any request.
 *
 * Two groups: "overload" on a server with --threads 1 --max-queue 1
 * --fast-lane off, and "budget" on one with --memory-budget 1024.
 */
#include "tests/http/harness.h"

#include <pthread.h>
#include <stdlib.h>

/* ---- constants -------------------------------------------------------- */

/* Clients hammering a server with --threads 1 --max-queue 1. */
#define OVERLOAD_CLIENTS 8

/* ======================================================================= */
/* group "overload": --threads 1 --max-queue 1                             */
/* ======================================================================= */

static int overload_setup(void **state)
{
    (void)state;
    /* the workers' queue: every request goes to them, whatever the
     * lane the suite runs with */
    const char *extra[] = {"--threads",   "1",   "--max-queue", "1",
                           "--fast-lane", "off", NULL};
    return group_start(extra);
}

static void full_queue_is_503_with_retry_after(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    pthread_t threads[OVERLOAD_CLIENTS];
    heavy_client clients[OVERLOAD_CLIENTS];
    atomic_int uploaded = 0;
    for (int i = 0; i < OVERLOAD_CLIENTS; i++) {
        clients[i] = (heavy_client){.body = body, .uploaded = &uploaded};
        assert_int_equal(
            pthread_create(&threads[i], NULL, heavy_request, &clients[i]), 0);
    }
    int ok = 0, overloaded = 0;
    for (int i = 0; i < OVERLOAD_CLIENTS; i++) {
        pthread_join(threads[i], NULL);
        heavy_client *c = &clients[i];
        if (c->status == 200 && c->correct)
            ok++;
        else if (c->status == 503 && c->retry_after && c->problem_overloaded)
            overloaded++;
        else
            print_error("client %d: status %ld, retry-after %d\n", i, c->status,
                        c->retry_after);
    }
    free(body);
    print_message("%d served, %d turned away with 503\n", ok, overloaded);
    /* one worker + one queue slot: 8 simultaneous heavy jobs cannot all fit
     * (how many do depends on when the worker takes its first job), and
     * every client gets either its answer or a 503 to retry */
    assert_int_equal(ok + overloaded, OVERLOAD_CLIENTS);
    assert_true(overloaded >= 1);
    assert_true(ok >= 1);
}

static void served_again_after_overload(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */
/* group "budget": --memory-budget smaller than any request                */
/* ======================================================================= */

static int budget_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--memory-budget", "1024", NULL};
    return group_start(extra);
}

static void exhausted_memory_budget_is_503_with_retry_after(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_problem(&r, 503, "overloaded", NULL);
    char value[32];
    expect(header(&r, "Retry-After", value, sizeof value) && atoi(value) >= 1,
           &r);
    response_free(&r);
    r = http(&(http_request){.path = "/healthz"}); /* still alive */
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest overload[] = {
        cmocka_unit_test(full_queue_is_503_with_retry_after),
        cmocka_unit_test(served_again_after_overload),
    };
    const struct CMUnitTest budget[] = {
        cmocka_unit_test(exhausted_memory_budget_is_503_with_retry_after),
    };

    int failed = 0;
    failed += cmocka_run_group_tests_name("overload", overload, overload_setup,
                                          group_stop);
    failed +=
        cmocka_run_group_tests_name("budget", budget, budget_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
