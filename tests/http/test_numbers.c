/*
 * test_numbers.c - a number the request's dtype cannot hold is refused the
 * same way whatever the dtype, the parser that reads it and the protocol:
 * 400 number_out_of_range with the pointer of that very number.  1e309 is
 * beyond a double (every JSON number is read as one first), 1e39 beyond a
 * float.
 *
 * Then results beyond the dtype: 422 non_finite_result naming the stage that
 * overflowed (an additive mask taking a visible key's score down to −∞
 * too), with advice that would help (float64 only to a float32 request).
 *
 * One group, "numbers", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tensor big enough to be parsed row by row on the workers (the server
 * splits tensors of 64 KiB of text or more): ROWS × COLS numbers of about
 * 6 characters. */
#define BIG_ROWS 512
#define BIG_COLS 32
#define BIG_BAD_ROW 300
#define BIG_BAD_COL 5

static int numbers_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

/* ---- /v1/attention ---------------------------------------------------- */

/* X (3×4) and the weights (4×2) of a small request. */
#define X_OK "[[1,0,1,0],[0,2,0,1],[1,1,1,1]]"
#define W_OK "[[1,0],[0,1],[1,0],[0,1]]"

/* A POST of x, w_k and `more` members (",..." or ""), refused with
 * number_out_of_range at `pointer`; returns the detail.  The bodies are
 * written out: jansson, which builds lesson_with()'s, refuses 1e309. */
static const char *expect_v1_out_of_range(const char *x, const char *w_k,
                                          const char *more, const char *pointer)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"x\":%s,\"w_q\":" W_OK ",\"w_k\":%s,\"w_v\":" W_OK "%s}", x,
             w_k, more);
    http_response r = post_json(body);
    const char *detail =
        expect_problem(&r, 400, "number_out_of_range", pointer);
    response_free(&r);
    return detail;
}

static void float64_beyond_a_double_points_at_the_element(void **state)
{
    (void)state;
    const char *detail = expect_v1_out_of_range(
        "[[1,0,1,0],[0,2,0,1e309],[1,1,1,1]]", W_OK, "", "/x/1/3");
    if (strcmp(detail,
               "1e309 does not fit in float64 (largest 1.79769e+308)") != 0)
        fail_msg("detail does not quote the number: %s", detail);
}

static void float64_below_minus_a_double_points_at_the_element(void **state)
{
    (void)state;
    expect_v1_out_of_range("[[1,0,1,0],[0,2,0,0],[1,-1e309,1,1]]", W_OK, "",
                           "/x/2/1");
}

static void float32_beyond_a_float_points_at_the_element(void **state)
{
    (void)state;
    expect_v1_out_of_range("[[1,0,1,0],[0,2,0,1e39],[1,1,1,1]]", W_OK,
                           ",\"dtype\":\"float32\"", "/x/1/3");
}

static void float32_beyond_a_double_points_at_the_element(void **state)
{
    (void)state;
    expect_v1_out_of_range("[[1,0,1,0],[0,2,0,1e309],[1,1,1,1]]", W_OK,
                           ",\"dtype\":\"float32\"", "/x/1/3");
}

static void a_weight_beyond_a_double_points_at_the_weight(void **state)
{
    (void)state;
    expect_v1_out_of_range(X_OK, "[[1,0],[0,1],[1,0],[0,12e999]]", "",
                           "/w_k/3/1");
}

static void float64_scale_beyond_a_double_points_at_scale(void **state)
{
    (void)state;
    expect_v1_out_of_range(X_OK, W_OK, ",\"scale\":1e999", "/scale");
}

static void float32_scale_beyond_a_double_points_at_scale(void **state)
{
    (void)state;
    expect_v1_out_of_range(X_OK, W_OK, ",\"dtype\":\"float32\",\"scale\":1e999",
                           "/scale");
}

static void float32_scale_beyond_a_float_points_at_scale(void **state)
{
    (void)state;
    expect_v1_out_of_range(X_OK, W_OK, ",\"dtype\":\"float32\",\"scale\":1e39",
                           "/scale");
}

