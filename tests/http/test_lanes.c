/*
 * test_lanes.c - which lane computes a request: with --fast-lane auto a
 * small request is computed on the event thread that received it and a
 * big one (by its body, or by its work once decoded) on the workers; off
 * and all send every request one way.  The access log's "lane" says where
 * each request was computed.
 *
 * Three groups, one per --fast-lane value, each on a server whose stderr is
 * a file the tests read.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* How long a line may take to reach the log (the access log's promise). */
#define LOG_WAIT_MS 1000
/* A small body with much work: n tokens of width 1 and 1×1 weights, the
 * output only.  About 9 KB of JSON (under the lane's 16 KiB), but n² scores
 * (2.25 M) of work: far above the lane's work limit. */
#define WIDE_N 1500

static char g_log_path[64];

/* ---- helpers ---------------------------------------------------------- */

static int lane_group_start(const char *lane)
{
    snprintf(g_log_path, sizeof g_log_path, "/tmp/http-lanes-%d.log",
             (int)getpid());
    memset(&g_srv, 0, sizeof g_srv);
    const char *extra[] = {"--fast-lane", lane, NULL};
    return server_start_logged(&g_srv, extra, g_log_path);
}

static int lane_group_stop(void **state)
{
    int failed = group_stop(state);
    unlink(g_log_path);
    return failed;
}

/* POSTs body to path with request id `id`, expects a 200, and returns the
 * lane its access-log line names (a static copy). */
static const char *lane_at(const char *path, const char *body, const char *id)
{
    char header_line[96];
    snprintf(header_line, sizeof header_line, "X-Request-ID: %s", id);
    http_response r = http(&(http_request){
        .path = path,
        .content_type = "application/json",
        .body = body,
        .headers = {header_line},
    });
    expect_status(&r, 200);
    response_free(&r);
    json_t *line = access_log_wait(g_log_path, id, LOG_WAIT_MS);
    assert_non_null(line);
    static char lane[16];
    const char *value = json_string_value(json_object_get(line, "lane"));
    snprintf(lane, sizeof lane, "%s", value ? value : "(none)");
    json_decref(line);
    return lane;
}

static const char *lane_of(const char *body, const char *id)
{
    return lane_at("/v1/attention", body, id);
}

/* The Open Inference Protocol's inference, JSON only: lesson 001's x with
 * 2×2 identity weights. */
#define OIP_INFER "/v2/models/attention/infer"
#define OIP_IDENTITY(name)                                                     \
    "{\"name\":\"" name "\",\"shape\":[2,2],\"datatype\":\"FP64\","            \
    "\"data\":[1,0,0,1]}"
#define OIP_LESSON                                                             \
    "{\"inputs\":[{\"name\":\"x\",\"shape\":[3,2],\"datatype\":\"FP64\","      \
    "\"data\":[1,0,0,1,1,1]}," OIP_IDENTITY("w_q") "," OIP_IDENTITY(           \
        "w_k") "," OIP_IDENTITY("w_v") "]}"

/* WIDE_N tokens of width 1 as an inference request, 1×1 weights, the
 * output only: a small body with much work. */
static char *wide_oip_body(void)
{
    bytes b = {0};
    char head[160];
    int len = snprintf(head, sizeof head,
                       "{\"inputs\":[{\"name\":\"x\",\"shape\":[%d,1],"
                       "\"datatype\":\"FP64\",\"data\":[",
                       WIDE_N);
    bytes_append(&b, head, (size_t)len);
    for (int i = 0; i < WIDE_N; i++) {
        char number[8];
        len = snprintf(number, sizeof number, "%s0.%d", i ? "," : "", i % 10);
        bytes_append(&b, number, (size_t)len);
    }
    const char tail[] =
        "]},{\"name\":\"w_q\",\"shape\":[1,1],\"datatype\":\"FP64\","
        "\"data\":[1]},{\"name\":\"w_k\",\"shape\":[1,1],\"datatype\":"
        "\"FP64\",\"data\":[1]},{\"name\":\"w_v\",\"shape\":[1,1],"
        "\"datatype\":\"FP64\",\"data\":[1]}],\"outputs\":[{\"name\":"
        "\"output\"}]}";
    bytes_append(&b, tail, sizeof tail - 1);
    return b.data;
}

