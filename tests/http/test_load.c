/*
 * test_load.c - concurrent clients all get lesson 001's answer, and clients
 * that leave mid-compute leave the server serving, their requests released
 * and their work discarded.
 *
 * One group, "load", on a server with the default flags.  Worker threads
 * count what they saw; the main thread asserts the counts.
 */
#include "tests/http/harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* Concurrent clients: 8 threads × 25 requests, all on their own handles. */
#define LOAD_THREADS 8
#define LOAD_REQUESTS 25
/* Heavy jobs abandoned at once, and how long a new client may then wait:
 * one heavy job's worth (the job a worker may be finishing when the client's
 * departure is noticed) and a margin for a busy 2-core machine. */
#define DISCARDED_JOBS 8
#define DISCARDED_WAIT_MS 1500

/* ======================================================================= */
/* group "load": concurrent clients, clients that leave mid-compute        */
/* ======================================================================= */

static int load_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

typedef struct {
    int ok, wrong_status, wrong_body;
    long last_status;
} load_result;

static void *load_client(void *arg)
{
    load_result *res = arg;
    CURL *h = curl_easy_init(); /* one keep-alive connection per client */
    for (int i = 0; i < LOAD_REQUESTS; i++) {
        http_response r = http(&(http_request){
            .method = "POST",
            .path = "/v1/attention",
            .content_type = "application/json",
            .body = LESSON_001,
            .reuse = h,
        });
        if (r.rc != CURLE_OK || r.status != 200) {
            res->wrong_status++;
            res->last_status = r.rc != CURLE_OK ? -(long)r.rc : r.status;
        } else if (!lesson_response_correct(&r)) {
            res->wrong_body++;
        } else {
            res->ok++;
        }
        response_free(&r);
    }
    curl_easy_cleanup(h);
    return NULL;
}

static void concurrent_clients_all_get_correct_answers(void **state)
{
    (void)state;
    pthread_t threads[LOAD_THREADS];
    load_result results[LOAD_THREADS] = {{0}};
    double start = now_ms();
    for (int i = 0; i < LOAD_THREADS; i++)
        assert_int_equal(
            pthread_create(&threads[i], NULL, load_client, &results[i]), 0);
    int ok = 0;
    for (int i = 0; i < LOAD_THREADS; i++) {
        pthread_join(threads[i], NULL);
        ok += results[i].ok;
        if (results[i].wrong_status || results[i].wrong_body)
            print_error("client %d: %d bad statuses (last %ld), %d wrong "
                        "bodies\n",
                        i, results[i].wrong_status, results[i].last_status,
                        results[i].wrong_body);
    }
    print_message("%d × %d requests in %.0f ms\n", LOAD_THREADS, LOAD_REQUESTS,
                  now_ms() - start);
    assert_int_equal(ok, LOAD_THREADS * LOAD_REQUESTS);
}

static void client_gone_mid_compute_leaves_server_serving(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    size_t len = strlen(body);
    for (int i = 0; i < 4; i++) {
        int fd = raw_connect();
        char head[256];
        snprintf(head, sizeof head,
                 "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Content-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 len);
        assert_true(raw_send(fd, head, strlen(head)));
        assert_true(raw_send(fd, body, len));
        close(fd); /* gone while the job is queued or computing */
    }
    free(body);
    double start = now_ms();
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
    print_message("served after 4 abandoned heavy jobs in %.0f ms\n",
                  now_ms() - start);
    /* the abandoned jobs end (discarded or finished) and are released */
    double deadline = now_ms() + 3000;
    long n;
    while ((n = in_flight_requests()) != 1 && now_ms() < deadline)
        sleep_ms(20);
    if (n != 1)
        fail_msg("3 s after 4 clients left mid-compute, %ld requests are "
                 "still in flight (expected 1: this /metrics request)",
                 n);
    assert_true(server_alive(&g_srv));
}

static void client_gone_mid_compute_work_is_discarded(void **state)
{
    (void)state;
    /* 8 heavy jobs (about 0.9 s of work each here) on 2 workers, all
     * abandoned: if their work were carried on, a new client would wait
     * about 3.5 s behind it */
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    size_t len = strlen(body);
    for (int i = 0; i < DISCARDED_JOBS; i++) {
        int fd = raw_connect();
        char head[256];
        snprintf(head, sizeof head,
                 "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Content-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 len);
        assert_true(raw_send(fd, head, strlen(head)));
        assert_true(raw_send(fd, body, len));
        close(fd);
    }
    free(body);
    sleep_ms(300); /* the bodies are read and the jobs queued */
    double start = now_ms();
    http_response r = post_json(LESSON_001);
    double waited = now_ms() - start;
    expect_status(&r, 200);
    response_free(&r);
    print_message("a new client waited %.0f ms behind %d abandoned jobs\n",
                  waited, DISCARDED_JOBS);
    if (waited > DISCARDED_WAIT_MS)
        fail_msg("a new client waited %.0f ms (> %d ms): the work of clients "
                 "that left was not discarded",
                 waited, DISCARDED_WAIT_MS);
    /* let whatever still runs end before the next test */
    double deadline = now_ms() + 6000;
    while (in_flight_requests() != 1 && now_ms() < deadline)
        sleep_ms(50);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest load[] = {
        cmocka_unit_test(concurrent_clients_all_get_correct_answers),
        cmocka_unit_test(client_gone_mid_compute_leaves_server_serving),
        cmocka_unit_test(client_gone_mid_compute_work_is_discarded),
    };

    int failed =
        cmocka_run_group_tests_name("load", load, load_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