/* A tensor parsed row by row on the workers, with 1e309 deep inside. */
static void a_big_tensor_points_at_the_element(void **state)
{
    (void)state;
    bytes body = {0};
    char cell[32];
    bytes_append(&body, "{\"x\":[", 6);
    for (int i = 0; i < BIG_ROWS; i++) {
        bytes_append(&body, i ? ",[" : "[", i ? 2 : 1);
        for (int j = 0; j < BIG_COLS; j++) {
            int n = i == BIG_BAD_ROW && j == BIG_BAD_COL
                        ? snprintf(cell, sizeof cell, "%s1e309", j ? "," : "")
                        : snprintf(cell, sizeof cell, "%s0.%04d", j ? "," : "",
                                   (i * BIG_COLS + j) % 9973);
            bytes_append(&body, cell, (size_t)n);
        }
        bytes_append(&body, "]", 1);
    }
    bytes_append(&body, "]", 1);
    const char *names[] = {"w_q", "w_k", "w_v"};
    for (int w = 0; w < 3; w++) {
        int n = snprintf(cell, sizeof cell, ",\"%s\":[", names[w]);
        bytes_append(&body, cell, (size_t)n);
        for (int j = 0; j < BIG_COLS; j++)
            bytes_append(&body, j ? ",[0.5]" : "[0.5]", j ? 6 : 5);
        bytes_append(&body, "]", 1);
    }
    bytes_append(&body, "}", 1);
    char pointer[64];
    snprintf(pointer, sizeof pointer, "/x/%d/%d", BIG_BAD_ROW, BIG_BAD_COL);
    expect_rejected(body.data, 400, "number_out_of_range", pointer);
    free(body.data);
}

/* ---- results beyond the dtype: 422, naming the stage ------------------ */

/* Two tokens of width 1: q = -7e152, k = 1e153, so every score is -7e305. */
#define FALLING                                                                \
    "\"x\":[[1],[1]],\"w_q\":[[-7e152]],\"w_k\":[[1e153]],"                    \
    "\"w_v\":[[1]]"

/* A POST of `body` answered 422 non_finite_result whose detail holds
 * `holds` and, unless NULL, not `lacks`. */
static void expect_non_finite(const char *body, const char *holds,
                              const char *lacks)
{
    http_response r = post_json(body);
    const char *detail = expect_problem(&r, 422, "non_finite_result", NULL);
    if (!strstr(detail, holds) || (lacks && strstr(detail, lacks)))
        fail_msg("detail should hold \"%s\"%s%s%s: %s", holds,
                 lacks ? " and not \"" : "", lacks ? lacks : "",
                 lacks ? "\"" : "", detail);
    response_free(&r);
}

/* -7e305 - 1.797e308 is below the largest negative double: the key would
 * read as hidden (null) though the client hid nothing. */
static void an_additive_mask_overflowing_down_is_422(void **state)
{
    (void)state;
    expect_non_finite("{" FALLING ",\"mask\":[[-1.797e308,0],[0,0]]}",
                      "the masked_scores stage is not finite", "use float64");
}

static void
an_additive_mask_overflowing_down_is_422_in_the_fused_pass(void **state)
{
    (void)state;
    expect_non_finite("{" FALLING ",\"mask\":[[0,0],[0,-1.797e308]],"
                      "\"return\":[\"output\"]}",
                      "the masked_scores stage is not finite", NULL);
}

static void an_additive_mask_overflowing_up_is_422(void **state)
{
    (void)state;
    expect_non_finite("{\"x\":[[1],[1]],\"w_q\":[[7e152]],\"w_k\":[[1e153]],"
                      "\"w_v\":[[1]],\"mask\":[[1.797e308,0],[0,0]]}",
                      "the masked_scores stage is not finite", "use float64");
}

/* The same bias on a key causal hides anyway is no error: that key's
 * weight is 0 whatever its score. */
