/*
 * test_stop.c - a computation stops when nobody waits for it any more: a
 * client that hangs up leaves the server's CPU idle within 100 ms and is
 * logged 499 with how long its computation ran (one that only half-closes
 * is still waited for, until it closes); past --compute-timeout the
 * request is answered 503 compute_timeout (problem+json on /v1, the Open
 * Inference Protocol's error object on /v2) and the workers are free at
 * once; OIP's `timeout` parameter (microseconds) sets a shorter deadline.
 *
 * Two groups: "hangup" on a server with the default --compute-timeout and
 * its access log in a file, and "deadline" with --compute-timeout 1 (and
 * no work cap).  The
 * long request is the shape (d 1, 128 heads of 16, w_o back to
 * width 1) at n = 4096: several seconds of work on both workers, most in
 * narrow heads.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* The long request: n tokens of width 1, LONG_HEADS heads of LONG_DK. */
#define LONG_N 4096
#define LONG_HEADS 128
#define LONG_DK 16
/* What "idle" allows: CPU the server may use in IDLE_WINDOW_MS once
 * 100 ms have passed since the client hung up (the kernel counts CPU
 * time in ticks of 10 ms; a computation left running uses two CPUs). */
#define IDLE_AFTER_MS 100
#define IDLE_WINDOW_MS 500
/* (gcc names a sanitizer build by a macro, clang by __has_feature) */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) ||           \
    defined(SANITIZED)
/* a sanitizer build (make test-asan) stops as surely but not as soon: a
 * cancelled pass's last block and the allocator's frees take part of the
 * window after a half-close and a close (docs/reliability.md has what they
 * used); a pass left running would still use the whole window on two CPUs */
#define IDLE_CPU_MAX_MS 200
#else
#define IDLE_CPU_MAX_MS 50
#endif
/* How late an answer past its deadline may come on a busy machine. */
#define DEADLINE_SLACK_MS 1000

static char g_log_path[LOG_PATH_MAX];

/* The long request's body for /v1/attention.  Caller frees. */
static char *long_body_v1(void)
{
    size_t width = LONG_HEADS * LONG_DK;
    json_t *body = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:i, s:[s]}", "x",
        seeded_matrix(LONG_N, 1, 37), "w_q", seeded_matrix(1, width, 13), "w_k",
        seeded_matrix(1, width, 17), "w_v", seeded_matrix(1, width, 19), "w_o",
        seeded_matrix(width, 1, 11), "num_heads", LONG_HEADS, "return",
        "output");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return text;
}

/* One OIP input: name, shape and the matrix's numbers flat. */
static json_t *oip_input(const char *name, size_t rows, size_t cols,
                         unsigned seed)
{
    json_t *m = seeded_matrix(rows, cols, seed), *flat = json_array();
    for (size_t i = 0; i < rows; i++)
        json_array_extend(flat, json_array_get(m, i));
    json_decref(m);
    return json_pack("{s:s, s:[I, I], s:s, s:o}", "name", name, "shape",
                     (json_int_t)rows, (json_int_t)cols, "datatype", "FP64",
                     "data", flat);
}

/* The long request for /v2/models/attention/infer, with `timeout_us` as
 * its timeout parameter (negative: none).  Caller frees. */
static char *long_body_v2(long timeout_us)
{
    size_t width = LONG_HEADS * LONG_DK;
    json_t *params = json_pack("{s:i}", "num_heads", LONG_HEADS);
    if (timeout_us >= 0)
        json_object_set_new(params, "timeout", json_integer(timeout_us));
    json_t *body = json_pack(
        "{s:[o, o, o, o, o], s:o, s:[{s:s}]}", "inputs",
        oip_input("x", LONG_N, 1, 37), oip_input("w_q", 1, width, 13),
        oip_input("w_k", 1, width, 17), oip_input("w_v", 1, width, 19),
        oip_input("w_o", width, 1, 11), "parameters", params, "outputs", "name",
        "output");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return text;
}

static http_response post_v2(const char *body)
{
    return http(&(http_request){.method = "POST",
                                .path = "/v2/models/attention/infer",
                                .content_type = "application/json",
                                .body = body});
}

/* CPU time the server process has used, in milliseconds. */
static double server_cpu_ms(void)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)g_srv.pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    /* after the command's closing parenthesis: fields 3 onwards; utime
     * and stime are fields 14 and 15 */
    const char *at = strrchr(text, ')');
    assert_non_null(at);
    unsigned long utime = 0, stime = 0;
    assert_int_equal(sscanf(at + 2,
                            "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                            "%lu %lu",
                            &utime, &stime),
                     2);
    return (double)(utime + stime) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* ======================================================================= */
