/*
 * test_limits.c - the body limit: a Content-Length, an Expect: 100-continue
 * or a chunked body over --max-body is 413, an endless chunked body is cut,
 * and clients gone mid-upload are released at once.
 *
 * One group, "limits", on a server with --max-body 2048.
 */
#include "tests/http/harness.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* A small --max-body for the limits group: lesson 001's body (about 330
 * bytes) fits, a 4 KiB upload does not. */
#define SMALL_MAX_BODY 2048
/* Abandoned uploads the disconnect tests leave behind. */
#define ABANDONED_UPLOADS 20

/* ======================================================================= */
/* group "limits": --max-body 2048                                         */
/* ======================================================================= */

static int limits_setup(void **state)
{
    (void)state;
    char max_body[32];
    snprintf(max_body, sizeof max_body, "%d", SMALL_MAX_BODY);
    const char *extra[] = {"--max-body", max_body, NULL};
    return group_start(extra);
}

static char *oversized_body(void)
{
    /* valid JSON, 2× the limit: whitespace padding inside the object */
    size_t len = 2 * SMALL_MAX_BODY;
    char *body = malloc(len + 1);
    assert_non_null(body);
    memset(body, ' ', len);
    memcpy(body, LESSON_001, strlen(LESSON_001) - 1);
    body[len - 1] = '}';
    body[len] = '\0';
    return body;
}

static void body_within_max_body_is_served(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    response_free(&r);
}

static void content_length_over_max_body_is_413_before_the_body(void **state)
{
    (void)state;
    /* only the headers are sent: the answer must not wait for the body */
    char request[256];
    snprintf(request, sizeof request,
             "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
             SMALL_MAX_BODY + 1);
    bool closed;
    http_response r = raw_exchange(request, &closed);
    expect_problem(&r, 413, "body_too_large", NULL);
    response_free(&r);
}

static void expect_continue_over_max_body_is_413(void **state)
{
    (void)state;
    char *body = oversized_body();
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json",
                             .body = body,
                             .headers = {"Expect: 100-continue"}});
    expect_problem(&r, 413, "body_too_large", NULL);
    response_free(&r);
    free(body);
}

static void chunked_body_over_max_body_is_413(void **state)
{
    (void)state;
    char *body = oversized_body();
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = body,
                                           .chunked = true});
    expect_problem(&r, 413, "body_too_large", NULL);
    response_free(&r);
    free(body);
}

static void chunked_body_within_max_body_is_served(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = LESSON_001,
                                           .chunked = true});
    expect_status(&r, 200);
    response_free(&r);
}

static void endless_chunked_body_is_cut_at_the_limit(void **state)
{
    (void)state;
    /* A client that never ends its chunked body.  Past the limit the server
     * must stop it: answer 413, or (libmicrohttpd cannot queue a reply in
     * the middle of an upload) hang up.  Reading on, or stopping to read but
     * holding the connection open, both fail. */
    int fd = raw_connect();
    const char *head = "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    assert_true(raw_send(fd, head, strlen(head)));
    char chunk[512 + 16];
    int len = snprintf(chunk, sizeof chunk, "200\r\n");
    memset(chunk + len, ' ', 512);
    memcpy(chunk + len + 512, "\r\n", 2);
    size_t chunk_len = (size_t)len + 514, sent = 0;
    int send_errno = 0;
    double deadline = now_ms() + RAW_REPLY_WAIT_MS;
    while (now_ms() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 0) == 1)
            break; /* a reply or a hang-up */
        if (!raw_send(fd, chunk, chunk_len)) {
            send_errno = errno;
            break;
        }
        sent += 512;
        sleep_ms(1); /* about 0.5 MB/s: a steady, endless client */
    }
    bytes raw = {0};
    bool closed;
    long status = raw_read_reply(fd, &raw, 500, &closed);
    close(fd);
    print_message("sent %zu body bytes (limit %d): status %ld, closed %d, "
                  "send error %s\n",
                  sent, SMALL_MAX_BODY, status, closed,
                  send_errno ? strerror(send_errno) : "none");
    if (status) {
        http_response r = raw_response(&raw, status);
        expect_problem(&r, 413, "body_too_large", NULL);
        response_free(&r);
    } else if (!closed && send_errno != EPIPE && send_errno != ECONNRESET) {
        fail_msg("no 413 and no hang-up: the server %s",
                 send_errno ? "stopped reading but holds the connection"
                            : "kept reading the body past its limit");
    }
    free(raw.data);
    assert_true(server_alive(&g_srv));
}

static void abandon_uploads(void)
{
    for (int i = 0; i < ABANDONED_UPLOADS; i++) {
        int fd = raw_connect();
        const char *head = "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Content-Type: application/json\r\n"
                           "Content-Length: 1000\r\n\r\n{\"x\":[[1,2],";
        assert_true(raw_send(fd, head, strlen(head)));
        if (i % 2) { /* half of them reset the connection outright */
            struct linger hard = {1, 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
        }
        close(fd);
    }
}

static void client_gone_mid_upload_is_released_at_once(void **state)
{
    (void)state;
    abandon_uploads();
    /* the only request left in flight is the /metrics request asking */
    double deadline = now_ms() + 1000;
    long n;
    while ((n = in_flight_requests()) != 1 && now_ms() < deadline)
        sleep_ms(20);
    if (n != 1)
        fail_msg("1 s after %d clients left mid-upload, %ld requests are still "
                 "in flight (expected 1: this /metrics request)",
                 ABANDONED_UPLOADS, n);
}

static void client_gone_mid_upload_leaves_server_serving(void **state)
{
    (void)state;
    abandon_uploads();
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    assert_true(server_alive(&g_srv));
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest limits[] = {
        cmocka_unit_test(body_within_max_body_is_served),
        cmocka_unit_test(content_length_over_max_body_is_413_before_the_body),
        cmocka_unit_test(expect_continue_over_max_body_is_413),
        cmocka_unit_test(chunked_body_over_max_body_is_413),
        cmocka_unit_test(chunked_body_within_max_body_is_served),
        cmocka_unit_test(endless_chunked_body_is_cut_at_the_limit),
        cmocka_unit_test(client_gone_mid_upload_leaves_server_serving),
        cmocka_unit_test(client_gone_mid_upload_is_released_at_once),
    };

    int failed =
        cmocka_run_group_tests_name("limits", limits, limits_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
