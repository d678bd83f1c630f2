/*
 * test_content_encoding.c - request bodies sent with Content-Encoding, as
 * tritonclient's request compression sends them: gzip and deflate are
 * inflated and answered as the same body sent plain; any other coding is
 * 415; a stream that is corrupt, cut short or followed by more bytes is
 * 400 invalid_body; and a small body that inflates past --max-body (a
 * "zip bomb") is 413 as soon as it passes it, without the server holding
 * what it would inflate to.
 *
 * One group, "content_encoding", on a server with the common flags (its
 * --max-body is the default, 16 MiB).
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

    int failed = cmocka_run_group_tests_name(
        "content_encoding", content_encoding, coding_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
