/*
 * test_static_coding.c - the embedded assets (GET /, GET /web/NAME, GET
 * /openapi.yaml) come gzip or deflate as Accept-Encoding asks, inflate to
 * exactly the files built into the binary, and are compressed once, at
 * start-up, not per request: asking for them coded again and again adds
 * nothing to attention_reply_compressions_total, which a computed reply
 * compressed does add to.  A client that does not ask gets the file as it
 * is.
 *
 * One group, "static_coding", on a server with the common flags; the files
 * are read from the source tree (the tests run from the repository's top).
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Requests for each coded asset while the counter is watched. */
#define REPEATS 5

/* Each asset: its path and the file it is built from; form.js and the
 * index are over REPLY_CODING_MIN_BYTES, so coded for any client that asks. */
static const struct {
    const char *path, *file;
} assets[] = {
    {"/", "server/web/index.html"},
    {"/web/form.js", "server/web/form.js"},
    {"/openapi.yaml", "openapi.yaml"},
};
#define ASSET_COUNT (sizeof assets / sizeof assets[0])

static const struct {
    const char *name;
    int bits;
} codings[] = {{"gzip", GZIP_BITS}, {"deflate", ZLIB_BITS}};

/* The file at path, whole. */
static bytes file_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (run from the repository's top)", path);
    bytes b = {0};
    char chunk[16 << 10];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        bytes_append(&b, chunk, n);
    fclose(f);
    return b;
}

/* GET path with Accept-Encoding: accept (NULL: no such header). */
static http_response get_accepting(const char *path, const char *accept)
{
    char line[128];
    snprintf(line, sizeof line, "Accept-Encoding: %s", accept ? accept : "");
    return http(
        &(http_request){.path = path, .headers = {accept ? line : NULL}});
}

/* attention_reply_compressions_total from GET /metrics, or -1. */
static long compressions(void)
{
    http_response r = http(&(http_request){.path = "/metrics"});
    static const char series[] = "\nattention_reply_compressions_total ";
    const char *at = strstr(r.body.data, series);
    long n = r.status == 200 && at ? strtol(at + strlen(series), NULL, 10) : -1;
    response_free(&r);
    return n;
}

/* GET path coded as `coding` asks: the reply says so, varies on
 * Accept-Encoding, and inflates to exactly `file`. */
static http_response expect_coded(const char *path, const char *coding,
                                  int bits, const bytes *file)
{
    http_response r = get_accepting(path, coding);
    expect_status(&r, 200);
    char value[32];
    expect(strcmp(coding_of(&r, value, sizeof value), coding) == 0, &r);
    char vary[128];
    expect(header(&r, "Vary", vary, sizeof vary) &&
               list_has(vary, "Accept-Encoding"),
           &r);
    expect(r.body.len < file->len, &r);
    bytes body = inflated(&r, bits);
    expect(body.len == file->len &&
               memcmp(body.data, file->data, body.len) == 0,
           &r);
    free(body.data);
    return r;
}

/* ======================================================================= */
/* group "static_coding"                                                   */
/* ======================================================================= */

static int static_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void each_asset_inflates_to_its_file_in_both_codings(void **state)
{
    (void)state;
    for (size_t a = 0; a < ASSET_COUNT; a++) {
        bytes file = file_bytes(assets[a].file);
        for (size_t c = 0; c < 2; c++) {
            http_response first = expect_coded(assets[a].path, codings[c].name,
                                               codings[c].bits, &file);
            http_response again = expect_coded(assets[a].path, codings[c].name,
                                               codings[c].bits, &file);
            expect(again.body.len == first.body.len &&
                       memcmp(again.body.data, first.body.data,
                              first.body.len) == 0,
                   &again);
            response_free(&again);
            response_free(&first);
        }
        free(file.data);
    }
}

static void a_client_that_does_not_ask_gets_the_file_as_it_is(void **state)
{
    (void)state;
    for (size_t a = 0; a < ASSET_COUNT; a++) {
        bytes file = file_bytes(assets[a].file);
        http_response r = get_accepting(assets[a].path, NULL);
        expect_status(&r, 200);
        char value[32];
        expect(strcmp(coding_of(&r, value, sizeof value), "none") == 0, &r);
        expect(r.body.len == file.len &&
                   memcmp(r.body.data, file.data, file.len) == 0,
               &r);
        response_free(&r);
        free(file.data);
    }
}

/* The assets were compressed at start-up: serving them coded compresses
 * nothing more, a small one to a client refusing identity included. */
static void coded_assets_are_not_compressed_again(void **state)
{
    (void)state;
    long before = compressions();
    expect(before >= 0, &(http_response){0});
    for (int i = 0; i < REPEATS; i++)
        for (size_t a = 0; a < ASSET_COUNT; a++)
            for (size_t c = 0; c < 2; c++) {
                http_response r =
                    get_accepting(assets[a].path, codings[c].name);
                expect_status(&r, 200);
                response_free(&r);
            }
    http_response small = get_accepting("/web/state.js", "gzip, identity;q=0");
    char value[32];
    expect(strcmp(coding_of(&small, value, sizeof value), "gzip") == 0, &small);
    response_free(&small);
    assert_int_equal(compressions(), before);
}

/* Before any reply is compressed the counter is 0: the assets' forms,
 * compressed at start-up, are no replies. */
static void start_up_compressions_are_not_counted(void **state)
{
    (void)state;
    assert_int_equal(compressions(), 0);
}

/* The counter counts: a computed reply coded for its client adds one. */
static void a_computed_reply_coded_counts_one_compression(void **state)
{
    (void)state;
    long before = compressions();
    http_response r = http(
        &(http_request){.method = "POST",
                        .path = "/v1/attention",
                        .content_type = "application/json",
                        .body = LESSON_001,
                        .headers = {"Accept-Encoding: gzip, identity;q=0"}});
    expect_status(&r, 200);
    char value[32];
    expect(strcmp(coding_of(&r, value, sizeof value), "gzip") == 0, &r);
    response_free(&r);
    assert_int_equal(compressions(), before + 1);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest static_coding[] = {
        cmocka_unit_test(start_up_compressions_are_not_counted),
        cmocka_unit_test(each_asset_inflates_to_its_file_in_both_codings),
        cmocka_unit_test(a_client_that_does_not_ask_gets_the_file_as_it_is),
        cmocka_unit_test(coded_assets_are_not_compressed_again),
        cmocka_unit_test(a_computed_reply_coded_counts_one_compression),
    };

    int failed = cmocka_run_group_tests_name("static_coding", static_coding,
                                             static_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
