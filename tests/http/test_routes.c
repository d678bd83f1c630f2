/*
 * test_routes.c - 404 for a path no route serves, 405 with Allow for a method
 * its route does not take, and each route counted in the metrics under its
 * path.
 *
 * One group, "routes", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ======================================================================= */
/* group "routes"                                                          */
/* ======================================================================= */

static int routes_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void unknown_path_is_json_404(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/v3/nothing"});
    expect_problem(&r, 404, "not_found", NULL);
    response_free(&r);
}

static void post_to_unknown_path_is_json_404(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention/extra",
                                           .content_type = "application/json",
                                           .body = LESSON_001});
    expect_problem(&r, 404, "not_found", NULL);
    response_free(&r);
}

static void get_on_attention_is_405_with_allow(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/v1/attention"});
    expect_problem(&r, 405, "method_not_allowed", NULL);
    char allow[128];
    expect(header(&r, "Allow", allow, sizeof allow), &r);
    assert_true(list_has(allow, "POST"));
    assert_false(list_has(allow, "GET"));
    response_free(&r);
}

static void delete_on_healthz_is_405_with_allow(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "DELETE", .path = "/healthz"});
    expect_problem(&r, 405, "method_not_allowed", NULL);
    char allow[128];
    expect(header(&r, "Allow", allow, sizeof allow), &r);
    assert_true(list_has(allow, "GET"));
    assert_false(list_has(allow, "DELETE"));
    response_free(&r);
}

/* A route's metrics label is its path, a prefix route's followed by "*";
 * a path no route serves is counted as "other". */
/* GET /metrics once `line` is in it: a request is counted when
 * libmicrohttpd reports it completed, which may come after its client has
 * the whole reply (2 s at most). */
static http_response metrics_holding(const char *line)
{
    for (int tries = 0;; tries++) {
        http_response r = http(&(http_request){.path = "/metrics"});
        expect_status(&r, 200);
        if (strstr(r.body.data, line) || tries == 100)
            return r;
        response_free(&r);
        sleep_ms(20);
    }
}

static void metrics_label_each_route_by_its_path(void **state)
{
    (void)state;
    http_response asset = http(&(http_request){.path = "/web/no-such.js"});
    expect_status(&asset, 404);
    response_free(&asset);
    static const char web_404[] =
        "\nattention_requests_total{route=\"/web/*\",status=\"404\"} 1\n";
    http_response r = metrics_holding(web_404);
    static const char *const labels[] = {
        "/v1/attention", "/healthz",
        "/web/*",        "/v2/models/attention/versions/1/infer",
        "/v2/",          "/v2/*",
        "other"};
    char line[160];
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++) {
        snprintf(line, sizeof line,
                 "\nattention_request_duration_seconds_count{route=\"%s\"} ",
                 labels[i]);
        expect(strstr(r.body.data, line) != NULL, &r);
    }
    expect(strstr(r.body.data, web_404) != NULL, &r);
    response_free(&r);
}

/* Every error reply is counted by its problem code, and every code of the
 * table is listed from the start, at 0 until sent. */
static void metrics_count_refusals_by_code(void **state)
{
    (void)state;
    http_response refused =
        http(&(http_request){.method = "DELETE", .path = "/readyz"});
    expect_status(&refused, 405);
    response_free(&refused);
    static const char prefix[] =
        "\nattention_refusals_total{code=\"method_not_allowed\"} ";
    http_response r =
        metrics_holding("# TYPE attention_refusals_total counter");
    for (int tries = 0; tries < 100; tries++) {
        const char *at = strstr(r.body.data, prefix);
        if (at && strtol(at + strlen(prefix), NULL, 10) >= 1)
            break;
        response_free(&r);
        sleep_ms(20);
        r = http(&(http_request){.path = "/metrics"});
    }
    const char *at = strstr(r.body.data, prefix);
    expect(at && strtol(at + strlen(prefix), NULL, 10) >= 1, &r);
    /* never sent here: listed at 0 */
    expect(strstr(r.body.data,
                  "\nattention_refusals_total{code=\"draining\"} 0\n") != NULL,
           &r);
    response_free(&r);
}

/* The value of the series `name` (no labels) in a scrape, or -1. */
static double series_value(const http_response *r, const char *name)
{
    char line[96];
    snprintf(line, sizeof line, "\n%s ", name);
    const char *at = strstr(r->body.data, line);
    return at ? strtod(at + strlen(line), NULL) : -1;
}

/* The process's own series, as Prometheus's clients name them. */
static void metrics_have_the_process_series(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/metrics"});
    expect_status(&r, 200);
    expect(series_value(&r, "process_cpu_seconds_total") > 0, &r);
    expect(series_value(&r, "process_resident_memory_bytes") > 1e6, &r);
    expect(series_value(&r, "process_virtual_memory_bytes") > 1e6, &r);
    expect(series_value(&r, "process_open_fds") >= 3, &r);
    expect(series_value(&r, "process_max_fds") >= 3, &r);
    double start = series_value(&r, "process_start_time_seconds");
    double now = (double)time(NULL);
    expect(start > now - 3600 && start <= now + 1, &r);
    expect(strstr(r.body.data,
                  "\n# TYPE process_cpu_seconds_total counter\n") != NULL,
           &r);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest routes[] = {
        cmocka_unit_test(unknown_path_is_json_404),
        cmocka_unit_test(post_to_unknown_path_is_json_404),
        cmocka_unit_test(get_on_attention_is_405_with_allow),
        cmocka_unit_test(delete_on_healthz_is_405_with_allow),
        cmocka_unit_test(metrics_label_each_route_by_its_path),
        cmocka_unit_test(metrics_count_refusals_by_code),
        cmocka_unit_test(metrics_have_the_process_series),
    };

    int failed =
        cmocka_run_group_tests_name("routes", routes, routes_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
