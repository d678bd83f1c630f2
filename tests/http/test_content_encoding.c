/*
 * test_content_encoding.c - request bodies sent with Content-Encoding, as
 * tritonclient's request compression sends them: gzip and deflate are
 * inflated and answered as the same body sent plain; any other coding is
 * 415; a stream that is corrupt, cut short or followed by more bytes is
 * 400 invalid_body; and a small body that inflates past --max-body (a
 * "zip bomb") is 413 as soon as it passes it, without the server holding
 * what it would inflate to.
 *
 * Group "content_encoding", on a server with the common flags (its
 * --max-body is the default, 16 MiB); group "coded_burst", with
 * --memory-budget 64M: of a burst of gzip bodies that each fit the budget
 * alone but not two at once, one at least is always served (an inflating
 * body reserves what its parsing needs as it grows, and the one that does
 * not fit is refused alone, giving back what it held at once).
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* zlib's windowBits for the zlib format (HTTP's deflate) and for gzip. */
#define ZLIB_BITS 15
#define GZIP_BITS (15 + 16)
/* The bomb: this many zero bytes (four times the default --max-body)
 * compress to about 64 KB. */
#define BOMB_BYTES ((size_t)64 << 20)

/* text compressed with zlib's windowBits `bits` into a malloc'd buffer
 * (*len its length). */
static unsigned char *compress_bits(const void *text, size_t text_len, int bits,
                                    size_t *len)
{
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        fail_msg("deflateInit2 failed");
    size_t cap = deflateBound(&z, (uLong)text_len);
    unsigned char *out = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)text;
    z.avail_in = (uInt)text_len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        fail_msg("deflate did not finish");
    *len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* POSTs body (len bytes) to path as JSON with Content-Encoding: coding. */
static http_response post_coded(const char *path, const void *body, size_t len,
                                const char *coding)
{
    char header[64];
    snprintf(header, sizeof header, "Content-Encoding: %s", coding);
    http_request rq = {.method = "POST",
                       .path = path,
                       .content_type = "application/json",
                       .body = body,
                       .body_len = len,
                       .headers = {header}};
    return http(&rq);
}

static void expect_lesson_answer(const char *coding, int bits)
{
    size_t len;
    unsigned char *z =
        compress_bits(LESSON_001, strlen(LESSON_001), bits, &len);
    http_response r = post_coded("/v1/attention", z, len, coding);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
    free(z);
}

static int coding_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void a_gzip_body_is_answered_as_the_plain_one(void **state)
{
    (void)state;
    expect_lesson_answer("gzip", GZIP_BITS);
}

static void a_deflate_body_is_answered_as_the_plain_one(void **state)
{
    (void)state;
    expect_lesson_answer("deflate", ZLIB_BITS);
}

/* tritonclient compresses the whole body, binary tensors and all. */
static void a_gzip_inference_request_is_answered(void **state)
{
    (void)state;
    static const char infer[] =
        "{\"inputs\":["
        "{\"name\":\"x\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[3]},"
        "{\"name\":\"w_q\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]},"
        "{\"name\":\"w_k\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]},"
        "{\"name\":\"w_v\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]}"
        "],\"outputs\":[{\"name\":\"output\"}]}";
    size_t len;
    unsigned char *z = compress_bits(infer, strlen(infer), GZIP_BITS, &len);
    http_response r = post_coded("/v2/models/attention/infer", z, len, "gzip");
    expect_status(&r, 200);
    expect(strstr(r.body.data, "\"data\":[3]") != NULL, &r);
    response_free(&r);
    free(z);
}

static void another_coding_is_415(void **state)
{
    (void)state;
    http_response r =
        post_coded("/v1/attention", LESSON_001, strlen(LESSON_001), "br");
    const char *detail =
        expect_problem(&r, 415, "unsupported_media_type", NULL);
    expect(strstr(detail, "\"br\"") != NULL, &r);
    response_free(&r);
}

