/*
 * test_work_cap.c - a request whose work estimate is over --max-work is
 * refused before it runs: 413 limit_exceeded at once, the detail naming
 * the estimate and the cap, on /v1 and /v2 alike; below the cap it is
 * served.  With the default cap (what one core computes in
 * --compute-timeout) the issue's request, which held both workers for
 * 28.5 s, is refused at once; and so is, with --compute-timeout 1, a
 * request of few products and a big reply, which the estimate must count
 * at what writing its numbers costs, else it is admitted and runs into
 * its deadline.
 *
 * Three groups: "cap" on a server with --max-work 1e6, "default" with the
 * default flags, "deadline" with --compute-timeout 1.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- constants -------------------------------------------------------- */

/* The "cap" group's --max-work: far above lesson 001 (a few thousand
 * operations), far below the heavy request (HEAVY_N² scores). */
#define CAP "1e+06"
/* How long a refusal decided before computing may take, on a busy
 * machine: decoding the body and nothing else. */
#define REFUSAL_MAX_MS 1000
/* The issue's request: x (8192, 1), 128 heads of 16, w_o back to width 1. */
#define ISSUE_N 8192
#define ISSUE_HEADS 128
#define ISSUE_DK 16
/* The "deadline" group's request, the issue's n 8192 x 64 heads scaled to
 * --compute-timeout 1: x (1024, 1), 12 heads of width 1, the weights
 * returned as JSON numbers: 12.6 million numbers (estimated at 3.3e10
 * operations), about 0.13 s of products and scores (2.6e9) but over 1 s
 * of a worker's time to write. */
#define DEADLINE_N 1024
#define DEADLINE_HEADS 12

/* Expects a 413 limit_exceeded whose detail names the cap, answered
 * within REFUSAL_MAX_MS of `start`. */
static void expect_over_the_cap(const http_response *r, double start,
                                const char *cap)
{
    double took = now_ms() - start;
    const char *detail = expect_problem(r, 413, "limit_exceeded", NULL);
    char want[64];
    snprintf(want, sizeof want, "at most %s (--max-work)", cap);
    expect(strstr(detail, "this request's work is estimated at ") &&
               strstr(detail, want),
           r);
    print_message("refused in %.0f ms: %s\n", took, detail);
    assert_true(took < REFUSAL_MAX_MS);
}

/* ======================================================================= */
/* group "cap": --max-work 1e6                                             */
/* ======================================================================= */

static int cap_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--max-work", CAP, NULL};
    return group_start(extra);
}

static void work_under_the_cap_is_served(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
}

static void work_over_the_cap_is_413_before_it_runs(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    double start = now_ms();
    http_response r = post_json(body);
    expect_over_the_cap(&r, start, CAP);
    response_free(&r);
    free(body);
}

static void work_over_the_cap_on_v2_is_413_too(void **state)
{
    (void)state;
    size_t n = HEAVY_N, d = HEAVY_D;
    json_t *inputs = json_array();
    const char *names[] = {"x", "w_q", "w_k", "w_v"};
    for (int i = 0; i < 4; i++) {
        size_t rows = i == 0 ? n : d;
        json_t *m = seeded_matrix(rows, d, 7 + (unsigned)i),
               *flat = json_array();
        for (size_t r = 0; r < rows; r++)
            json_array_extend(flat, json_array_get(m, r));
        json_decref(m);
        json_array_append_new(
            inputs, json_pack("{s:s, s:[I, I], s:s, s:o}", "name", names[i],
                              "shape", (json_int_t)rows, (json_int_t)d,
                              "datatype", "FP64", "data", flat));
    }
    json_t *doc = json_pack("{s:o}", "inputs", inputs);
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    double start = now_ms();
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v2/models/attention/infer",
                                           .content_type = "application/json",
                                           .body = body});
    free(body);
    expect_status(&r, 413);
    json_t *error = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(error, "code")),
                        "limit_exceeded");
    expect(strstr(json_string_value(json_object_get(error, "error")),
                  "(--max-work)"),
           &r);
    json_decref(error);
    assert_true(now_ms() - start < REFUSAL_MAX_MS);
    response_free(&r);
}

/* ======================================================================= */
/* group "default": the default cap                                        */
/* ======================================================================= */

static int default_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void the_issues_request_is_413_with_the_default_cap(void **state)
{
    (void)state;
    size_t width = ISSUE_HEADS * ISSUE_DK;
    json_t *doc = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:i, s:[s]}", "x",
        seeded_matrix(ISSUE_N, 1, 37), "w_q", seeded_matrix(1, width, 13),
        "w_k", seeded_matrix(1, width, 17), "w_v", seeded_matrix(1, width, 19),
        "w_o", seeded_matrix(width, 1, 11), "num_heads", ISSUE_HEADS, "return",
        "output");
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    double start = now_ms();
    http_response r = post_json(body);
    /* --help's default: 2e10 a second, one core, 30 s */
    expect_over_the_cap(&r, start, "6e+11");
    response_free(&r);
    free(body);
}

/* ======================================================================= */
/* group "deadline": --compute-timeout 1, the cap derived from it          */
/* ======================================================================= */

static int deadline_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--compute-timeout", "1", NULL};
    return group_start(extra);
}

static void a_reply_too_big_to_write_in_the_deadline_is_413(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:o, s:o, s:o, s:o, s:i, s:[s]}", "x",
                            seeded_matrix(DEADLINE_N, 1, 37), "w_q",
                            seeded_matrix(1, DEADLINE_HEADS, 13), "w_k",
                            seeded_matrix(1, DEADLINE_HEADS, 17), "w_v",
                            seeded_matrix(1, DEADLINE_HEADS, 19), "num_heads",
                            DEADLINE_HEADS, "return", "weights");
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    double start = now_ms();
    http_response r = post_json(body);
    /* one core's 2e10 a second for the 1 s of --compute-timeout */
    expect_over_the_cap(&r, start, "2e+10");
    response_free(&r);
    free(body);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest cap[] = {
        cmocka_unit_test(work_under_the_cap_is_served),
        cmocka_unit_test(work_over_the_cap_is_413_before_it_runs),
        cmocka_unit_test(work_over_the_cap_on_v2_is_413_too),
    };
    const struct CMUnitTest defaults[] = {
        cmocka_unit_test(the_issues_request_is_413_with_the_default_cap),
    };

    const struct CMUnitTest deadline[] = {
        cmocka_unit_test(a_reply_too_big_to_write_in_the_deadline_is_413),
    };

    int failed = 0;
    failed += cmocka_run_group_tests_name("cap", cap, cap_setup, group_stop);
    failed += cmocka_run_group_tests_name("default", defaults, default_setup,
                                          group_stop);
    failed += cmocka_run_group_tests_name("deadline", deadline, deadline_setup,
                                          group_stop);
    harness_done();
    return failed ? 1 : 0;
}
