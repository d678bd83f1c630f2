/*
 * test_coding_stop.c - a reply's compression stops when its client hangs
 * up: nobody reads it, so the workers do not finish it.  The request is
 * logged 499 client_gone, as one whose client left during the computation,
 * and attention_reply_compressions_total does not count it.
 *
 * One group, "coding_stop", on a server whose access log is in a file.  The
 * request is cheap to compute and its reply big: BIG_N tokens of width 4
 * asking for the scores, masked scores and weights (3 × BIG_N² numbers,
 * about 56 MB of JSON), compressed in 128 KiB pieces on the workers.  The
 * server's reserved memory (/metrics) shows where the request is: what the
 * request may need, reserved when it is read and held while it computes;
 * then, once the reply is made, the reply and room for its compressed copy
 * (another value, as big); then the compressed reply alone (a value less
 * than half the first).  The client hangs up when the second shows, so the
 * hang-up falls after the computation and before the compression ends.  With
 * --fast-lane all the reply is made on an event thread, which /metrics may
 * wait behind: the test is skipped there.
 */
#include "tests/http/harness.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tokens of the request. */
#define BIG_N 1024
/* Reserved bytes the request holds from when it is read (its three BIG_N²
 * stages of doubles and its reply's JSON: over 100 MB) until its reply is
 * compressed: more than any other request of the test holds. */
#define REQUEST_HELD_BYTES 48000000L
/* How long the reply may take to be made, on a busy machine. */
#define MADE_WAIT_MS 20000
/* How long the log line may take to be written after the hang-up. */
#define LOG_WAIT_MS 20000

static char g_log_path[LOG_PATH_MAX];

/* A gauge or counter from GET /metrics (`name` with its leading newline
 * and trailing space), or -1. */
static long metric(const char *name)
{
    http_response r = http(&(http_request){.path = "/metrics"});
    const char *at = r.status == 200 ? strstr(r.body.data, name) : NULL;
    long n = at ? strtol(at + strlen(name), NULL, 10) : -1;
    response_free(&r);
    return n;
}

static long compressions(void)
{
    return metric("\nattention_reply_compressions_total ");
}

/* ======================================================================= */
/* group "coding_stop"                                                     */
/* ======================================================================= */

static int coding_stop_setup(void **state)
{
    (void)state;
    return logged_group_start(g_log_path, "coding-stop", NULL);
}

static int coding_stop_teardown(void **state)
{
    return logged_group_stop(state, g_log_path);
}

static void a_client_that_hangs_up_stops_its_replys_compression(void **state)
{
    (void)state;
    const char *lane = getenv("HTTP_TEST_LANE");
    if (lane && strcmp(lane, "all") == 0)
        skip();
    long before = compressions();
    assert_true(before >= 0);
    char *body = big_reply_body(BIG_N);
    int fd = raw_post_v1(body, "Accept-Encoding: gzip\r\n"
                               "X-Request-ID: coding-hangup\r\n");
    free(body);
    static const char reserved[] = "\nattention_memory_reserved_bytes ";
    double start = now_ms();
    long held, now;
    while ((held = metric(reserved)) < REQUEST_HELD_BYTES)
        if (now_ms() - start > MADE_WAIT_MS)
            fail_msg("the request was not read within %d ms", MADE_WAIT_MS);
    while ((now = metric(reserved)) == held)
        if (now_ms() - start > MADE_WAIT_MS)
            fail_msg("the reply was not made within %d ms", MADE_WAIT_MS);
    /* the reply and its compressed copy's room, and nothing sent yet */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (now < held / 2 || poll(&p, 1, 0) != 0)
        fail_msg("the reply was compressed before the client could hang up");
    close(fd);
    json_decref(
        expect_logged_client_gone(g_log_path, "coding-hangup", LOG_WAIT_MS));
    assert_int_equal(compressions(), before);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest coding_stop[] = {
        cmocka_unit_test(a_client_that_hangs_up_stops_its_replys_compression),
    };

    int failed = cmocka_run_group_tests_name(
        "coding_stop", coding_stop, coding_stop_setup, coding_stop_teardown);
    harness_done();
    return failed ? 1 : 0;
}
