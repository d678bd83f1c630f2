/*
 * test_parse_budget.c - what parsing a body may hold is what its reservation
 * says (server/base/parse_budget.h): jansson's tree of a body of objects,
 * empty arrays or short strings, which costs more than the reservation, is
 * refused with 413 limit_exceeded on both routes and by both parsers; a body
 * whose tree fits keeps its usual answer; a valid body of the densest
 * numbers decodes with jansson alone.  The accounting is installed as the
 * server installs it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/json/decode.h"
#include "server/oip/oip_codec.h"
#include "server/base/parse_budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const request_limits limits = {.max_tokens = 64,
                                      .max_width = 64,
                                      .max_heads = 8,
                                      .max_elements = 1 << 20,
                                      .max_request_memory = 1 << 24};

/* Bodies of about this size: far past the reservation's 16 KiB floor, and
 * past the reused parser's size, so that the fast path's own DOM is charged
 * too. */
#define BODY_BYTES (256 << 10)

/* Patterns whose tree jansson builds past the account of 32 bytes a byte
 * (bytes of tree per body byte, make parse-cost: 83, 56, 51, 46, 45). */
static const char *const too_costly[] = {"{},", "[[]],", "[],", "[1],",
                                         "{\"a\":0},"};

/* "<head>[<pattern> × as many as fit BODY_BYTES, 0]<tail>" (caller frees). */
static char *repeated(const char *head, const char *pattern, const char *tail,
                      size_t *len)
{
    size_t hl = strlen(head), pl = strlen(pattern), tl = strlen(tail);
    size_t count = BODY_BYTES / pl;
    char *body = malloc(hl + 1 + count * pl + 2 + tl + 1);
    assert_non_null(body);
    char *at = body;
    memcpy(at, head, hl);
    at += hl;
    *at++ = '[';
    for (size_t i = 0; i < count; i++, at += pl)
        memcpy(at, pattern, pl);
    memcpy(at, "0]", 2);
    at += 2;
    memcpy(at, tail, tl + 1);
    *len = (size_t)(at - body) + tl;
    return body;
}

#define V1_HEAD                                                                \
    "{\"x\":[[1]],\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]],\"tokens\":"
#define V2_INPUT(name)                                                         \
    "{\"name\":\"" name "\",\"shape\":[1,1],\"datatype\":\"FP64\","            \
    "\"data\":[1]}"
#define V2_HEAD                                                                \
    "{\"inputs\":[" V2_INPUT("x") "," V2_INPUT("w_q") "," V2_INPUT(            \
        "w_k") "," V2_INPUT("w_v") "],\"parameters\":{\"window\":"

/* decode_request, with the fast parser first (jansson == 0) or jansson
 * alone: its verdict in err (ERR_NONE when accepted). */
static void decode_v1(const char *body, size_t len, int jansson,
                      codec_error *err)
{
    decode_options options = {NULL, SIZE_MAX, jansson != 0};
    api_request req;
    memset(err, 0, sizeof *err);
    if (decode_request(body, len, &limits, &options, &req, err)) {
        api_request_free(&req);
        err->code = ERR_NONE;
    }
}

static void decode_v2(const char *body, size_t len, int jansson,
                      codec_error *err)
{
    api_request req;
    oip_reply_plan plan;
    memset(err, 0, sizeof *err);
    bool ok =
        jansson ? oip_decode_jansson(body, len, len, &limits, &req, &plan, err)
                : oip_decode(body, len, len, &limits, &req, &plan, err);
    if (ok) {
        api_request_free(&req);
        oip_reply_plan_free(&plan);
        err->code = ERR_NONE;
    }
}

