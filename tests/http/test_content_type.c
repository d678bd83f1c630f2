/*
 * test_content_type.c - POST /v1/attention takes application/json (with
 * parameters) and answers 415 to any other type or none.
 *
 * One group, "content_type", on a server with the default flags.
 */
#include "tests/http/harness.h"

/* ======================================================================= */
/* group "content_type"                                                    */
/* ======================================================================= */

static int content_type_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void wrong_content_type_is_415(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "text/plain",
                                           .body = LESSON_001});
    expect_problem(&r, 415, "unsupported_media_type", NULL);
    response_free(&r);
}

static void missing_content_type_is_415(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .method = "POST", .path = "/v1/attention", .body = LESSON_001});
    expect_problem(&r, 415, "unsupported_media_type", NULL);
    response_free(&r);
}

static void json_content_type_with_charset_is_accepted(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json; charset=utf-8",
                             .body = LESSON_001});
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest content_type[] = {
        cmocka_unit_test(wrong_content_type_is_415),
        cmocka_unit_test(missing_content_type_is_415),
        cmocka_unit_test(json_content_type_with_charset_is_accepted),
    };

    int failed = cmocka_run_group_tests_name("content_type", content_type,
                                             content_type_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
