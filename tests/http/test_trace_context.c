/*
 * test_trace_context.c - W3C Trace Context: a valid traceparent is joined
 * (its trace id in the reply's traceparent, beside a span of the server's
 * own, in the access log and in an error body), a valid tracestate echoed;
 * a malformed traceparent is ignored, a new trace started and the log says
 * why; a request without one starts a trace of its own.
 *
 * One group, "trace_context", on a server with the default flags, its
 * access log in a file.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <string.h>

/* The specification's example ids. */
#define TRACE_ID "4bf92f3577b34da6a3ce929d0e0e4736"
#define PARENT_ID "00f067aa0ba902b7"
#define VALID_PARENT "00-" TRACE_ID "-" PARENT_ID "-01"
/* How long a test waits for its request's log line. */
#define LOG_WAIT_MS 2000

static char g_log_path[LOG_PATH_MAX];

static int trace_setup(void **state)
{
    (void)state;
    return logged_group_start(g_log_path, "trace-context", NULL);
}

static int trace_teardown(void **state)
{
    return logged_group_stop(state, g_log_path);
}

/* The reply's traceparent split into its trace id, span id and flags;
 * fails unless it is a version-00 one with ids not all zero. */
typedef struct {
    char trace_id[33], span_id[17], flags[3];
} sent_trace;

static bool hex_not_zero(const char *s, size_t len)
{
    bool nonzero = false;
    for (size_t i = 0; i < len; i++) {
        if (!strchr("0123456789abcdef", s[i]) || !s[i])
            return false;
        nonzero |= s[i] != '0';
    }
    return nonzero;
}

static sent_trace reply_trace(const http_response *r)
{
    char value[128];
    expect(header(r, "traceparent", value, sizeof value), r);
    expect(strlen(value) == 55 && strncmp(value, "00-", 3) == 0 &&
               value[35] == '-' && value[52] == '-' &&
               hex_not_zero(value + 3, 32) && hex_not_zero(value + 36, 16) &&
               strchr("0123456789abcdef", value[53]) &&
               strchr("0123456789abcdef", value[54]),
           r);
    assert_int_equal(header_count(r, "traceparent"), 1);
    sent_trace t;
    snprintf(t.trace_id, sizeof t.trace_id, "%.32s", value + 3);
    snprintf(t.span_id, sizeof t.span_id, "%.16s", value + 36);
    snprintf(t.flags, sizeof t.flags, "%.2s", value + 53);
    return t;
}

/* The log line of request `id` (asserts it is there). */
static json_t *logged(const char *id)
{
    json_t *line = access_log_wait(g_log_path, id, LOG_WAIT_MS);
    if (!line)
        fail_msg("no access-log line for %s", id);
    return line;
}

static const char *field(json_t *line, const char *name)
{
    return json_string_value(json_object_get(line, name));
}

static void a_valid_traceparent_is_joined(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .path = "/healthz",
        .headers = {"X-Request-ID: trace-joined", "traceparent: " VALID_PARENT,
                    "tracestate: congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"}});
    expect_status(&r, 200);
    sent_trace t = reply_trace(&r);
    assert_string_equal(t.trace_id, TRACE_ID);
    assert_string_not_equal(t.span_id, PARENT_ID); /* a span of its own */
    assert_string_equal(t.flags, "01");
    char state_value[128];
    expect(header(&r, "tracestate", state_value, sizeof state_value), &r);
    assert_string_equal(state_value,
                        "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7");
    response_free(&r);
    json_t *line = logged("trace-joined");
    assert_string_equal(field(line, "trace_id"), TRACE_ID);
    assert_string_equal(field(line, "parent_id"), PARENT_ID);
    assert_string_equal(field(line, "span_id"), t.span_id);
    assert_null(json_object_get(line, "traceparent_ignored"));
    json_decref(line);
}

/* A later version's traceparent is read for the fields version 00 has
 * (the specification: a field may be appended after a '-'); its unknown
 * flags are not passed on. */