static void a_tree_past_the_reservation_is_refused_with_413(void **state)
{
    (void)state;
    for (size_t p = 0; p < sizeof too_costly / sizeof *too_costly; p++) {
        size_t v1_len, v2_len;
        char *v1 = repeated(V1_HEAD, too_costly[p], "}", &v1_len);
        char *v2 = repeated(V2_HEAD, too_costly[p], "}}", &v2_len);
        for (int jansson = 0; jansson < 2; jansson++) {
            codec_error err;
            decode_v1(v1, v1_len, jansson, &err);
            if (err.code != ERR_LIMIT_EXCEEDED || err.pointer[0] != '\0')
                fail_msg("/v1 tokens of %s (jansson alone: %d): %s '%s'",
                         too_costly[p], jansson,
                         error_code_info(err.code)->name, err.pointer);
            assert_non_null(strstr(err.detail, "too many objects, arrays"));
            decode_v2(v2, v2_len, jansson, &err);
            if (err.code != ERR_LIMIT_EXCEEDED)
                fail_msg("/v2 window of %s (jansson alone: %d): %s '%s'",
                         too_costly[p], jansson,
                         error_code_info(err.code)->name, err.pointer);
        }
        free(v1);
        free(v2);
    }
}

/* "0," (28 bytes of tree a byte at most) and "\"a\"," (26) fit: the body is
 * read whole and refused for what it holds, as any body is. */
static void a_tree_within_the_reservation_keeps_its_answer(void **state)
{
    (void)state;
    size_t len;
    char *numbers = repeated(V1_HEAD, "0,", "}", &len);
    char *labels = repeated(V1_HEAD, "\"a\",", "}", &len);
    codec_error err;
    for (int jansson = 0; jansson < 2; jansson++) {
        decode_v1(numbers, strlen(numbers), jansson, &err);
        assert_int_equal(err.code, ERR_WRONG_TYPE);
        assert_string_equal(err.pointer, "/tokens/0");
        decode_v1(labels, strlen(labels), jansson, &err);
        assert_int_equal(err.code, ERR_WRONG_TYPE);
        char last[32];
        snprintf(last, sizeof last, "/tokens/%d", BODY_BYTES / 4);
        assert_string_equal(err.pointer, last);
    }
    free(numbers);
    free(labels);
}

/* Valid numbers of one digit each ("0,", 28 bytes of tree a byte): x (1, 64)
 * and weights (64, 64) decode with jansson alone within the account. */
static void one_digit_numbers_decode_with_jansson_alone(void **state)
{
    (void)state;
    char row[64 * 2 + 1];
    for (int i = 0; i < 64; i++)
        memcpy(row + 2 * i, i < 63 ? "0," : "0]", 2);
    row[128] = '\0';
    size_t cap = 3 * 64 * 132 + 256, at = 0;
    char *body = malloc(cap);
    assert_non_null(body);
    at += (size_t)snprintf(body + at, cap - at, "{\"x\":[[%s]", row);
    static const char *const weights[] = {"w_q", "w_k", "w_v"};
    for (int w = 0; w < 3; w++) {
        at += (size_t)snprintf(body + at, cap - at, ",\"%s\":[", weights[w]);
        for (int r = 0; r < 64; r++)
            at += (size_t)snprintf(body + at, cap - at, "[%s%s", row,
                                   r < 63 ? "," : "]");
    }
    at += (size_t)snprintf(body + at, cap - at, "}");
    assert_true(at > 16 << 10); /* past the reservation's floor */
    codec_error err;
    decode_v1(body, at, 1, &err);
    if (err.code != ERR_NONE)
        fail_msg("%s %s: %s", error_code_info(err.code)->name, err.pointer,
                 err.detail);
    free(body);
}

static void the_reservation_is_36_bytes_a_byte_and_16_KiB_at_least(void **s)
{
    (void)s;
    assert_int_equal(parse_budget_need(0), 16 << 10);
    assert_int_equal(parse_budget_need(400), 16 << 10);
    assert_int_equal(parse_budget_need(1 << 20), (size_t)36 << 20);
    assert_int_equal(parse_budget_need(SIZE_MAX / 8), SIZE_MAX);
    /* the numbers' share, 4 bytes a byte, is left out of the account */
    assert_int_equal(parse_budget_account_limit(1 << 20), (size_t)32 << 20);
}

int main(void)
{
    parse_budget_install(); /* as server/main.c does */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_tree_past_the_reservation_is_refused_with_413),
        cmocka_unit_test(a_tree_within_the_reservation_keeps_its_answer),
        cmocka_unit_test(one_digit_numbers_decode_with_jansson_alone),
        cmocka_unit_test(
            the_reservation_is_36_bytes_a_byte_and_16_KiB_at_least),
    };
    return cmocka_run_group_tests_name("parse memory", tests, NULL, NULL);
}