/* group "hangup": a client that leaves stops its computation               */
/* ======================================================================= */

static int hangup_setup(void **state)
{
    (void)state;
    return logged_group_start(g_log_path, "stop-log", NULL);
}

static int hangup_teardown(void **state)
{
    return logged_group_stop(state, g_log_path);
}

/* Sends the long request on a raw connection with request id `id`, lets
 * it compute for a moment and hangs up; returns when it has. */
static void send_long_then_hang_up(const char *id)
{
    char *body = long_body_v1();
    char header[128];
    snprintf(header, sizeof header, "X-Request-ID: %s\r\n", id);
    int fd = raw_post_v1(body, header);
    free(body);
    /* computing by then (compute_ms in the log says it did); not asked of
     * /metrics, which with --fast-lane all may wait behind the very event
     * thread that computes */
    sleep_ms(500);
    close(fd);
}

/* The server's CPU over IDLE_WINDOW_MS, from IDLE_AFTER_MS after `event`
 * (a hang-up that just happened): at most IDLE_CPU_MAX_MS. */
static void assert_idle_after(const char *event)
{
    sleep_ms(IDLE_AFTER_MS);
    double before = server_cpu_ms();
    sleep_ms(IDLE_WINDOW_MS);
    double used = server_cpu_ms() - before;
    print_message("CPU used in the %d ms after %s's first %d ms: %.0f ms\n",
                  IDLE_WINDOW_MS, event, IDLE_AFTER_MS, used);
    assert_true(used <= IDLE_CPU_MAX_MS);
}

static void a_client_that_hangs_up_leaves_the_cpu_idle(void **state)
{
    (void)state;
    send_long_then_hang_up("hangup-idle");
    assert_idle_after("the hang-up");
}

static void
a_client_that_hangs_up_is_logged_499_with_its_compute_time(void **state)
{
    (void)state;
    double start = now_ms();
    send_long_then_hang_up("hangup-log");
    json_t *line = expect_logged_client_gone(g_log_path, "hangup-log", 5000);
    /* how far it got: it computed, and no longer than the client stayed */
    double compute_ms = json_number_value(json_object_get(line, "compute_ms"));
    assert_true(compute_ms > 0);
    assert_true(compute_ms < now_ms() - start);
    json_decref(line);
}

/* A half-close (shutdown(SHUT_WR) once the request is sent) is no hang-up:
 * the computation goes on; the close() that follows is one, and leaves the
 * CPU idle as any hang-up does. */
static void a_half_close_computes_on_and_a_close_then_stops(void **state)
{
    (void)state;
    char *body = long_body_v1();
    int fd = raw_post_v1(body, "X-Request-ID: half-then-close\r\n");
    free(body);
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    sleep_ms(500);
    json_t *early = access_log_wait(g_log_path, "half-then-close", 0);
    if (early) {
        json_decref(early);
        fail_msg("a half-closed client's request ended within 500 ms");
    }
    close(fd);
    assert_idle_after("the close");
    json_decref(expect_logged_client_gone(g_log_path, "half-then-close", 5000));
}

/* ======================================================================= */
/* group "deadline": --compute-timeout 1                                    */
/* ======================================================================= */

static int deadline_setup(void **state)
{
    (void)state;
    /* no work cap: the default, one core's rate for 1 s, would refuse the
     * long request before it runs (test_work_cap.c) */
    const char *extra[] = {"--compute-timeout", "1", "--max-work", "0", NULL};
    return group_start(extra);
}

static void past_the_compute_timeout_is_503_compute_timeout(void **state)
{
    (void)state;
    char *body = long_body_v1();
    double start = now_ms();
    http_response r = post_json(body);
    double took = now_ms() - start;
    const char *detail = expect_problem(&r, 503, "compute_timeout", NULL);
    expect(strstr(detail, "1 s after the request arrived (--compute-timeout)"),
           &r);
    char value[32]; /* the queue's wait counts: a retry may do */
    expect(header(&r, "Retry-After", value, sizeof value) && atoi(value) >= 1,
           &r);
    response_free(&r);
    free(body);
    print_message("answered after %.0f ms\n", took);
    assert_true(took < 1000 + DEADLINE_SLACK_MS);
}

