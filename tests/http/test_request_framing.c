/*
 * test_request_framing.c - what frames a request: headers over the server's
 * limit are 431; two Content-Lengths, or one beside chunked, are 400 and end
 * the connection; so are two Content-Type, Authorization or
 * Inference-Header-Content-Length headers with different values (the same
 * value twice is served).  Raw sockets send what libcurl will not.
 *
 * One group, "request_framing", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include "server/http/framing.h"

#include <stdlib.h>
#include <string.h>

/* ---- constants -------------------------------------------------------- */

/* Headers above the server's 32 KiB limit (FRAMING_MAX_HEADER_BYTES), still
 * within libmicrohttpd's connection memory (FRAMING_CONNECTION_MEMORY, with
 * room for the request line and the other headers), so that the server's own
 * JSON 431 answers (beyond it the library answers by itself). */
#define HUGE_HEADER_BYTES (40 * 1024)
_Static_assert(HUGE_HEADER_BYTES > FRAMING_MAX_HEADER_BYTES &&
                   HUGE_HEADER_BYTES + 2048 < FRAMING_CONNECTION_MEMORY,
               "the huge headers must reach our 431, not the library's");

/* The server's codes for oversized headers and ambiguous body framing. */
#define CODE_HEADERS_TOO_LARGE "headers_too_large"
#define CODE_BAD_FRAMING "bad_request"

/* ======================================================================= */
/* group "request_framing"                                                 */
/* ======================================================================= */

static int request_framing_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void content_length_with_chunked_is_400(void **state)
{
    (void)state;
    bool closed;
    http_response r = raw_exchange("POST /v1/attention HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Content-Length: 7\r\n"
                                   "Transfer-Encoding: chunked\r\n"
                                   "\r\n"
                                   "2\r\n{}\r\n0\r\n\r\n",
                                   &closed);
    expect_problem(&r, 400, CODE_BAD_FRAMING, NULL);
    expect(closed, &r);
    response_free(&r);
}

static void huge_headers_are_431(void **state)
{
    (void)state;
    char *line = malloc(HUGE_HEADER_BYTES + 32);
    assert_non_null(line);
    strcpy(line, "X-Padding: ");
    memset(line + strlen(line), 'a', HUGE_HEADER_BYTES);
    line[11 + HUGE_HEADER_BYTES] = '\0';
    http_response r =
        http(&(http_request){.path = "/healthz", .headers = {line}});
    expect_problem(&r, 431, CODE_HEADERS_TOO_LARGE, NULL);
    response_free(&r);
    free(line);
    assert_true(server_alive(&g_srv));
}

static void duplicate_content_length_is_400(void **state)
{
    (void)state;
    bool closed;
    http_response r = raw_exchange("POST /v1/attention HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Content-Length: 2\r\n"
                                   "Content-Length: 2\r\n"
                                   "\r\n"
                                   "{}",
                                   &closed);
    expect_problem(&r, 400, CODE_BAD_FRAMING, NULL);
    response_free(&r);
}

static void conflicting_content_length_is_400(void **state)
{
    (void)state;
    bool closed;
    /* request smuggling shape: which length frames the next request? */
    http_response r = raw_exchange("POST /v1/attention HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Content-Length: 2\r\n"
                                   "Content-Length: 40\r\n"
                                   "\r\n"
                                   "{}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
                                   &closed);
    expect_problem(&r, 400, CODE_BAD_FRAMING, NULL);
    expect(closed, &r); /* the framing is unknown: the connection must end */
    response_free(&r);
}

/* POST `path` with lesson 001's body, its Content-Type and these extra
 * header lines ("Name: value\r\n" each); the reply. */
static http_response post_with_headers(const char *path, const char *headers,
                                       bool *closed)
{
    size_t len = strlen(LESSON_001);
    size_t size = len + strlen(headers) + 256;
    char *request = malloc(size);
    assert_non_null(request);
    snprintf(request, size,
             "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\n%sContent-Length: %zu\r\n"
             "\r\n%s",
             path, headers, len, LESSON_001);
    http_response r = raw_exchange(request, closed);
    free(request);
    return r;
}

static void two_values_of_a_single_valued_header_are_400(void **state)
{
    (void)state;
    static const struct {
        const char *path, *headers, *name;
    } cases[] = {
        {"/v1/attention", "Content-Type: text/plain\r\n", "Content-Type"},
        {"/v1/attention",
         "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n",
         "Authorization"},
        {"/v2/models/attention/infer",
         "Inference-Header-Content-Length: 10\r\n"
         "inference-header-content-length: 20\r\n",
         "Inference-Header-Content-Length"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bool closed;
        http_response r =
            post_with_headers(cases[i].path, cases[i].headers, &closed);
        expect_status(&r, 400);
        expect(strstr(r.body.data, "\"bad_request\"") &&
                   strstr(r.body.data, cases[i].name) &&
                   strstr(r.body.data, "different values"),
               &r);
        expect(closed, &r);
        response_free(&r);
    }
}

static void the_same_value_twice_is_served(void **state)
{
    (void)state;
    bool closed;
    http_response r = post_with_headers(
        "/v1/attention", "Content-Type: application/json\r\n", &closed);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest request_framing[] = {
        cmocka_unit_test(content_length_with_chunked_is_400),
        cmocka_unit_test(huge_headers_are_431),
        cmocka_unit_test(duplicate_content_length_is_400),
        cmocka_unit_test(conflicting_content_length_is_400),
        cmocka_unit_test(two_values_of_a_single_valued_header_are_400),
        cmocka_unit_test(the_same_value_twice_is_served),
    };

    int failed = cmocka_run_group_tests_name("request_framing", request_framing,
                                             request_framing_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
