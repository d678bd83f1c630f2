/*
 * test_auth.c - the bearer token of --api-key-file: the API asks for it (401
 * with a challenge), takes only the exact key, and leaves the health
 * endpoints and CORS preflights open.
 *
 * One group, "auth", on a server with --api-key-file naming a temporary file
 * that holds API_KEY.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* The key the group's server is given, and the file that holds it. */
#define API_KEY "k3y-for-the-http-tests"

static char g_api_key_path[64];

/* ======================================================================= */
/* group "auth": --api-key-file                                            */
/* ======================================================================= */

static int auth_setup(void **state)
{
    (void)state;
    snprintf(g_api_key_path, sizeof g_api_key_path,
             "/tmp/attention-test-key-XXXXXX");
    int fd = mkstemp(g_api_key_path);
    if (fd < 0)
        return -1;
    const char key[] = API_KEY "\n";
    if (write(fd, key, sizeof key - 1) != (ssize_t)(sizeof key - 1)) {
        close(fd);
        return -1;
    }
    close(fd);
    const char *extra[] = {"--api-key-file", g_api_key_path, NULL};
    return group_start(extra);
}

static int auth_teardown(void **state)
{
    unlink(g_api_key_path);
    return group_stop(state);
}

static void missing_token_is_401_with_challenge(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_problem(&r, 401, "unauthorized", NULL);
    char value[128];
    expect(header(&r, "WWW-Authenticate", value, sizeof value) &&
               strncmp(value, "Bearer", 6) == 0,
           &r);
    expect(!strstr(r.body.data, API_KEY), &r);
    response_free(&r);
}

static void wrong_token_is_401(void **state)
{
    (void)state;
    const char *tokens[] = {
        "Authorization: Bearer k3y-for-the-http-test",   /* a prefix */
        "Authorization: Bearer k3y-for-the-http-testsX", /* longer */
        ("Authorization: Basic " API_KEY),               /* wrong scheme */
    };
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
        http_response r =
            http(&(http_request){.method = "POST",
                                 .path = "/v1/attention",
                                 .content_type = "application/json",
                                 .body = LESSON_001,
                                 .headers = {tokens[i]}});
        expect_problem(&r, 401, "unauthorized", NULL);
        response_free(&r);
    }
}

static void right_token_is_served(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json",
                             .body = LESSON_001,
                             .headers = {"Authorization: Bearer " API_KEY}});
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
}

static void health_endpoints_stay_open(void **state)
{
    (void)state;
    const char *paths[] = {"/healthz", "/readyz"};
    for (size_t i = 0; i < 2; i++) {
        http_response r = http(&(http_request){.path = paths[i]});
        expect_status(&r, 200);
        response_free(&r);
    }
}

static void preflight_needs_no_token(void **state)
{
    (void)state;
    http_response r = http(
        &(http_request){.method = "OPTIONS",
                        .path = "/v1/attention",
                        .headers = {"Origin: http://localhost:5173",
                                    "Access-Control-Request-Method: POST"}});
    expect_status(&r, 204);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest auth[] = {
        cmocka_unit_test(missing_token_is_401_with_challenge),
        cmocka_unit_test(wrong_token_is_401),
        cmocka_unit_test(right_token_is_served),
        cmocka_unit_test(health_endpoints_stay_open),
        cmocka_unit_test(preflight_needs_no_token),
    };

    int failed =
        cmocka_run_group_tests_name("auth", auth, auth_setup, auth_teardown);
    harness_done();
    return failed ? 1 : 0;
}
