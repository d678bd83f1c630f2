/*
 * test_oip_versions.c - the Open Inference Protocol's paths as its clients
 * write them: the model's one version, "1" (the paths tritonclient builds
 * when given a model_version, and the version its metadata lists), any
 * other version a 404 naming the one there is, GET /v2/ as GET /v2, and
 * the protocol's scheduling parameters (priority, timeout) accepted.
 *
 * One group, "oip_versions", on a server with the common flags.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <string.h>

/* A one-token problem: x (1, 1) and identity weights, as JSON data, with
 * the request parameters `params` (a JSON object's members, or ""). */
static void infer_body(char *out, size_t size, const char *params)
{
    snprintf(
        out, size,
        "{\"parameters\":{%s},\"inputs\":["
        "{\"name\":\"x\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[2]},"
        "{\"name\":\"w_q\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]},"
        "{\"name\":\"w_k\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]},"
        "{\"name\":\"w_v\",\"shape\":[1,1],\"datatype\":\"FP64\",\"data\":[1]}"
        "],\"outputs\":[{\"name\":\"output\"}]}",
        params);
}

static http_response post_infer(const char *path, const char *params)
{
    char body[1024];
    infer_body(body, sizeof body, params);
    http_request rq = {.method = "POST", .path = path, .body = body};
    return http(&rq);
}

static http_response get(const char *path)
{
    http_request rq = {.path = path};
    return http(&rq);
}

/* The protocol's 404: application/json {"error": ... holding `words`,
 * "code": "not_found"}. */
static void expect_not_found(const http_response *r, const char *words)
{
    expect_status(r, 404);
    expect_content_type(r, "application/json");
    json_t *body = body_json(r);
    const char *error = json_string_value(json_object_get(body, "error"));
    const char *code = json_string_value(json_object_get(body, "code"));
    expect(error && strstr(error, words), r);
    expect(code && strcmp(code, "not_found") == 0, r);
    json_decref(body);
}

/* The output of the one-token problem: x itself (one key, weight 1). */
static void expect_output_two(const http_response *r)
{
    expect_status(r, 200);
    json_t *body = body_json(r);
    json_t *out = json_array_get(json_object_get(body, "outputs"), 0);
    expect(strcmp(json_string_value(json_object_get(out, "name")), "output") ==
               0,
           r);
    json_t *data = json_object_get(out, "data");
    expect(json_array_size(data) == 1 &&
               json_number_value(json_array_get(data, 0)) == 2.0,
           r);
    json_decref(body);
}

static int versions_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void model_metadata_lists_version_1(void **state)
{
    (void)state;
    http_response r = get("/v2/models/attention");
    expect_status(&r, 200);
    json_t *body = body_json(&r);
    json_t *versions = json_object_get(body, "versions");
    expect(json_array_size(versions) == 1 &&
               strcmp(json_string_value(json_array_get(versions, 0)), "1") == 0,
           &r);
    json_decref(body);
    response_free(&r);
}

static void version_1_paths_answer_as_the_model_paths(void **state)
{
    (void)state;
    const char *pairs[][2] = {
        {"/v2/models/attention/versions/1", "/v2/models/attention"},
        {"/v2/models/attention/versions/1/ready", "/v2/models/attention/ready"},
        {"/v2/", "/v2"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        http_response versioned = get(pairs[i][0]);
        http_response plain = get(pairs[i][1]);
        expect_status(&versioned, 200);
        expect(strcmp(versioned.body.data, plain.body.data) == 0, &versioned);
        response_free(&versioned);
        response_free(&plain);
    }
}

static void version_1_infers(void **state)
{
    (void)state;
    http_response r = post_infer("/v2/models/attention/versions/1/infer", "");
    expect_output_two(&r);
    response_free(&r);
}

static void other_versions_are_404(void **state)
{
    (void)state;
    const char *paths[] = {"/v2/models/attention/versions/2",
                           "/v2/models/attention/versions/2/ready",
                           "/v2/models/attention/versions/0/infer"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        http_response r = get(paths[i]);
        expect_not_found(&r, "its one version is \"1\"");
        response_free(&r);
    }
    http_response r = post_infer("/v2/models/attention/versions/2/infer", "");
    expect_not_found(&r, "has no version \"2\"");
    response_free(&r);
}

static void priority_and_timeout_are_accepted(void **state)
{
    (void)state;
    http_response r = post_infer("/v2/models/attention/infer",
                                 "\"priority\":3,\"timeout\":1000000");
    expect_output_two(&r);
    response_free(&r);
}

static void a_negative_or_fractional_timeout_is_400(void **state)
{
    (void)state;
    const char *params[] = {"\"timeout\":-1", "\"timeout\":1.5",
                            "\"priority\":\"high\""};
    const char *pointers[] = {"/parameters/timeout", "/parameters/timeout",
                              "/parameters/priority"};
    for (size_t i = 0; i < sizeof params / sizeof *params; i++) {
        http_response r = post_infer("/v2/models/attention/infer", params[i]);
        expect_status(&r, 400);
        json_t *body = body_json(&r);
        const char *code = json_string_value(json_object_get(body, "code"));
        const char *ptr = json_string_value(json_object_get(body, "pointer"));
        expect(code && strcmp(code, "wrong_type") == 0, &r);
        expect(ptr && strcmp(ptr, pointers[i]) == 0, &r);
        json_decref(body);
        response_free(&r);
    }
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest oip_versions[] = {
        cmocka_unit_test(model_metadata_lists_version_1),
        cmocka_unit_test(version_1_paths_answer_as_the_model_paths),
        cmocka_unit_test(version_1_infers),
        cmocka_unit_test(other_versions_are_404),
        cmocka_unit_test(priority_and_timeout_are_accepted),
        cmocka_unit_test(a_negative_or_fractional_timeout_is_400),
    };

    int failed = cmocka_run_group_tests_name("oip_versions", oip_versions,
                                             versions_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
