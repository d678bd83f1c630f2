/*
 * test_openapi_yaml.c - GET /openapi.yaml serves the API's contract.
 *
 * One group, "openapi_yaml", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <string.h>

/* ======================================================================= */
/* group "openapi_yaml"                                                    */
/* ======================================================================= */

static int openapi_yaml_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void openapi_yaml_is_served(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/openapi.yaml"});
    expect_status(&r, 200);
    expect_content_type(&r, "application/yaml");
    expect(strncmp(r.body.data, "openapi: 3", 10) == 0, &r);
    expect(strstr(r.body.data, "/v1/attention") != NULL, &r);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest openapi_yaml[] = {
        cmocka_unit_test(openapi_yaml_is_served),
    };

    int failed = cmocka_run_group_tests_name("openapi_yaml", openapi_yaml,
                                             openapi_yaml_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
