/*
 * test_encode_stop.c - a reply's JSON encoding stops when its client hangs
 * up: nobody reads it, so the workers do not finish writing it.  The
 * request is logged 499 client_gone, as one whose client left during the
 * computation.
 *
 * One group, "encode_stop", on a server whose access log is in a file.  The
 * request is cheap to compute and its reply big: BIG_N tokens of width 4
 * asking for the scores, masked scores and weights (3 × BIG_N² numbers:
 * 25 MB as doubles, about 56 MB of JSON), sent without Accept-Encoding.
 * The server's resident memory (/proc) shows where it is: the computation
 * touches at most its stages and a little room to work in; the JSON then
 * grows it by tens of MB, in as many milliseconds as MB on this machine.
 * The client hangs up once the server has grown by more than the stages
 * and ENCODING_SEEN_BYTES, which only the encoding writes: the hang-up
 * falls after the computation and before the encoding ends.  The old code
 * finished the encoding and logged 200 (its reply not completed).
 */
#include "tests/http/harness.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tokens of the request. */
#define BIG_N 1024
/* Bytes the computation touches at most: its three BIG_N² stages of
 * doubles and as much again for room to work in. */
#define COMPUTED_BYTES (2L * 3 * BIG_N * BIG_N * 8)
/* Resident bytes beyond COMPUTED_BYTES, which only the encoding writes
 * (the stages still held, about half the reply's JSON is written by
 * then). */
#define ENCODING_SEEN_BYTES 4000000L
/* How long the reply may take to be encoded that far, on a busy machine. */
#define SEEN_WAIT_MS 20000
/* How long the log line may take to be written after the hang-up. */
#define LOG_WAIT_MS 20000
static char g_log_path[LOG_PATH_MAX];

/* The server's resident bytes, or -1. */
static long rss_bytes(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)g_srv.pid);
    FILE *f = fopen(path, "r");
    long size = 0, resident = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = -1;
        fclose(f);
    }
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* ======================================================================= */
/* group "encode_stop"                                                     */
/* ======================================================================= */

static int encode_stop_setup(void **state)
{
    (void)state;
    return logged_group_start(g_log_path, "encode-stop", NULL);
}

static int encode_stop_teardown(void **state)
{
    return logged_group_stop(state, g_log_path);
}

static void a_client_that_hangs_up_stops_its_replys_encoding(void **state)
{
    (void)state;
    char *body = big_reply_body(BIG_N);
    long before = rss_bytes();
    assert_true(before > 0);
    int fd = raw_post_v1(body, "X-Request-ID: encode-hangup\r\n");
    free(body);
    double start = now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (rss_bytes() - before < COMPUTED_BYTES + ENCODING_SEEN_BYTES) {
        if (poll(&p, 1, 0) != 0)
            fail_msg("the reply was encoded before the client could hang up");
        if (now_ms() - start > SEEN_WAIT_MS)
            fail_msg("the encoding was not seen within %d ms", SEEN_WAIT_MS);
    }
    close(fd);
    json_decref(
        expect_logged_client_gone(g_log_path, "encode-hangup", LOG_WAIT_MS));
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest encode_stop[] = {
        cmocka_unit_test(a_client_that_hangs_up_stops_its_replys_encoding),
    };

    int failed = cmocka_run_group_tests_name(
        "encode_stop", encode_stop, encode_stop_setup, encode_stop_teardown);
    harness_done();
    return failed ? 1 : 0;
}
