/*
 * test_overload.c - a server past its capacity answers 503 with Retry-After
 * and serves again afterwards: a full queue, and a memory budget another
 * request holds; a body, or a computation, that no state of the budget
 * could hold is 413 at once, never 503 (a client told to retry would retry
 * forever).
 *
 * Two groups: "overload" on a server with --threads 1 --max-queue 1
 * --fast-lane off, and "budget" on one with --memory-budget 1M.
 */
#include "tests/http/harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* Clients hammering a server with --threads 1 --max-queue 1. */
#define OVERLOAD_CLIENTS 8
/* The "budget" group's --memory-budget, and the largest body it admits:
 * the body and its parsing, 36 bytes per body byte
 * (server/base/parse_budget.h), must fit: 1 MiB / 37. */
#define BUDGET "1M"
#define BUDGET_LARGEST_BODY 28339

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
/* group "budget": --memory-budget 1M                                      */
/* ======================================================================= */

static int budget_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--memory-budget", BUDGET, NULL};
    return group_start(extra);
}

/* The headers of a POST to /v1/attention announcing `length` bytes. */
static void upload_headers(char *out, size_t size, long length)
{
    snprintf(out, size,
             "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Length: %ld\r\n\r\n",
             length);
}

static void body_no_budget_could_hold_is_413_before_the_body(void **state)
{
    (void)state;
    /* only the headers are sent: the answer must not wait for the body */
    char request[256];
    upload_headers(request, sizeof request, BUDGET_LARGEST_BODY + 1);
    bool closed;
    http_response r = raw_exchange(request, &closed);
    const char *detail = expect_problem(&r, 413, "limit_exceeded", NULL);
    char largest[64];
    snprintf(largest, sizeof largest, "at most %d bytes", BUDGET_LARGEST_BODY);
    expect(strstr(detail, largest) != NULL, &r);
    expect(header_count(&r, "Retry-After") == 0, &r);
    response_free(&r);
}

static void chunked_body_no_budget_could_hold_is_413(void **state)
{
    (void)state;
    size_t len = 2 * BUDGET_LARGEST_BODY;
    char *body = malloc(len + 1);
    assert_non_null(body);
    memset(body, ' ', len);
    body[len] = '\0';
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = body,
                                           .chunked = true});
    expect_problem(&r, 413, "limit_exceeded", NULL);
    response_free(&r);
    free(body);
}

/* Waits until no request holds memory, so that the next test starts with
 * the whole budget. */
static void wait_budget_free(void)
{
    static const char gauge[] = "\nattention_memory_reserved_bytes ";
    for (int i = 0; i < 100; i++) {
        http_response r = http(&(http_request){.path = "/metrics"});
        const char *at = strstr(r.body.data, gauge);
        long used = at ? strtol(at + strlen(gauge), NULL, 10) : -1;
        response_free(&r);
        if (used == 0)
            return;
        sleep_ms(20);
    }
    fail_msg("the memory budget was not given back");
}

/* POSTs `length` spaces to /v1/attention, announced by Content-Length. */
static http_response post_spaces(size_t length)
{
    char *body = malloc(length + 1);
    assert_non_null(body);
    memset(body, ' ', length);
    body[length] = '\0';
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = body});
    free(body);
    return r;
}

/* x of `n` tokens of width 1 and weights (1, 1): its n × n weights alone
 * (8 bytes each) are what computing and returning it needs. */
static char *tall_body(size_t n)
{
    static const char head[] = "{\"x\":[",
                      tail[] = "],\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]]}";
    char *body = malloc(sizeof head + 4 * n + sizeof tail);
    assert_non_null(body);
    char *at = stpcpy(body, head);
    for (size_t i = 0; i < n; i++)
        at = stpcpy(at, i ? ",[1]" : "[1]");
    strcpy(at, tail);
    return body;
}

static void computation_no_budget_could_hold_is_413_not_503(void **state)
{
    (void)state;
    /* a small body (2.4 KB) whose weights, 600 × 600 doubles (2.9 MB),
     * exceed the whole 1 MiB budget: retrying could never help */
    char *body = tall_body(600);
    http_response r = post_json(body);
    const char *detail = expect_problem(&r, 413, "limit_exceeded", NULL);
    expect(strstr(detail, "the memory budget of all requests in flight is "
                          "1048576 bytes (--memory-budget)") != NULL,
           &r);
    expect(header_count(&r, "Retry-After") == 0, &r);
    response_free(&r);
    free(body);
    /* one that fits the budget is computed */
    body = tall_body(100);
    r = post_json(body);
    expect_status(&r, 200);
    response_free(&r);
    free(body);
    wait_budget_free(); /* its reply's bytes may still be held */
}

static void budget_held_by_another_request_is_503_then_admitted(void **state)
{
    (void)state;
    /* an upload announcing the largest body holds its bytes while its body
     * does not come; the same body and its parsing no longer fit now */
    int holder = raw_connect();
    char request[256];
    upload_headers(request, sizeof request, BUDGET_LARGEST_BODY);
    assert_true(raw_send(holder, request, strlen(request)));
    sleep_ms(200);
    http_response r = post_spaces(BUDGET_LARGEST_BODY);
    expect_problem(&r, 503, "overloaded", NULL);
    char value[32];
    expect(header(&r, "Retry-After", value, sizeof value) && atoi(value) >= 1,
           &r);
    response_free(&r);
    close(holder); /* the budget comes back: the body is read and decoded */
    wait_budget_free();
    r = post_spaces(BUDGET_LARGEST_BODY);
    expect_problem(&r, 400, "invalid_json", NULL);
    response_free(&r);
    r = post_json(LESSON_001);
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
        cmocka_unit_test(body_no_budget_could_hold_is_413_before_the_body),
        cmocka_unit_test(chunked_body_no_budget_could_hold_is_413),
        cmocka_unit_test(computation_no_budget_could_hold_is_413_not_503),
        cmocka_unit_test(budget_held_by_another_request_is_503_then_admitted),
    };

    int failed = 0;
    failed += cmocka_run_group_tests_name("overload", overload, overload_setup,
                                          group_stop);
    failed +=
        cmocka_run_group_tests_name("budget", budget, budget_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
