/*
 * test_cors.c - a CORS preflight is 204 with the origin, method and headers
 * the browser needs (a compressed or binary upload's too), and an actual
 * response carries the origin.
 *
 * One group, "cors", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <string.h>

/* ======================================================================= */
/* group "cors"                                                            */
/* ======================================================================= */

static int cors_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void options_preflight_is_204_with_cors(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .method = "OPTIONS",
        .path = "/v1/attention",
        .headers = {"Origin: http://localhost:5173",
                    "Access-Control-Request-Method: POST",
                    "Access-Control-Request-Headers: content-type"}});
    expect_status(&r, 204);
    expect(r.body.len == 0, &r);
    char value[256];
    expect(header(&r, "Access-Control-Allow-Origin", value, sizeof value), &r);
    expect(strcmp(value, "*") == 0 ||
               strcmp(value, "http://localhost:5173") == 0,
           &r);
    expect(header(&r, "Access-Control-Allow-Methods", value, sizeof value) &&
               list_has(value, "POST"),
           &r);
    /* application/json is not a CORS-safelisted type: without this the
     * browser never sends the POST */
    expect(header(&r, "Access-Control-Allow-Headers", value, sizeof value) &&
               list_has(value, "Content-Type"),
           &r);
    response_free(&r);
}

/* What a compressed or binary upload, or a traced one, sends beside
 * Content-Type: the browser asks for each in its preflight, and sends the
 * POST only when every one is allowed. */
static void a_preflight_allows_what_coded_and_binary_uploads_send(void **state)
{
    (void)state;
    const char *paths[] = {"/v1/attention", "/v2/models/attention/infer"};
    for (size_t p = 0; p < 2; p++) {
        http_response r = http(&(http_request){
            .method = "OPTIONS",
            .path = paths[p],
            .headers = {"Origin: http://localhost:5173",
                        "Access-Control-Request-Method: POST",
                        "Access-Control-Request-Headers: content-encoding,"
                        "content-type,inference-header-content-length,"
                        "traceparent,tracestate"}});
        expect_status(&r, 204);
        char value[256];
        expect(
            header(&r, "Access-Control-Allow-Headers", value, sizeof value) &&
                list_has(value, "Content-Encoding") &&
                list_has(value, "Content-Type") &&
                list_has(value, "Inference-Header-Content-Length") &&
                list_has(value, "traceparent") && list_has(value, "tracestate"),
            &r);
        response_free(&r);
    }
}

static void cors_origin_on_actual_response(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json",
                             .body = LESSON_001,
                             .headers = {"Origin: http://localhost:5173"}});
    expect_status(&r, 200);
    char value[256];
    expect(header(&r, "Access-Control-Allow-Origin", value, sizeof value), &r);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest cors[] = {
        cmocka_unit_test(options_preflight_is_204_with_cors),
        cmocka_unit_test(a_preflight_allows_what_coded_and_binary_uploads_send),
        cmocka_unit_test(cors_origin_on_actual_response),
    };

    int failed =
        cmocka_run_group_tests_name("cors", cors, cors_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
