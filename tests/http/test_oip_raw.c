/*
 * test_oip_raw.c - the Open Inference Protocol's framing as bytes on the wire,
 * through libcurl: a binary request (JSON header, then little-endian tensors)
 * and its binary reply, and each way such a body can be wrong, answered with
 * the protocol's {"error", "code", "pointer"} and the right 400.
 *
 * One group, "oip_raw", on a server with the common flags.  Inputs are lesson
 * 001's smaller cousin: x (3, 2) and identity weights (2, 2).
 */
#include "tests/http/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- constants -------------------------------------------------------- */

#define INFER_PATH "/v2/models/attention/infer"
/* Room for one request: a JSON header of a few hundred bytes and 144 bytes
 * of tensors. */
#define OIP_BODY_MAX 2048

/* x (3, 2) and W (2, 2), as the binary tensors carry them (row-major). */
static const double X[6] = {1, 0, 0, 1, 1, 1};
static const double EYE[4] = {1, 0, 0, 1};

/* The inputs' JSON header with x's binary_data_size as given (48 is right)
 * and `outputs` (a JSON array, or NULL for none). */
static int header_json(char *out, size_t size, int x_bytes, const char *outputs)
{
    return snprintf(out, size,
                    "{\"inputs\":["
                    "{\"name\":\"x\",\"shape\":[3,2],\"datatype\":\"FP64\","
                    "\"parameters\":{\"binary_data_size\":%d}},"
                    "{\"name\":\"w_q\",\"shape\":[2,2],\"datatype\":\"FP64\","
                    "\"parameters\":{\"binary_data_size\":32}},"
                    "{\"name\":\"w_k\",\"shape\":[2,2],\"datatype\":\"FP64\","
                    "\"parameters\":{\"binary_data_size\":32}},"
                    "{\"name\":\"w_v\",\"shape\":[2,2],\"datatype\":\"FP64\","
                    "\"parameters\":{\"binary_data_size\":32}}]%s%s}",
                    x_bytes, outputs ? ",\"outputs\":" : "",
                    outputs ? outputs : "");
}

/* A whole binary body: the header, then x's first x_bytes bytes, then the
 * three weights, then `extra` zero bytes.  Returns its length; *json_len is
 * the header's. */
static size_t binary_body(char *body, int x_bytes, size_t extra,
                          const char *outputs, size_t *json_len)
{
    int len = header_json(body, OIP_BODY_MAX, x_bytes, outputs);
    assert_true(len > 0 && len + 144 + (int)extra < OIP_BODY_MAX);
    size_t at = (size_t)len;
    *json_len = at;
    memcpy(body + at, X, (size_t)x_bytes);
    at += (size_t)x_bytes;
    for (int w = 0; w < 3; w++, at += sizeof EYE)
        memcpy(body + at, EYE, sizeof EYE);
    memset(body + at, 0, extra);
    return at + extra;
}

/* POSTs body (len bytes) to the infer route with the header length given
 * (-1: no Inference-Header-Content-Length) and Content-Type. */
static http_response post_infer(const char *body, size_t len, long json_len,
                                const char *type)
{
    char length[64];
    snprintf(length, sizeof length, "Inference-Header-Content-Length: %ld",
             json_len);
    http_request rq = {.path = INFER_PATH,
                       .content_type = type,
                       .body = body,
                       .body_len = len,
                       .headers = {json_len >= 0 ? length : NULL}};
    return http(&rq);
}

/* The protocol's error: status, application/json, and {"error": text
 * holding `words`, "code": code, "pointer": pointer}. */
static void expect_oip_error(const http_response *r, long status,
                             const char *code, const char *pointer,
                             const char *words)
{
    expect_status(r, status);
    expect_content_type(r, "application/json");
    json_t *body = body_json(r);
    const char *error = json_string_value(json_object_get(body, "error"));
    const char *got_code = json_string_value(json_object_get(body, "code"));
    const char *got_ptr = json_string_value(json_object_get(body, "pointer"));
    expect(error && strstr(error, words), r);
    expect(got_code && strcmp(got_code, code) == 0, r);
    expect(got_ptr && strcmp(got_ptr, pointer) == 0, r);
    json_decref(body);
}

/* ======================================================================= */
/* group "oip_raw"                                                         */
/* ======================================================================= */

static int oip_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

/* A binary request with a binary output: the reply's JSON header is as long
 * as its Inference-Header-Content-Length says, and the 48 bytes after it are
 * the output (3, 2) as doubles: x attends itself through identity weights. */
