/*
 * test_whole_numbers.c - a whole number must be written as one, over HTTP:
 * a position, a head count or a /v2 integer input written with a fraction
 * that a double rounds away (1.00000000000000001 is the double 1) is 400
 * with the field's code, its pointer and the number quoted as sent, on both
 * protocols, in a body small enough for the event thread and in one big
 * enough for its x to be parsed row by row; whole numbers written with a
 * point or an exponent (2.0, 1e0) are taken.
 *
 * One group, "whole_numbers", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int whole_numbers_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

#define W "[[1,0],[0,1]]"
/* the refusal's words for a literal and its double */
#define ROUNDED(sent, read)                                                    \
    "a whole number belongs here, and " sent                                   \
    " is not one, though a double rounds it to " read

/* A /v1 body of x (n rows of 2) and `more` members (",..."); caller frees. */
static char *v1_body(size_t n, const char *more)
{
    size_t cap = 64 + n * 24 + strlen(more) + 128;
    char *body = malloc(cap), *at = body;
    at += sprintf(at, "{\"x\":[");
    for (size_t i = 0; i < n; i++)
        at += sprintf(at, "%s[%zu.25,-1.5]", i ? "," : "", i % 7);
    sprintf(at, "],\"w_q\":" W ",\"w_k\":" W ",\"w_v\":" W "%s}", more);
    return body;
}

static void expect_v1_refusal(size_t n, const char *more, const char *code,
                              const char *pointer, const char *detail)
{
    char *body = v1_body(n, more);
    http_response r = post_json(body);
    const char *said = expect_problem(&r, 400, code, pointer);
    if (strcmp(said, detail) != 0)
        fail_msg("detail: %s", said);
    response_free(&r);
    free(body);
}

static void a_position_rounded_to_whole_is_refused_as_sent(void **state)
{
    (void)state;
    expect_v1_refusal(2, ",\"positions\":[0,1.00000000000000001]",
                      "invalid_positions", "/positions/1",
                      ROUNDED("1.00000000000000001", "1"));
    expect_v1_refusal(2, ",\"positions\":[4503599627370496.5,0]",
                      "invalid_positions", "/positions/0",
                      ROUNDED("4503599627370496.5", "4503599627370496"));
}

/* 6,000 rows of x: about 80 KB of text before the positions, parsed row
 * by row on the workers (the server splits a tensor of 64 KiB of text or
 * more), and the positions still read as they were written */
static void a_big_body_is_read_again_where_positions_sit(void **state)
{
    (void)state;
    size_t n = 6000;
    char *more = malloc(n * 8 + 64), *at = more;
    at += sprintf(at, ",\"positions\":[");
    for (size_t i = 0; i + 1 < n; i++)
        at += sprintf(at, "%zu,", i);
    sprintf(at, "5999.0000000000000001]");
    expect_v1_refusal(n, more, "invalid_positions", "/positions/5999",
                      ROUNDED("5999.0000000000000001", "5999"));
    free(more);
}

static void a_head_count_rounded_to_whole_is_refused(void **state)
{
    (void)state;
    expect_v1_refusal(2, ",\"num_heads\":1.00000000000000001",
                      "invalid_num_heads", "/num_heads",
                      ROUNDED("1.00000000000000001", "1"));
}

static void whole_numbers_with_a_point_or_an_exponent_are_taken(void **state)
{
    (void)state;
    char *body = v1_body(2, ",\"positions\":[0.0,1e0],\"num_heads\":2.0");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *doc = body_json(&r);
    expect(json_integer_value(json_object_get(doc, "num_heads")) == 2, &r);
    json_decref(doc);
    response_free(&r);
    free(body);
    /* a fraction a double rounds away where any number may stand */
    http_response x = post_json("{\"x\":[[0.99999999999999999,1e-400]],"
                                "\"w_q\":" W ",\"w_k\":" W ",\"w_v\":" W "}");
    expect_status(&x, 200);
    response_free(&x);
}

/* /v2: x, the weights, and positions (INT64) holding `data`. */
static void expect_v2_positions(const char *data, long status,
                                const char *detail)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"inputs\":["
             "{\"name\":\"x\",\"shape\":[2,2],\"datatype\":\"FP64\","
             "\"data\":[1,2,3,4]},"
             "{\"name\":\"w_q\",\"shape\":[2,2],\"datatype\":\"FP64\","
             "\"data\":[1,0,0,1]},"
             "{\"name\":\"w_k\",\"shape\":[2,2],\"datatype\":\"FP64\","
             "\"data\":[1,0,0,1]},"
             "{\"name\":\"w_v\",\"shape\":[2,2],\"datatype\":\"FP64\","
             "\"data\":[1,0,0,1]},"
             "{\"name\":\"positions\",\"shape\":[2],\"datatype\":\"INT64\","
             "\"data\":%s}]}",
             data);
    http_response r = http(&(http_request){
        .method = "POST",
        .path = "/v2/models/attention/infer",
        .content_type = "application/json",
        .body = body,
    });
    expect_status(&r, status);
    if (detail) {
        json_t *doc = body_json(&r);
        const char *code = json_string_value(json_object_get(doc, "code"));
        const char *at = json_string_value(json_object_get(doc, "pointer"));
        const char *said = json_string_value(json_object_get(doc, "error"));
        expect(code && strcmp(code, "wrong_type") == 0, &r);
        expect(at && strcmp(at, "/inputs/4/data/1") == 0, &r);
        expect(said && strcmp(said, detail) == 0, &r);
        json_decref(doc);
    }
    response_free(&r);
}

static void oip_integer_data_rounded_to_whole_is_refused(void **state)
{
    (void)state;
    expect_v2_positions("[0,1.00000000000000001]", 400,
                        ROUNDED("1.00000000000000001", "1"));
    expect_v2_positions("[0.0,1e0]", 200, NULL);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_position_rounded_to_whole_is_refused_as_sent),
        cmocka_unit_test(a_big_body_is_read_again_where_positions_sit),
        cmocka_unit_test(a_head_count_rounded_to_whole_is_refused),
        cmocka_unit_test(whole_numbers_with_a_point_or_an_exponent_are_taken),
        cmocka_unit_test(oip_integer_data_rounded_to_whole_is_refused),
    };
    return cmocka_run_group_tests_name("whole_numbers", tests,
                                       whole_numbers_setup, group_stop);
}
