/*
 * test_healthz.c - GET /healthz answers {"status": "ok"}, HEAD the same
 * without a body.
 *
 * One group, "healthz", on a server with the default flags.
 */
#include "tests/http/harness.h"

/* ======================================================================= */
/* group "healthz"                                                         */
/* ======================================================================= */

static int healthz_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void healthz_is_ok(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/healthz"});
    expect_status(&r, 200);
    expect_content_type(&r, "application/json");
    json_t *v = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(v, "status")), "ok");
    json_decref(v);
    response_free(&r);
}

static void head_healthz_has_no_body(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "HEAD", .path = "/healthz"});
    expect_status(&r, 200);
    assert_int_equal(r.body.len, 0);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest healthz[] = {
        cmocka_unit_test(healthz_is_ok),
        cmocka_unit_test(head_healthz_has_no_body),
    };

    int failed = cmocka_run_group_tests_name("healthz", healthz, healthz_setup,
                                             group_stop);
    harness_done();
    return failed ? 1 : 0;
}
