/*
 * test_request_id.c - X-Request-ID: a well-formed one is echoed, on errors too;
 * a malformed one is replaced, and the access log says why; a missing one is
 * generated, unique.
 *
 * One group, "request_id", on a server with the default flags, its access
 * log in a file.
 */
#include "tests/http/harness.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================= */
/* group "request_id"                                                      */
/* ======================================================================= */

static char g_log_path[LOG_PATH_MAX];

static int request_id_setup(void **state)
{
    (void)state;
    return logged_group_start(g_log_path, "request-id", NULL);
}

static int request_id_teardown(void **state)
{
    return logged_group_stop(state, g_log_path);
}

/* Sends X-Request-ID `sent` and expects it replaced, logged with `why`. */
static void expect_replaced(const char *sent, const char *why)
{
    char line[256];
    snprintf(line, sizeof line, "X-Request-ID: %s", sent);
    http_response r =
        http(&(http_request){.path = "/healthz", .headers = {line}});
    expect_status(&r, 200);
    char id[128];
    expect(header(&r, "X-Request-ID", id, sizeof id), &r);
    assert_string_not_equal(id, sent);
    response_free(&r);
    json_t *logged = access_log_wait(g_log_path, id, 2000);
    assert_non_null(logged);
    assert_string_equal(
        json_string_value(json_object_get(logged, "request_id_replaced")), why);
    json_decref(logged);
}

static void a_replaced_request_id_is_logged_with_why(void **state)
{
    (void)state;
    expect_replaced("{braced-id}", "invalid_characters");
    char long_id[80];
    memset(long_id, 'a', 65);
    long_id[65] = '\0';
    expect_replaced(long_id, "too_long");
}

static bool id_is_token(const char *id)
{
    if (!*id)
        return false;
    for (const char *c = id; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("-_.", *c))
            return false;
    return true;
}

static void well_formed_request_id_is_echoed(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .path = "/healthz", .headers = {"X-Request-ID: req-42_a.B"}});
    expect_status(&r, 200);
    char id[128];
    expect(header(&r, "X-Request-ID", id, sizeof id), &r);
    assert_string_equal(id, "req-42_a.B");
    assert_int_equal(header_count(&r, "X-Request-ID"), 1);
    response_free(&r);

    r = post_json("{");
    char id2[128];
    expect(header(&r, "X-Request-ID", id2, sizeof id2), &r); /* errors too */
    response_free(&r);
}

static void malformed_request_id_is_replaced(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .path = "/healthz", .headers = {"X-Request-ID: <script>x</script>"}});
    expect_status(&r, 200);
    char id[128];
    expect(header(&r, "X-Request-ID", id, sizeof id), &r);
    assert_string_not_equal(id, "<script>x</script>");
    assert_true(id_is_token(id));
    response_free(&r);
}

static void missing_request_id_is_generated_uniquely(void **state)
{
    (void)state;
    http_response a = http(&(http_request){.path = "/healthz"});
    http_response b = http(&(http_request){.path = "/healthz"});
    char id_a[128], id_b[128];
    expect(header(&a, "X-Request-ID", id_a, sizeof id_a), &a);
    expect(header(&b, "X-Request-ID", id_b, sizeof id_b), &b);
    assert_true(id_is_token(id_a));
    assert_string_not_equal(id_a, id_b);
    response_free(&a);
    response_free(&b);
}

/* The parent process id of process `pid`, from /proc, or -1. */
static long parent_of(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char stat[512];
    size_t got = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[got] = '\0';
    const char *after_name = strrchr(stat, ')'); /* "pid (comm) state ppid" */
    long ppid = -1;
    if (!after_name || sscanf(after_name + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

/* The server's own id: its process id in 8 hex digits, a dash and the
 * request's serial in decimal, one more for each request.  The process is
 * the one the harness started, or its child when that is a relay (the
 * contract-traffic suite starts the server behind a recording proxy). */
static void generated_request_id_is_pid_and_serial(void **state)
{
    (void)state;
    char id[2][128];
    for (int i = 0; i < 2; i++) {
        http_response r = http(&(http_request){.path = "/healthz"});
        expect(header(&r, "X-Request-ID", id[i], sizeof id[i]), &r);
        response_free(&r);
    }
    char prefix[16];
    assert_int_equal(strspn(id[0], "0123456789abcdef"), 8);
    assert_int_equal(id[0][8], '-');
    memcpy(prefix, id[0], 9);
    prefix[9] = '\0';
    long pid = strtol(prefix, NULL, 16);
    assert_true(pid == (long)g_srv.pid || parent_of(pid) == (long)g_srv.pid);
    assert_memory_equal(id[1], prefix, 9);
    char *end;
    unsigned long long first = strtoull(id[0] + 9, &end, 10);
    assert_true(*end == '\0' && end > id[0] + 9);
    char expected[128];
    snprintf(expected, sizeof expected, "%s%llu", prefix, first + 1);
    assert_string_equal(id[1], expected);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest request_id[] = {
        cmocka_unit_test(well_formed_request_id_is_echoed),
        cmocka_unit_test(malformed_request_id_is_replaced),
        cmocka_unit_test(missing_request_id_is_generated_uniquely),
        cmocka_unit_test(generated_request_id_is_pid_and_serial),
        cmocka_unit_test(a_replaced_request_id_is_logged_with_why),
    };

    int failed = cmocka_run_group_tests_name(
        "request_id", request_id, request_id_setup, request_id_teardown);
    harness_done();
    return failed ? 1 : 0;
}