static void a_later_version_is_read_as_version_00(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.path = "/healthz",
                             .headers = {"traceparent: cc-" TRACE_ID
                                         "-" PARENT_ID "-08-what-next"}});
    expect_status(&r, 200);
    sent_trace t = reply_trace(&r);
    assert_string_equal(t.trace_id, TRACE_ID);
    assert_string_equal(t.flags, "00");
    response_free(&r);
}

/* Each traceparent the specification says to ignore, and the reason the
 * log gives. */
static const struct {
    const char *value, *why;
} ignored[] = {
    {"00-" TRACE_ID "-" PARENT_ID "-01-extra", "malformed"},
    {"00-4BF92F3577B34DA6A3CE929D0E0E4736-" PARENT_ID "-01", "malformed"},
    {"00-" TRACE_ID "-" PARENT_ID "-1", "malformed"},
    {"00_" TRACE_ID "-" PARENT_ID "-01", "malformed"},
    {"0-" TRACE_ID "-" PARENT_ID "-01", "malformed"},
    {"00-" TRACE_ID "-" PARENT_ID "-0g", "malformed"},
    {"", "malformed"},
    {"ff-" TRACE_ID "-" PARENT_ID "-01", "invalid_version"},
    {"00-00000000000000000000000000000000-" PARENT_ID "-01", "zero_trace_id"},
    {"00-" TRACE_ID "-0000000000000000-01", "zero_parent_id"},
};

static void a_malformed_traceparent_starts_a_new_trace(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++) {
        char id[64], parent[160], echoed[128];
        snprintf(id, sizeof id, "X-Request-ID: trace-ignored-%zu", i);
        /* "Name;" is how libcurl sends a header with an empty value */
        snprintf(parent, sizeof parent,
                 ignored[i].value[0] ? "traceparent: %s" : "traceparent;",
                 ignored[i].value);
        http_response r = http(&(http_request){
            .path = "/healthz",
            .headers = {id, parent, "tracestate: congo=t61rcWkgMzE"}});
        expect_status(&r, 200);
        sent_trace t = reply_trace(&r);
        assert_string_not_equal(t.trace_id, TRACE_ID);
        expect(!header(&r, "tracestate", echoed, sizeof echoed), &r);
        response_free(&r);
        json_t *line = logged(id + strlen("X-Request-ID: "));
        if (!field(line, "traceparent_ignored") ||
            strcmp(field(line, "traceparent_ignored"), ignored[i].why) != 0)
            fail_msg("traceparent \"%s\": logged %s, expected %s",
                     ignored[i].value, json_dumps(line, JSON_COMPACT),
                     ignored[i].why);
        assert_string_equal(field(line, "trace_id"), t.trace_id);
        assert_null(json_object_get(line, "parent_id"));
        json_decref(line);
    }
}

/* Two traceparent headers: which one holds is ambiguous, so neither. */
static void a_repeated_traceparent_is_ignored(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.path = "/healthz",
                             .headers = {"X-Request-ID: trace-repeated",
                                         "traceparent: " VALID_PARENT,
                                         "traceparent: " VALID_PARENT}});
    expect_status(&r, 200);
    assert_string_not_equal(reply_trace(&r).trace_id, TRACE_ID);
    response_free(&r);
    json_t *line = logged("trace-repeated");
    assert_string_equal(field(line, "traceparent_ignored"), "repeated");
    json_decref(line);
}