static void an_overflow_on_a_hidden_key_is_no_error(void **state)
{
    (void)state;
    http_response r = post_json(
        "{" FALLING ",\"causal\":true,\"mask\":[[0,-1.797e308],[0,0]]}");
    expect_status(&r, 200);
    response_free(&r);
}

static void a_scale_overflow_names_scaled_scores(void **state)
{
    (void)state;
    expect_non_finite("{\"x\":[[1],[1]],\"w_q\":[[1e154]],\"w_k\":[[1e153]],"
                      "\"w_v\":[[1]],\"scale\":1e10}",
                      "the scaled_scores stage is not finite (overflow in "
                      "float64); use a smaller scale",
                      "use float64");
}

static void a_scale_overflow_in_the_fused_pass_names_scaled_scores(void **state)
{
    (void)state;
    expect_non_finite("{\"x\":[[1],[1]],\"w_q\":[[1e154]],\"w_k\":[[1e153]],"
                      "\"w_v\":[[1]],\"scale\":1e10,"
                      "\"return\":[\"output\"]}",
                      "the scaled_scores stage is not finite", "use float64");
}

static void a_float32_scale_overflow_may_use_float64(void **state)
{
    (void)state;
    expect_non_finite("{\"x\":[[1],[1]],\"w_q\":[[1e19]],\"w_k\":[[1e19]],"
                      "\"w_v\":[[1]],\"scale\":1e2,\"dtype\":\"float32\"}",
                      "the scaled_scores stage is not finite (overflow in "
                      "float32); use a smaller scale or use float64",
                      NULL);
}

static void a_product_overflow_still_names_scores(void **state)
{
    (void)state;
    expect_non_finite("{\"x\":[[1],[1]],\"w_q\":[[1e160]],\"w_k\":[[1e160]],"
                      "\"w_v\":[[1]],\"scale\":1e10}",
                      "the scores stage is not finite (overflow in float64); "
                      "scale the inputs down",
                      "use float64");
}

/* ---- the Open Inference Protocol (/v2) --------------------------------- */

/* An inference request whose x (shape [2, 2], datatype dt) has `x_data`
 * and whose parameters are `parameters` (a JSON object, or NULL), refused
 * with number_out_of_range at `pointer`. */
static void expect_oip_out_of_range(const char *dt, const char *x_data,
                                    const char *parameters, const char *pointer)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"inputs\":["
             "{\"name\":\"x\",\"shape\":[2,2],\"datatype\":\"%s\","
             "\"data\":%s},"
             "{\"name\":\"w_q\",\"shape\":[2,1],\"datatype\":\"%s\","
             "\"data\":[1,1]},"
             "{\"name\":\"w_k\",\"shape\":[2,1],\"datatype\":\"%s\","
             "\"data\":[1,1]},"
             "{\"name\":\"w_v\",\"shape\":[2,1],\"datatype\":\"%s\","
             "\"data\":[1,1]}]%s%s}",
             dt, x_data, dt, dt, dt, parameters ? ",\"parameters\":" : "",
             parameters ? parameters : "");
    http_response r = http(&(http_request){
        .method = "POST",
        .path = "/v2/models/attention/infer",
        .content_type = "application/json",
        .body = body,
    });
    expect_status(&r, 400);
    json_t *doc = body_json(&r);
    const char *code = json_string_value(json_object_get(doc, "code"));
    const char *at = json_string_value(json_object_get(doc, "pointer"));
    expect(code && strcmp(code, "number_out_of_range") == 0, &r);
    expect(at && strcmp(at, pointer) == 0, &r);
    json_decref(doc);
    response_free(&r);
}

/* A masked key of masked_scores, −∞, is the string "-inf" in the
 * protocol's JSON data (its tensor data allows strings, not null; NumPy
 * reads "-inf" as −∞), and the finite scores stay numbers. */