static void workers_are_free_at_once_after_a_compute_timeout(void **state)
{
    (void)state;
    char *body = long_body_v1();
    http_response r = post_json(body);
    expect_problem(&r, 503, "compute_timeout", NULL);
    response_free(&r);
    free(body);
    double start = now_ms();
    r = post_json(LESSON_001);
    double took = now_ms() - start;
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
    print_message("the next request took %.0f ms\n", took);
    assert_true(took < 250);
}

static void past_the_compute_timeout_on_v2_is_the_oip_error(void **state)
{
    (void)state;
    char *body = long_body_v2(-1);
    http_response r = post_v2(body);
    free(body);
    expect_status(&r, 503);
    expect_content_type(&r, "application/json");
    json_t *doc = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(doc, "code")),
                        "compute_timeout");
    const char *error = json_string_value(json_object_get(doc, "error"));
    expect(error && strstr(error, "(--compute-timeout)"), &r);
    json_decref(doc);
    response_free(&r);
}

static void an_oip_timeout_parameter_sets_a_shorter_deadline(void **state)
{
    (void)state;
    char *body = long_body_v2(300000); /* 0.3 s, in microseconds */
    double start = now_ms();
    http_response r = post_v2(body);
    double took = now_ms() - start;
    free(body);
    expect_status(&r, 503);
    json_t *doc = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(doc, "code")),
                        "compute_timeout");
    const char *error = json_string_value(json_object_get(doc, "error"));
    expect(error && strstr(error, "0.3 s after the request arrived (the "
                                  "request's timeout parameter)"),
           &r);
    json_decref(doc);
    response_free(&r);
    assert_true(took < 300 + DEADLINE_SLACK_MS);
}

static void an_oip_timeout_parameter_must_be_whole_microseconds(void **state)
{
    (void)state;
    static const struct {
        const char *timeout;
        const char *code;
    } cases[] = {{"\"1000\"", "wrong_type"},
                 {"0.5", "wrong_type"},
                 {"-1", "wrong_type"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,1],\"datatype\":"
                 "\"FP64\",\"data\":[1]},{\"name\":\"w_q\",\"shape\":[1,1],"
                 "\"datatype\":\"FP64\",\"data\":[1]},{\"name\":\"w_k\","
                 "\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]},"
                 "{\"name\":\"w_v\",\"shape\":[1,1],\"datatype\":\"FP64\","
                 "\"data\":[1]}],\"parameters\":{\"timeout\":%s}}",
                 cases[i].timeout);
        http_response r = post_v2(body);
        expect_status(&r, 400);
        json_t *doc = body_json(&r);
        expect(strcmp(json_string_value(json_object_get(doc, "code")),
                      cases[i].code) == 0,
               &r);
        expect(strcmp(json_string_value(json_object_get(doc, "pointer")),
                      "/parameters/timeout") == 0,
               &r);
        json_decref(doc);
        response_free(&r);
    }
}

static void an_oip_timeout_parameter_in_time_is_served(void **state)
{
    (void)state;
    const char *body =
        "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,1],\"datatype\":"
        "\"FP64\",\"data\":[1]},{\"name\":\"w_q\",\"shape\":[1,1],"
        "\"datatype\":\"FP64\",\"data\":[1]},{\"name\":\"w_k\","
        "\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]},"
        "{\"name\":\"w_v\",\"shape\":[1,1],\"datatype\":\"FP64\","
        "\"data\":[2]}],\"parameters\":{\"timeout\":5000000}}";
    http_response r = post_v2(body);
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest hangup[] = {
        cmocka_unit_test(a_client_that_hangs_up_leaves_the_cpu_idle),
        cmocka_unit_test(
            a_client_that_hangs_up_is_logged_499_with_its_compute_time),
        cmocka_unit_test(a_half_close_computes_on_and_a_close_then_stops),
    };
    const struct CMUnitTest deadline[] = {
        cmocka_unit_test(past_the_compute_timeout_is_503_compute_timeout),
        cmocka_unit_test(workers_are_free_at_once_after_a_compute_timeout),
        cmocka_unit_test(past_the_compute_timeout_on_v2_is_the_oip_error),
        cmocka_unit_test(an_oip_timeout_parameter_sets_a_shorter_deadline),
        cmocka_unit_test(an_oip_timeout_parameter_must_be_whole_microseconds),
        cmocka_unit_test(an_oip_timeout_parameter_in_time_is_served),
    };

    int failed = 0;
    failed += cmocka_run_group_tests_name("hangup", hangup, hangup_setup,
                                          hangup_teardown);
    failed += cmocka_run_group_tests_name("deadline", deadline, deadline_setup,
                                          group_stop);
    harness_done();
    return failed ? 1 : 0;
}
