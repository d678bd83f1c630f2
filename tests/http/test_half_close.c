/*
 * test_half_close.c - a client that half-closes its connection once its
 * request is sent (shutdown(SHUT_WR), as `nc -N` and socat do at the end of
 * their input) still gets its reply, in every lane: only a client gone for
 * good (a reset, a failed write) stops its computation (test_stop.c).
 *
 * Each request goes over a raw socket, shut for writing once the request is
 * sent, and the reply is read to the end of the stream.  An HTTP/1.1 client
 * may get an interim 100 (Continue) before its reply (RFC 9110 15.2: the
 * server writes one to learn whether a half-closed client is still there);
 * an HTTP/1.0 client gets none.  The pooled request (n 1024, d 1, 64 heads)
 * is computed on a worker in the lanes auto and off; lesson 001 on the
 * event thread in auto and all.
 */
#include "tests/http/harness.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* The pooled request: n tokens of width 1, HEADS heads of width 1. */
#define POOLED_N 1024
#define POOLED_HEADS 64
/* How long the reply may take to arrive on a loaded 2-core machine. */
#define REPLY_WAIT_MS 20000

/* x (POOLED_N × 1), the weights 1 × POOLED_HEADS and w_o back to width 1,
 * POOLED_HEADS heads, returning the output only.  Caller frees. */
static char *pooled_body(void)
{
    json_t *body = json_pack("{s:o, s:o, s:o, s:o, s:o, s:i, s:[s]}", "x",
                             seeded_matrix(POOLED_N, 1, 37), "w_q",
                             seeded_matrix(1, POOLED_HEADS, 13), "w_k",
                             seeded_matrix(1, POOLED_HEADS, 17), "w_v",
                             seeded_matrix(1, POOLED_HEADS, 19), "w_o",
                             seeded_matrix(POOLED_HEADS, 1, 11), "num_heads",
                             POOLED_HEADS, "return", "output");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return text;
}

/* Sends `body` to /v1/attention in HTTP version `version` on a raw socket,
 * shuts the socket for writing and reads until the server closes it. */
static bytes half_closed_exchange(const char *version, const char *body)
{
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/attention %s\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
             version, strlen(body));
    int fd = raw_connect();
    assert_true(raw_send(fd, head, strlen(head)));
    assert_true(raw_send(fd, body, strlen(body)));
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    bytes got = {0};
    double deadline = now_ms() + REPLY_WAIT_MS;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            fail_msg("no end of the reply within %d ms", REPLY_WAIT_MS);
        char chunk[4096];
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0)
            break;
        bytes_append(&got, chunk, (size_t)n);
    }
    close(fd);
    bytes_append(&got, "", 1); /* a NUL after the reply, not counted */
    got.len--;
    return got;
}

/* The final reply of `got`, after `interim` interim responses, as an
 * http_response; fails on any interim response but 100. */
static http_response final_reply(const bytes *got, int *interim)
{
    const char *at = got->data;
    *interim = 0;
    while (strncmp(at, "HTTP/1.1 1", 10) == 0) {
        if (strncmp(at, "HTTP/1.1 100 ", 13) != 0)
            fail_msg("an interim response other than 100: %.60s", at);
        const char *end = strstr(at, "\r\n\r\n");
        assert_non_null(end);
        at = end + 4;
        (*interim)++;
    }
    bytes rest = {0};
    bytes_append(&rest, at, got->len - (size_t)(at - got->data));
    long status = 0;
    if (rest.len > 9 && strncmp(rest.data, "HTTP/1.", 7) == 0)
        status = strtol(rest.data + 9, NULL, 10);
    if (status == 0)
        fail_msg("no reply to a half-closed client: %zu bytes (%.60s)",
                 got->len, got->len ? got->data : "");
    http_response r = raw_response(&rest, status);
    free(rest.data);
    return r;
}

static void expect_output_rows(const http_response *r, size_t rows)
{
    expect_status(r, 200);
    json_t *reply = body_json(r);
    json_t *output = json_object_get(reply, "output");
    expect(json_array_size(output) == rows, r);
    json_decref(reply);
}

static void a_half_closed_client_gets_its_pooled_reply(void **state)
{
    (void)state;
    char *body = pooled_body();
    bytes got = half_closed_exchange("HTTP/1.1", body);
    free(body);
    int interim;
    http_response r = final_reply(&got, &interim);
    expect_output_rows(&r, POOLED_N);
    response_free(&r);
    free(got.data);
}

static void a_half_closed_client_gets_its_lesson(void **state)
{
    (void)state;
    bytes got = half_closed_exchange("HTTP/1.1", LESSON_001);
    int interim;
    http_response r = final_reply(&got, &interim);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
    free(got.data);
}

/* No interim response to an HTTP/1.0 client (RFC 9110 15.2), and its reply
 * all the same. */
static void a_half_closed_http10_client_gets_its_reply_alone(void **state)
{
    (void)state;
    char *body = pooled_body();
    bytes got = half_closed_exchange("HTTP/1.0", body);
    free(body);
    int interim;
    http_response r = final_reply(&got, &interim);
    assert_int_equal(interim, 0);
    expect_output_rows(&r, POOLED_N);
    response_free(&r);
    free(got.data);
}

static int setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_half_closed_client_gets_its_pooled_reply),
        cmocka_unit_test(a_half_closed_client_gets_its_lesson),
        cmocka_unit_test(a_half_closed_http10_client_gets_its_reply_alone),
    };
    int failed =
        cmocka_run_group_tests_name("half-close", tests, setup, group_stop);
    harness_done();
    return failed;
}