/* WIDE_N tokens of width 1, 1×1 weights, "return": ["output"]. */
static char *wide_body(void)
{
    bytes b = {0};
    const char head[] = "{\"x\":[";
    bytes_append(&b, head, sizeof head - 1);
    for (int i = 0; i < WIDE_N; i++) {
        char row[16];
        int len = snprintf(row, sizeof row, "%s[0.%d]", i ? "," : "", i % 10);
        bytes_append(&b, row, (size_t)len);
    }
    const char tail[] = "],\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]],"
                        "\"return\":[\"output\"]}";
    bytes_append(&b, tail, sizeof tail - 1);
    return b.data;
}

/* ======================================================================= */
/* group "auto": small requests on the event thread, big ones on workers   */
/* ======================================================================= */

static int auto_setup(void **state)
{
    (void)state;
    return lane_group_start("auto");
}

static void lesson_request_is_computed_on_the_event_thread(void **state)
{
    (void)state;
    assert_string_equal(lane_of(LESSON_001, "auto-lesson"), "inline");
}

static void big_body_is_computed_on_a_worker(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    assert_string_equal(lane_of(body, "auto-heavy"), "pool");
    free(body);
}

static void small_body_with_much_work_is_computed_on_a_worker(void **state)
{
    (void)state;
    char *body = wide_body();
    assert_true(strlen(body) < 16 * 1024);
    assert_string_equal(lane_of(body, "auto-wide"), "pool");
    free(body);
}

static void oip_lesson_request_is_computed_on_the_event_thread(void **state)
{
    (void)state;
    assert_string_equal(lane_at(OIP_INFER, OIP_LESSON, "auto-oip-lesson"),
                        "inline");
}

static void oip_small_body_with_much_work_is_computed_on_a_worker(void **state)
{
    (void)state;
    char *body = wide_oip_body();
    assert_true(strlen(body) < 16 * 1024);
    assert_string_equal(lane_at(OIP_INFER, body, "auto-oip-wide"), "pool");
    free(body);
}

/* ======================================================================= */
/* group "off": every request on the workers                               */
/* ======================================================================= */

static int off_setup(void **state)
{
    (void)state;
    return lane_group_start("off");
}

static void lesson_request_is_computed_on_a_worker(void **state)
{
    (void)state;
    assert_string_equal(lane_of(LESSON_001, "off-lesson"), "pool");
}

static void oip_lesson_request_is_computed_on_a_worker(void **state)
{
    (void)state;
    assert_string_equal(lane_at(OIP_INFER, OIP_LESSON, "off-oip-lesson"),
                        "pool");
}

/* ======================================================================= */
/* group "all": every request on the event thread                          */
/* ======================================================================= */

static int all_setup(void **state)
{
    (void)state;
    return lane_group_start("all");
}

static void big_body_is_computed_on_the_event_thread(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    assert_string_equal(lane_of(body, "all-heavy"), "inline");
    free(body);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest automatic[] = {
        cmocka_unit_test(lesson_request_is_computed_on_the_event_thread),
        cmocka_unit_test(big_body_is_computed_on_a_worker),
        cmocka_unit_test(small_body_with_much_work_is_computed_on_a_worker),
        cmocka_unit_test(oip_lesson_request_is_computed_on_the_event_thread),
        cmocka_unit_test(oip_small_body_with_much_work_is_computed_on_a_worker),
    };
    const struct CMUnitTest off[] = {
        cmocka_unit_test(lesson_request_is_computed_on_a_worker),
        cmocka_unit_test(oip_lesson_request_is_computed_on_a_worker),
    };
    const struct CMUnitTest all[] = {
        cmocka_unit_test(big_body_is_computed_on_the_event_thread),
    };

    int failed = 0;
    failed += cmocka_run_group_tests_name("auto", automatic, auto_setup,
                                          lane_group_stop);
    failed +=
        cmocka_run_group_tests_name("off", off, off_setup, lane_group_stop);
    failed +=
        cmocka_run_group_tests_name("all", all, all_setup, lane_group_stop);
    harness_done();
    return failed ? 1 : 0;
}
