/*
 * test_web_assets.c - GET /web/NAME serves the visualizer's stylesheet and
 * modules, each with the type a browser needs to use it.
 *
 * One group, "web_assets", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <string.h>

/* ======================================================================= */
/* group "web_assets"                                                      */
/* ======================================================================= */

static int web_assets_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

/* A module served as anything but JavaScript is refused by the browser. */
static void modules_are_javascript(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/web/main.js"});
    expect_status(&r, 200);
    expect_content_type(&r, "text/javascript; charset=utf-8");
    expect(strstr(r.body.data, "import ") != NULL, &r);
    response_free(&r);
}

/* fields.js is generated from the schema table at build time. */
static void fields_module_lists_the_schema(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/web/fields.js"});
    expect_status(&r, 200);
    expect(strstr(r.body.data, "{ name: \"num_heads\", kind: \"integer\"") !=
               NULL,
           &r);
    response_free(&r);
}

/* ... and the page's stage lists from the core's shapes and rule
 * (attn_stage_shape, attn_stage_applies), which the page does not retype. */
static void fields_module_lists_the_core_stages(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/web/fields.js"});
    expect_status(&r, 200);
    expect(strstr(r.body.data, "export const PAIR_STAGES = [\"scores\", "
                               "\"scaled_scores\", \"masked_scores\", "
                               "\"weights\"];") != NULL,
           &r);
    expect(strstr(r.body.data,
                  "export const KV_STAGES = [\"k\", \"v\", "
                  "\"k_rope\", \"k_cache\", \"v_cache\"];") != NULL,
           &r);
    expect(strstr(r.body.data, "export const STAGE_NEEDS = { x_pe: "
                               "[\"sinusoidal\", \"x\"], q_rope: "
                               "[\"rope\"], k_rope: [\"rope\"] };") != NULL,
           &r);
    response_free(&r);
}

static void stylesheet_is_css(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/web/style.css"});
    expect_status(&r, 200);
    expect_content_type(&r, "text/css; charset=utf-8");
    response_free(&r);
}

/* A name the page does not have is a problem, not the page. */
static void unknown_name_is_404_problem(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/web/no-such-file.js"});
    expect_status(&r, 404);
    json_t *v = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(v, "code")),
                        "not_found");
    json_decref(v);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest web_assets[] = {
        cmocka_unit_test(modules_are_javascript),
        cmocka_unit_test(fields_module_lists_the_schema),
        cmocka_unit_test(fields_module_lists_the_core_stages),
        cmocka_unit_test(stylesheet_is_css),
        cmocka_unit_test(unknown_name_is_404_problem),
    };

    int failed = cmocka_run_group_tests_name("web_assets", web_assets,
                                             web_assets_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
