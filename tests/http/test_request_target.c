/*
 * test_request_target.c - the request target's forms (RFC 9112 3.2): the
 * absolute-form ("POST http://host/v1/attention"), which a server must
 * accept as a proxy's client sends it, is served as its path, whatever the
 * Host header says; "OPTIONS *" asks what the server as a whole allows
 * (200, Allow, no body); "*" with another method, another scheme, a
 * relative target, a URI without host or with a user name are 400.  Raw
 * sockets send what libcurl will not (libmicrohttpd 0.9.75 hands the
 * target over as it came).
 *
 * One group, "request_target", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

/* The request line `line`, Host: elsewhere.example and, when body is not
 * NULL, a JSON body; the reply. */
static http_response exchange(const char *line, const char *body)
{
    char head[512];
    snprintf(head, sizeof head,
             "%s\r\nHost: elsewhere.example\r\n%s%s%zu\r\n\r\n", line,
             body ? "Content-Type: application/json\r\n" : "",
             "Content-Length: ", body ? strlen(body) : 0);
    bytes request = {0};
    bytes_append(&request, head, strlen(head));
    if (body)
        bytes_append(&request, body, strlen(body));
    bool closed;
    http_response r = raw_exchange(request.data, &closed);
    free(request.data);
    return r;
}

static void an_absolute_form_post_is_served_as_its_path(void **state)
{
    (void)state;
    http_response r =
        exchange("POST http://127.0.0.1/v1/attention HTTP/1.1", LESSON_001);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
}

static void an_absolute_form_with_a_query_and_any_scheme_case(void **state)
{
    (void)state;
    http_response r =
        exchange("GET HTTPS://x:8080/healthz?probe=1 HTTP/1.1", NULL);
    expect_status(&r, 200);
    response_free(&r);
    /* an empty path is "/" */
    r = exchange("HEAD http://x HTTP/1.1", NULL);
    expect_status(&r, 200);
    response_free(&r);
}

static void an_absolute_form_refusal_names_the_path(void **state)
{
    (void)state;
    http_response r = exchange("POST http://x/healthz HTTP/1.1", "{}");
    const char *detail = expect_problem(&r, 405, "method_not_allowed", NULL);
    if (!strstr(detail, "/healthz does not accept POST"))
        fail_msg("detail does not name the path: %s", detail);
    response_free(&r);
}

static void options_asterisk_is_what_the_server_allows(void **state)
{
    (void)state;
    http_response r = exchange("OPTIONS * HTTP/1.1", NULL);
    expect_status(&r, 200);
    char allow[128], length[16];
    expect(header(&r, "Allow", allow, sizeof allow) &&
               strcmp(allow, "GET, HEAD, POST, OPTIONS") == 0,
           &r);
    expect(header(&r, "Content-Length", length, sizeof length) &&
               strcmp(length, "0") == 0,
           &r);
    response_free(&r);
}

static void targets_of_no_known_form_are_400(void **state)
{
    (void)state;
    const char *lines[] = {
        "GET * HTTP/1.1",
        "GET healthz HTTP/1.1",
        "GET ftp://x/healthz HTTP/1.1",
        "GET http:///healthz HTTP/1.1",
        "GET http://user@x/healthz HTTP/1.1",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        http_response r = exchange(lines[i], NULL);
        if (r.status != 400)
            print_error("%s\n", lines[i]);
        expect_problem(&r, 400, "bad_request", NULL);
        response_free(&r);
    }
}

int main(void)
{
    if (harness_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_absolute_form_post_is_served_as_its_path),
        cmocka_unit_test(an_absolute_form_with_a_query_and_any_scheme_case),
        cmocka_unit_test(an_absolute_form_refusal_names_the_path),
        cmocka_unit_test(options_asterisk_is_what_the_server_allows),
        cmocka_unit_test(targets_of_no_known_form_are_400),
    };
    int failed =
        cmocka_run_group_tests_name("request_target", tests, setup, group_stop);
    harness_done();
    return failed;
}
