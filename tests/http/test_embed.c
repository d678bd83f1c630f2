/*
 * test_embed.c - GET /embed serves the page a course platform frames, with
 * Content-Security-Policy: frame-ancestors from --frame-ancestors (any page
 * by default), and the service's own page says nothing of framing.
 *
 * Two groups: "embed" on a server with the default flags, "embed_framed"
 * with --frame-ancestors naming two sources.
 */
#include "tests/http/harness.h"

#include <string.h>

#define FRAMERS "'self' https://lms.example"

static int embed_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static int framed_setup(void **state)
{
    (void)state;
    return group_start((const char *[]){"--frame-ancestors", FRAMERS, NULL});
}

/* The page loads its module from web/, relative (a path prefix works). */
static void embed_is_a_page_any_page_may_frame(void **state)
{
    (void)state;
    char v[256];
    http_response r = http(
        &(http_request){.path = "/embed?lesson=001&stage=weights&lang=it"});
    expect_status(&r, 200);
    expect_content_type(&r, "text/html; charset=utf-8");
    expect(strstr(r.body.data, "src=\"web/embed-frame.js\"") != NULL, &r);
    assert_non_null(header(&r, "Content-Security-Policy", v, sizeof v));
    assert_string_equal(v, "frame-ancestors *");
    response_free(&r);
}

/* The visualizer keeps its own headers: no policy.  (Its assets under
 * /web/ are a prefix route the contract traffic cannot check, so this test,
 * which the contract suite records, does not ask for them.) */
static void own_page_has_no_framing_policy(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/"});
    expect_status(&r, 200);
    expect(header_count(&r, "Content-Security-Policy") == 0, &r);
    response_free(&r);
}

static void embed_names_the_flags_sources(void **state)
{
    (void)state;
    char v[256];
    http_response r = http(&(http_request){.path = "/embed"});
    expect_status(&r, 200);
    assert_non_null(header(&r, "Content-Security-Policy", v, sizeof v));
    assert_string_equal(v, "frame-ancestors " FRAMERS);
    response_free(&r);
}

/* A value that would end the directive is refused at start-up. */
static void a_second_directive_is_refused(void **state)
{
    (void)state;
    server s;
    int rc = server_start(
        &s, (const char *[]){"--frame-ancestors", "*; script-src *", NULL});
    if (rc == 0)
        server_stop(&s);
    assert_int_not_equal(rc, 0);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest embed[] = {
        cmocka_unit_test(embed_is_a_page_any_page_may_frame),
        cmocka_unit_test(own_page_has_no_framing_policy),
    };
    const struct CMUnitTest framed[] = {
        cmocka_unit_test(embed_names_the_flags_sources),
        cmocka_unit_test(a_second_directive_is_refused),
    };

    int failed =
        cmocka_run_group_tests_name("embed", embed, embed_setup, group_stop);
    failed |= cmocka_run_group_tests_name("embed_framed", framed, framed_setup,
                                          group_stop);
    harness_done();
    return failed ? 1 : 0;
}
