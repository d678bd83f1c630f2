/*
 * test_accept_encoding.c - replies compressed as Accept-Encoding asks (RFC
 * 9110 §12.5.3): a big JSON reply comes gzip or deflate when the client
 * weighs that coding at least as much as none, and inflates to exactly the
 * bytes of the same reply sent plain; a small one goes out as it is unless
 * the client refuses identity; the weights choose the coding; binary
 * tensor data is never compressed; every answer says Vary:
 * Accept-Encoding.
 *
 * One group, "accept_encoding", on a server with the common flags.  The big
 * reply is BIG_N tokens' scores, weights and masked scores (about 2.4 MB of
 * JSON, many of the server's 128 KiB pieces): computed and compressed on
 * the workers with --fast-lane auto and off, on the event thread with all.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tokens of the big request: three (BIG_N, BIG_N) stages of one head. */
#define BIG_N 200

static char *big_request;

/* BIG_N tokens of width 4 with lesson 001's identity weights, causal. */
static char *make_big_request(void)
{
    bytes b = {0};
    bytes_append(&b, "{\"x\":[", 6);
    for (int i = 0; i < BIG_N; i++) {
        char row[128];
        int n =
            snprintf(row, sizeof row, "%s[%.3f,%.3f,%.3f,%.3f]", i ? "," : "",
                     (i % 7) * 0.37, (i % 5) * -0.21, (i % 3) * 0.5, i * 0.01);
        bytes_append(&b, row, (size_t)n);
    }
    static const char rest[] =
        "],\"w_q\":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"
        "\"w_k\":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"
        "\"w_v\":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"
        "\"causal\":true,"
        "\"return\":[\"scores\",\"masked_scores\",\"weights\",\"output\"]}";
    bytes_append(&b, rest, sizeof rest - 1);
    return b.data;
}

/* POSTs body to path as JSON, with Accept-Encoding: accept unless NULL. */
static http_response post_accepting(const char *path, const char *body,
                                    const char *accept)
{
    char line[128]; /* libcurl sends "Name;" as the header with no value */
    snprintf(line, sizeof line,
             accept && *accept ? "Accept-Encoding: %s" : "Accept-Encoding;%s",
             accept ? accept : "");
    http_request rq = {.method = "POST",
                       .path = path,
                       .content_type = "application/json",
                       .body = body,
                       .headers = {accept ? line : NULL}};
    return http(&rq);
}

static void expect_vary(const http_response *r)
{
    char vary[128];
    expect(header(r, "Vary", vary, sizeof vary) &&
               list_has(vary, "Accept-Encoding"),
           r);
}

/* The big request, plain and with `coding`: the coded reply says so, is
 * smaller, and inflates to the plain reply's very bytes. */
static void expect_big_reply_coded(const char *coding, int bits)
{
    http_response plain = post_accepting("/v1/attention", big_request, NULL);
    expect_status(&plain, 200);
    http_response coded = post_accepting("/v1/attention", big_request, coding);
    expect_status(&coded, 200);
    expect_content_type(&coded, "application/json");
    char value[32];
    expect(strcmp(coding_of(&coded, value, sizeof value), coding) == 0, &coded);
    expect_vary(&coded);
    expect(coded.body.len < plain.body.len / 2, &coded);
    bytes body = inflated(&coded, bits);
    expect(body.len == plain.body.len &&
               memcmp(body.data, plain.body.data, body.len) == 0,
           &coded);
    free(body.data);
    response_free(&coded);
    response_free(&plain);
}

static int accept_setup(void **state)
{
    (void)state;
    big_request = make_big_request();
    return group_start(NULL);
}

static int accept_teardown(void **state)
{
    free(big_request);
    return group_stop(state);
}

static void a_big_reply_asked_gzip_inflates_to_the_plain_reply(void **state)
{
    (void)state;
    expect_big_reply_coded("gzip", GZIP_BITS);
}

static void a_big_reply_asked_deflate_inflates_to_the_plain_reply(void **state)
{
    (void)state;
    expect_big_reply_coded("deflate", ZLIB_BITS);
}

/* A reply that TCP's first window carries anyway is not worth the time. */
static void a_small_reply_goes_out_as_it_is(void **state)
{
    (void)state;
    http_response r = post_accepting("/v1/attention", LESSON_001, "gzip");
    expect_status(&r, 200);
    char value[32];
    expect(strcmp(coding_of(&r, value, sizeof value), "none") == 0, &r);
    expect_vary(&r);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
}