static void oip_masked_keys_in_json_are_minus_inf_strings(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .method = "POST",
        .path = "/v2/models/attention/infer",
        .content_type = "application/json",
        .body = "{\"parameters\":{\"causal\":true},\"inputs\":["
                "{\"name\":\"x\",\"shape\":[2,1],\"datatype\":\"FP64\","
                "\"data\":[1,2]},"
                "{\"name\":\"w_q\",\"shape\":[1,1],\"datatype\":\"FP64\","
                "\"data\":[1]},"
                "{\"name\":\"w_k\",\"shape\":[1,1],\"datatype\":\"FP64\","
                "\"data\":[1]},"
                "{\"name\":\"w_v\",\"shape\":[1,1],\"datatype\":\"FP64\","
                "\"data\":[1]}],"
                "\"outputs\":[{\"name\":\"masked_scores\"}]}",
    });
    expect_status(&r, 200);
    /* scores x·xᵀ = [[1, 2], [2, 4]], scaled by 1/√1; key 1 hidden from
     * query 0 */
    expect(strstr(r.body.data, "\"data\":[1,\"-inf\",2,4]") != NULL, &r);
    response_free(&r);
}

static void oip_fp64_beyond_a_double_points_at_the_element(void **state)
{
    (void)state;
    expect_oip_out_of_range("FP64", "[1,2,3,1e309]", NULL, "/inputs/0/data/3");
}

static void oip_fp32_beyond_a_float_points_at_the_element(void **state)
{
    (void)state;
    expect_oip_out_of_range("FP32", "[1,2,3,1e39]", NULL, "/inputs/0/data/3");
}

static void oip_fp32_nested_data_points_at_the_element(void **state)
{
    (void)state;
    expect_oip_out_of_range("FP32", "[[1,2],[-1e39,4]]", NULL,
                            "/inputs/0/data/1/0");
}

static void oip_scale_beyond_a_double_points_at_the_parameter(void **state)
{
    (void)state;
    expect_oip_out_of_range("FP64", "[1,2,3,4]", "{\"scale\":1e999}",
                            "/parameters/scale");
}

int main(void)
{
    if (harness_init() != 0)
        return 1;
    const struct CMUnitTest numbers[] = {
        cmocka_unit_test(float64_beyond_a_double_points_at_the_element),
        cmocka_unit_test(float64_below_minus_a_double_points_at_the_element),
        cmocka_unit_test(float32_beyond_a_float_points_at_the_element),
        cmocka_unit_test(float32_beyond_a_double_points_at_the_element),
        cmocka_unit_test(a_weight_beyond_a_double_points_at_the_weight),
        cmocka_unit_test(float64_scale_beyond_a_double_points_at_scale),
        cmocka_unit_test(float32_scale_beyond_a_double_points_at_scale),
        cmocka_unit_test(float32_scale_beyond_a_float_points_at_scale),
        cmocka_unit_test(a_big_tensor_points_at_the_element),
        cmocka_unit_test(an_additive_mask_overflowing_down_is_422),
        cmocka_unit_test(
            an_additive_mask_overflowing_down_is_422_in_the_fused_pass),
        cmocka_unit_test(an_additive_mask_overflowing_up_is_422),
        cmocka_unit_test(an_overflow_on_a_hidden_key_is_no_error),
        cmocka_unit_test(a_scale_overflow_names_scaled_scores),
        cmocka_unit_test(
            a_scale_overflow_in_the_fused_pass_names_scaled_scores),
        cmocka_unit_test(a_float32_scale_overflow_may_use_float64),
        cmocka_unit_test(a_product_overflow_still_names_scores),
        cmocka_unit_test(oip_masked_keys_in_json_are_minus_inf_strings),
        cmocka_unit_test(oip_fp64_beyond_a_double_points_at_the_element),
        cmocka_unit_test(oip_fp32_beyond_a_float_points_at_the_element),
        cmocka_unit_test(oip_fp32_nested_data_points_at_the_element),
        cmocka_unit_test(oip_scale_beyond_a_double_points_at_the_parameter),
    };
    int failed = cmocka_run_group_tests_name("numbers", numbers, numbers_setup,
                                             group_stop);
    harness_done();
    return failed ? 1 : 0;
}