static void binary_request_gets_binary_output(void **state)
{
    (void)state;
    char body[OIP_BODY_MAX];
    size_t json_len;
    size_t len = binary_body(
        body, 48, 0,
        "[{\"name\":\"output\",\"parameters\":{\"binary_data\":true}}]",
        &json_len);
    http_response r =
        post_infer(body, len, (long)json_len, "application/octet-stream");
    expect_status(&r, 200);
    char value[32];
    expect(header(&r, "Inference-Header-Content-Length", value, sizeof value),
           &r);
    size_t reply_json = (size_t)strtoul(value, NULL, 10);
    expect(reply_json + 48 == r.body.len, &r);
    json_t *head = json_loadb(r.body.data, reply_json, 0, NULL);
    expect(head != NULL, &r);
    json_t *out = json_array_get(json_object_get(head, "outputs"), 0);
    expect(json_integer_value(json_object_get(
               json_object_get(out, "parameters"), "binary_data_size")) == 48,
           &r);
    double output[6];
    memcpy(output, r.body.data + reply_json, sizeof output);
    /* the lessons' attention on x with identity weights (Q = K = V = x):
     * softmax(x xᵀ / √2) @ x, row by row */
    for (int i = 0; i < 3; i++) {
        double score[3], max = -1e300, sum = 0;
        for (int j = 0; j < 3; j++) {
            score[j] =
                (X[2 * i] * X[2 * j] + X[2 * i + 1] * X[2 * j + 1]) / sqrt(2.0);
            max = score[j] > max ? score[j] : max;
        }
        for (int j = 0; j < 3; j++)
            sum += score[j] = exp(score[j] - max);
        for (int c = 0; c < 2; c++) {
            double want = 0;
            for (int j = 0; j < 3; j++)
                want += score[j] / sum * X[2 * j + c];
            expect(fabs(output[2 * i + c] - want) <= TOL_F64 * 2, &r);
        }
    }
    json_decref(head);
    response_free(&r);
}

static void header_length_past_the_body_is_400(void **state)
{
    (void)state;
    char body[OIP_BODY_MAX];
    size_t json_len;
    size_t len = binary_body(body, 48, 0, NULL, &json_len);
    http_response r =
        post_infer(body, len, (long)len + 10, "application/octet-stream");
    expect_oip_error(&r, 400, "invalid_binary_data", "",
                     "Inference-Header-Content-Length");
    response_free(&r);
}

static void binary_sizes_that_do_not_add_up_are_400(void **state)
{
    (void)state;
    char body[OIP_BODY_MAX];
    size_t json_len;
    /* 8 bytes more than the inputs' sizes */
    size_t len = binary_body(body, 48, 8, NULL, &json_len);
    http_response r =
        post_infer(body, len, (long)json_len, "application/octet-stream");
    expect_oip_error(&r, 400, "invalid_binary_data", "/inputs",
                     "add up to 144");
    response_free(&r);
    /* 16 bytes fewer: the last input runs past the body */
    r = post_infer(body, len - 16, (long)json_len, "application/octet-stream");
    expect_oip_error(&r, 400, "invalid_binary_data",
                     "/inputs/3/parameters/binary_data_size", "input w_v");
    response_free(&r);
}

static void binary_size_that_disagrees_with_the_shape_is_400(void **state)
{
    (void)state;
    char body[OIP_BODY_MAX];
    size_t json_len;
    size_t len = binary_body(body, 40, 0, NULL, &json_len);
    http_response r =
        post_infer(body, len, (long)json_len, "application/octet-stream");
    expect_oip_error(
        &r, 400, "invalid_binary_data", "/inputs/0/parameters/binary_data_size",
        "binary_data_size is 40 but shape [3, 2] of FP64 takes 48");
    response_free(&r);
}

static void fp8_and_bytes_inputs_are_400(void **state)
{
    (void)state;
    static const char *const datatypes[] = {"FP8", "BYTES"};
    for (int i = 0; i < 2; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,1],"
                 "\"datatype\":\"%s\",\"data\":[1]}]}",
                 datatypes[i]);
        http_response r = post_infer(body, 0, -1, "application/json");
        char words[64];
        snprintf(words, sizeof words, "datatype %s is not taken", datatypes[i]);
        expect_oip_error(&r, 400, "invalid_datatype", "/inputs/0/datatype",
                         words);
        response_free(&r);
    }
}

static void missing_inputs_are_400(void **state)
{
    (void)state;
    http_response r = post_infer("{\"outputs\":[]}", 0, -1, "application/json");
    expect_oip_error(&r, 400, "missing_field", "/inputs", "needs inputs");
    response_free(&r);
}

static void an_input_named_twice_is_400(void **state)
{
    (void)state;
    const char body[] =
        "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,1],\"datatype\":\"FP64\","
        "\"data\":[1]},{\"name\":\"x\",\"shape\":[1,1],\"datatype\":\"FP64\","
        "\"data\":[1]}]}";
    http_response r = post_infer(body, 0, -1, "application/json");
    expect_oip_error(&r, 400, "conflicting_fields", "/inputs/1/name",
                     "input x appears twice");
    response_free(&r);
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest oip_raw[] = {
        cmocka_unit_test(binary_request_gets_binary_output),
        cmocka_unit_test(header_length_past_the_body_is_400),
        cmocka_unit_test(binary_sizes_that_do_not_add_up_are_400),
        cmocka_unit_test(binary_size_that_disagrees_with_the_shape_is_400),
        cmocka_unit_test(fp8_and_bytes_inputs_are_400),
        cmocka_unit_test(missing_inputs_are_400),
        cmocka_unit_test(an_input_named_twice_is_400),
    };

    int failed =
        cmocka_run_group_tests_name("oip_raw", oip_raw, oip_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
