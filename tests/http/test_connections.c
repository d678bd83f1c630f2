/*
 * test_connections.c - a connection is kept across requests (closed after a
 * request refused from its headers), and an idle half request does not
 * hold up others.
 *
 * One group, "connections", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <unistd.h>

/* ======================================================================= */
/* group "connections"                                                     */
/* ======================================================================= */

static int connections_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void keep_alive_reuses_one_connection(void **state)
{
    (void)state;
    CURL *h = curl_easy_init();
    /* successes and answered errors alike keep the connection, but for a
     * request refused from its headers with a body (the 415), answered
     * before its body and closed: the next request opens a new one */
    const http_request rqs[] = {
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "application/json",
         .body = LESSON_001},
        {.path = "/healthz"},
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "application/json",
         .body = "{\"x\":1}"},
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "text/plain",
         .body = LESSON_001},
        {.path = "/nowhere"},
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "application/json",
         .body = LESSON_001},
    };
    const long want[] = {200, 200, 400, 415, 404, 200};
    const long opens[] = {1, 0, 0, 0, 1, 0};
    for (size_t i = 0; i < sizeof rqs / sizeof *rqs; i++) {
        http_request rq = rqs[i];
        rq.reuse = h;
        http_response r = http(&rq);
        expect_status(&r, want[i]);
        if (r.new_connections != opens[i]) {
            show(&r);
            fail_msg("request %zu opened %ld new connections", i,
                     r.new_connections);
        }
        response_free(&r);
    }
    curl_easy_cleanup(h);
}

static void idle_half_request_does_not_block_others(void **state)
{
    (void)state;
    int fd = raw_connect();
    assert_true(raw_send(fd, "POST /v1/attention HTTP/1.1\r\nHost: x\r\n", 38));
    double start = now_ms();
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    assert_true(now_ms() - start < 1000.0);
    response_free(&r);
    close(fd);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest connections[] = {
        cmocka_unit_test(keep_alive_reuses_one_connection),
        cmocka_unit_test(idle_half_request_does_not_block_others),
    };

    int failed = cmocka_run_group_tests_name("connections", connections,
                                             connections_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