/* A malformed tracestate is dropped, the trace joined all the same. */
static void a_malformed_tracestate_is_dropped(void **state)
{
    (void)state;
    static const struct {
        const char *value, *why;
    } states[] = {
        {"Congo=t61rcWkgMzE", "malformed"},
        {"congo=t61r=cWkgMzE", "malformed"},
        {"congo", "malformed"},
        {"congo=a,a1=b,a2=b,a3=b,a4=b,a5=b,a6=b,a7=b,a8=b,a9=b,b1=b,b2=b,"
         "b3=b,b4=b,b5=b,b6=b,b7=b,b8=b,b9=b,c1=b,c2=b,c3=b,c4=b,c5=b,c6=b,"
         "c7=b,c8=b,c9=b,d1=b,d2=b,d3=b,d4=b,d5=b",
         "too_many_members"},
    };
    for (size_t i = 0; i < sizeof states / sizeof *states; i++) {
        char id[64], value[512], echoed[512];
        snprintf(id, sizeof id, "X-Request-ID: tracestate-%zu", i);
        snprintf(value, sizeof value, "tracestate: %s", states[i].value);
        http_response r = http(&(http_request){
            .path = "/healthz",
            .headers = {id, "traceparent: " VALID_PARENT, value}});
        expect_status(&r, 200);
        assert_string_equal(reply_trace(&r).trace_id, TRACE_ID);
        expect(!header(&r, "tracestate", echoed, sizeof echoed), &r);
        response_free(&r);
        json_t *line = logged(id + strlen("X-Request-ID: "));
        assert_string_equal(field(line, "tracestate_ignored"), states[i].why);
        json_decref(line);
    }
}

static void without_traceparent_the_server_starts_a_trace(void **state)
{
    (void)state;
    http_response a = http(&(http_request){
        .path = "/healthz", .headers = {"X-Request-ID: trace-own"}});
    http_response b = http(&(http_request){.path = "/healthz"});
    expect_status(&a, 200);
    expect_status(&b, 200);
    sent_trace ta = reply_trace(&a), tb = reply_trace(&b);
    assert_string_not_equal(ta.trace_id, tb.trace_id);
    assert_string_not_equal(ta.span_id, tb.span_id);
    response_free(&a);
    response_free(&b);
    json_t *line = logged("trace-own");
    assert_string_equal(field(line, "trace_id"), ta.trace_id);
    assert_string_equal(field(line, "span_id"), ta.span_id);
    assert_null(json_object_get(line, "parent_id"));
    assert_null(json_object_get(line, "traceparent_ignored"));
    json_decref(line);
}

/* An error body names the trace: a problem (on /v1, decided from the
 * headers or from the body) and /v2's error object. */
static void an_error_body_names_the_trace(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path, *body;
        long status;
    } errors[] = {
        {"GET", "/no-such-path", NULL, 404},
        {"POST", "/v1/attention", "{\"x\": [[1, 0], [0]]}", 400},
        {"POST", "/v2/models/attention/infer", "{\"inputs\": []}", 400},
    };
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++) {
        http_response r = http(&(http_request){
            .method = errors[i].method,
            .path = errors[i].path,
            .content_type = errors[i].body ? "application/json" : NULL,
            .body = errors[i].body,
            .headers = {"traceparent: " VALID_PARENT}});
        expect_status(&r, errors[i].status);
        json_t *body = body_json(&r);
        const char *trace =
            json_string_value(json_object_get(body, "trace_id"));
        expect(trace && strcmp(trace, TRACE_ID) == 0, &r);
        json_decref(body);
        response_free(&r);
    }
    http_response r = post_json("{");
    json_t *body = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(body, "trace_id")),
                        reply_trace(&r).trace_id);
    json_decref(body);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest trace_context[] = {
        cmocka_unit_test(a_valid_traceparent_is_joined),
        cmocka_unit_test(a_later_version_is_read_as_version_00),
        cmocka_unit_test(a_malformed_traceparent_starts_a_new_trace),
        cmocka_unit_test(a_repeated_traceparent_is_ignored),
        cmocka_unit_test(a_malformed_tracestate_is_dropped),
        cmocka_unit_test(without_traceparent_the_server_starts_a_trace),
        cmocka_unit_test(an_error_body_names_the_trace),
    };

    int failed = cmocka_run_group_tests_name("trace_context", trace_context,
                                             trace_setup, trace_teardown);
    harness_done();
    return failed ? 1 : 0;
}