static void a_corrupt_cut_or_overlong_stream_is_400(void **state)
{
    (void)state;
    size_t len;
    unsigned char *z =
        compress_bits(LESSON_001, strlen(LESSON_001), GZIP_BITS, &len);
    unsigned char *longer = malloc(len + 4);
    memcpy(longer, z, len);
    memcpy(longer + len, "junk", 4);
    struct {
        const void *body;
        size_t len;
        const char *coding, *words;
    } cases[] = {
        {z, len, "deflate", "does not decode"}, /* gzip sent as deflate */
        {z, len / 2, "gzip", "ends before its end"},
        {longer, len + 4, "gzip", "bytes follow the end"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        http_response r = post_coded("/v1/attention", cases[i].body,
                                     cases[i].len, cases[i].coding);
        const char *detail = expect_problem(&r, 400, "invalid_body", NULL);
        expect(strstr(detail, cases[i].words) != NULL, &r);
        response_free(&r);
    }
    free(longer);
    free(z);
}

/* 64 MiB of zeros sent as ~64 KB of gzip: refused once the inflated body
 * passes --max-body, and the server then answers as before. */
static void a_body_inflating_past_max_body_is_413(void **state)
{
    (void)state;
    char *zeros = calloc(1, BOMB_BYTES);
    size_t len;
    unsigned char *z = compress_bits(zeros, BOMB_BYTES, GZIP_BITS, &len);
    free(zeros);
    assert_true(len < BOMB_BYTES / 256);
    http_response r = post_coded("/v1/attention", z, len, "gzip");
    const char *detail = expect_problem(&r, 413, "body_too_large", NULL);
    expect(strstr(detail, "--max-body") != NULL, &r);
    response_free(&r);
    free(z);
    http_response again = post_json(LESSON_001);
    expect_status(&again, 200);
    response_free(&again);
}

/* ======================================================================= */
/* group "coded_burst": --memory-budget 64M                                 */
/* ======================================================================= */

/* The burst: BURST_COPIES bodies at once, BURST_ROUNDS times.  Each is
 * lesson 001 padded with spaces to BURST_BODY_BYTES (about 1.9 KB of
 * gzip): with what parsing it needs (37 bytes a byte) it fits 64 MiB alone
 * (the largest body admitted is 1,813,753 bytes), not beside another.
 * Every copy is sent but its last BURST_HELD_BACK bytes, then, once all
 * are, the rest of each: the copies are inflated side by side and end
 * together. */
#define BURST_COPIES 16
#define BURST_ROUNDS 5
#define BURST_BODY_BYTES ((size_t)1800000)
#define BURST_HELD_BACK 64
#define BURST_SIDE_BY_SIDE_MS 300

static int burst_setup(void **state)
{
    (void)state;
    static const char *const extra[] = {"--memory-budget", "64M", NULL};
    return group_start(extra);
}

/* One round: how many copies were served (200); fails on an answer other
 * than 200 or 503. */
static int burst_round(const unsigned char *z, size_t len)
{
    int fds[BURST_COPIES];
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
             "Content-Length: %zu\r\n\r\n",
             len);
    for (int i = 0; i < BURST_COPIES; i++) {
        fds[i] = raw_connect();
        assert_true(raw_send(fds[i], head, strlen(head)));
        assert_true(raw_send(fds[i], (const char *)z, len - BURST_HELD_BACK));
    }
    sleep_ms(BURST_SIDE_BY_SIDE_MS);
    for (int i = 0; i < BURST_COPIES; i++) /* a refused copy may be closed */
        raw_send(fds[i], (const char *)z + len - BURST_HELD_BACK,
                 BURST_HELD_BACK);
    int served = 0;
    for (int i = 0; i < BURST_COPIES; i++) {
        bytes raw = {0};
        bool closed;
        long status = raw_read_reply(fds[i], &raw, RAW_REPLY_WAIT_MS, &closed);
        if (status != 200 && status != 503)
            fail_msg("copy %d: %ld %.200s", i, status, raw.data);
        served += status == 200;
        free(raw.data);
        close(fds[i]);
    }
    return served;
}

static void one_of_a_burst_of_gzip_bodies_is_always_served(void **state)
{
    (void)state;
    char *text = malloc(BURST_BODY_BYTES);
    assert_non_null(text);
    memset(text, ' ', BURST_BODY_BYTES);
    memcpy(text, LESSON_001, strlen(LESSON_001) - 1); /* its brace last */
    text[BURST_BODY_BYTES - 1] = '}';
    size_t len;
    unsigned char *z = compress_bits(text, BURST_BODY_BYTES, GZIP_BITS, &len);
    free(text);
    for (int round = 0; round < BURST_ROUNDS; round++) {
        int served = burst_round(z, len);
        print_message("round %d: %d of %d served\n", round, served,
                      BURST_COPIES);
        assert_true(served >= 1);
    }
    free(z);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest content_encoding[] = {
        cmocka_unit_test(a_gzip_body_is_answered_as_the_plain_one),
        cmocka_unit_test(a_deflate_body_is_answered_as_the_plain_one),
        cmocka_unit_test(a_gzip_inference_request_is_answered),
        cmocka_unit_test(another_coding_is_415),
        cmocka_unit_test(a_corrupt_cut_or_overlong_stream_is_400),
        cmocka_unit_test(a_body_inflating_past_max_body_is_413),
    };

    const struct CMUnitTest coded_burst[] = {
        cmocka_unit_test(one_of_a_burst_of_gzip_bodies_is_always_served),
    };

    int failed = cmocka_run_group_tests_name(
        "content_encoding", content_encoding, coding_setup, group_stop);
    failed += cmocka_run_group_tests_name("coded_burst", coded_burst,
                                          burst_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