static void the_weights_choose_the_coding(void **state)
{
    (void)state;
    static const struct {
        const char *accept, *coding;
    } cases[] = {
        {"gzip, deflate", "gzip"},
        {"deflate, gzip;q=0.9", "deflate"},
        {"GZIP", "gzip"},
        {"x-gzip", "gzip"},
        {"*", "gzip"},
        {"br, *;q=0.5, gzip;q=0", "deflate"},
        {"gzip ; q=0.8 , identity;q=0.2", "gzip"},
        {"gzip;q=0.5", "none"}, /* identity, unlisted, weighs 1 */
        {"gzip;q=0", "none"},
        {"br", "none"},
        {"identity", "none"},
        {"", "none"},
        {"gzip;q=1.5", "none"}, /* not a weight: the element is left out */
        {"*;q=0", "none"},      /* nothing acceptable: sent as it is */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        http_response r =
            post_accepting("/v1/attention", big_request, cases[i].accept);
        expect_status(&r, 200);
        char value[32];
        const char *got = coding_of(&r, value, sizeof value);
        if (strcmp(got, cases[i].coding) != 0) {
            show(&r);
            fail_msg("Accept-Encoding \"%s\": %s, expected %s", cases[i].accept,
                     got, cases[i].coding);
        }
        response_free(&r);
    }
}

/* identity;q=0: even a small reply, and a GET's, comes compressed. */
static void refusing_identity_compresses_any_reply(void **state)
{
    (void)state;
    http_response r =
        post_accepting("/v1/attention", LESSON_001, "identity;q=0, gzip");
    expect_status(&r, 200);
    char value[32];
    expect(strcmp(coding_of(&r, value, sizeof value), "gzip") == 0, &r);
    bytes body = inflated(&r, GZIP_BITS);
    http_response plain = post_json(LESSON_001);
    expect(body.len == plain.body.len &&
               memcmp(body.data, plain.body.data, body.len) == 0,
           &r);
    free(body.data);
    response_free(&plain);
    response_free(&r);
    http_response health = http(&(http_request){
        .path = "/healthz", .headers = {"Accept-Encoding: *, identity;q=0"}});
    expect_status(&health, 200);
    expect(strcmp(coding_of(&health, value, sizeof value), "gzip") == 0,
           &health);
    bytes text = inflated(&health, GZIP_BITS);
    expect(strstr(text.data, "\"ok\"") != NULL, &health);
    free(text.data);
    response_free(&health);
}

/* The protocol's JSON reply is compressed as /v1's; its binary tensor data
 * (doubles, which barely shrink) never is. */
static void an_inference_reply_is_compressed_unless_binary(void **state)
{
    (void)state;
    json_t *lesson = json_loads(big_request, 0, NULL);
    json_t *x = json_object_get(lesson, "x");
    json_t *flat = json_array();
    for (size_t i = 0; i < json_array_size(x); i++)
        json_array_extend(flat, json_array_get(x, i));
    char *data = json_dumps(flat, JSON_COMPACT);
    size_t body_cap = strlen(data) + 1024;
    char *body = malloc(body_cap);
    static const char *const outputs[] = {
        "[{\"name\":\"weights\"}]",
        "[{\"name\":\"weights\",\"parameters\":{\"binary_data\":true}}]"};
    for (int binary = 0; binary < 2; binary++) {
        snprintf(body, body_cap,
                 "{\"inputs\":[{\"name\":\"x\",\"shape\":[%d,4],"
                 "\"datatype\":\"FP64\",\"data\":%s},"
                 "{\"name\":\"w_q\",\"shape\":[4,4],\"datatype\":\"FP64\","
                 "\"data\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"
                 "{\"name\":\"w_k\",\"shape\":[4,4],\"datatype\":\"FP64\","
                 "\"data\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"
                 "{\"name\":\"w_v\",\"shape\":[4,4],\"datatype\":\"FP64\","
                 "\"data\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}],"
                 "\"outputs\":%s}",
                 BIG_N, data, outputs[binary]);
        http_response r =
            post_accepting("/v2/models/attention/infer", body, "gzip");
        expect_status(&r, 200);
        char value[32];
        expect(strcmp(coding_of(&r, value, sizeof value),
                      binary ? "none" : "gzip") == 0,
               &r);
        expect_vary(&r);
        response_free(&r);
    }
    free(body);
    free(data);
    json_decref(flat);
    json_decref(lesson);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest accept_encoding[] = {
        cmocka_unit_test(a_big_reply_asked_gzip_inflates_to_the_plain_reply),
        cmocka_unit_test(a_big_reply_asked_deflate_inflates_to_the_plain_reply),
        cmocka_unit_test(a_small_reply_goes_out_as_it_is),
        cmocka_unit_test(the_weights_choose_the_coding),
        cmocka_unit_test(refusing_identity_compresses_any_reply),
        cmocka_unit_test(an_inference_reply_is_compressed_unless_binary),
    };

    int failed = cmocka_run_group_tests_name("accept_encoding", accept_encoding,
                                             accept_setup, accept_teardown);
    harness_done();
    return failed ? 1 : 0;
}
