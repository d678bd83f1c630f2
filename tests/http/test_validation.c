/*
 * test_validation.c - the requests POST /v1/attention refuses, each with its
 * problem `code` and the JSON `pointer` of the failing field: num_heads,
 * shapes and types, syntax, and results that are not finite.
 *
 * One group, "validation", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================= */
/* group "validation": POST /v1/attention, default limits                  */
/* ======================================================================= */

static int validation_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

/* ---- num_heads -------------------------------------------------------- */

static void num_heads_zero_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":0}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_negative_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":-2}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_fractional_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":1.5}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_not_dividing_width_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":3}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_not_matching_stack_depth_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change(
        "{\"num_heads\":2,"
        "\"w_q\":[[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
        "[0.0,0.0,0.2,0.3]]],"
        "\"w_k\":[[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
        "[0.0,0.2,0.0,0.1]]],"
        "\"w_v\":[[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
        "[0.1,0.0,0.0,0.3]]]}",
        400, "invalid_num_heads", "/num_heads");
}

static void num_heads_as_string_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":\"2\"}", 400, "wrong_type",
                           "/num_heads");
}

/* ---- shapes and types ------------------------------------------------- */

static void ragged_row_points_at_the_row(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[1,0,1,0],[0,2,0],[1,1,1,1]]}", 400,
                           "ragged_array", "/x/1");
}

static void empty_matrix_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[]}", 400, "empty_array", "/x");
}

static void empty_row_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[]]}", 400, "empty_array", "/x/0");
}

static void wrong_nesting_depth_is_rejected(void **state)
{
    (void)state;
    /* x is a matrix, or a batch of them (rank 3); never deeper */
    expect_rejected_change("{\"x\":[[[[1,0,1,0]]]]}", 400, "wrong_rank",
                           "/x/0/0/0");
}

static void weight_rows_must_match_x_width(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_q\":[[0.1,0.2,0,0],[0,0.1,0.3,0],"
                           "[0.1,0,0,0.2]]}",
                           400, "shape_mismatch", "/w_q");
}

static void key_width_must_match_query_width(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_k\":[[0.2,0],[0,0.1],[0.1,0],[0,0.2]]}", 400,
                           "shape_mismatch", "/w_k");
}

static void unknown_field_is_rejected_strictly(void **state)
{
    (void)state;
    /* the typo W_q next to a valid w_q must not be silently ignored */
    expect_rejected_change("{\"W_q\":[[1]]}", 400, "unknown_field", "/W_q");
}

static void missing_required_field_is_named(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_k\":null}", 400, "missing_field", "/w_k");
}

static void missing_x_is_named(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":null}", 400, "missing_field", "/x");
}

static void string_where_number_belongs_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[1,\"0\",1,0],[0,2,0,2],[1,1,1,1]]}", 400,
                           "wrong_type", "/x/0/1");
}

static void null_where_number_belongs_is_wrong_type(void **state)
{
    (void)state;
    /* JSON null inside a tensor (lesson_with deletes only top-level nulls) */
    expect_rejected("{\"x\":[[1,0,1,0],[0,2,0,2],[1,1,null,1]],"
                    "\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]]}",
                    400, "wrong_type", "/x/2/2");
}

static void boolean_where_number_belongs_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_v\":[[0,0.1,0,0.2],[0.2,true,0.2,0],"
                           "[0,0.3,0.1,0],[0.1,0,0,0.3]]}",
                           400, "wrong_type", "/w_v/1/1");
}

static void scalar_where_matrix_belongs_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":5}", 400, "wrong_type", "/x");
}

static void unknown_dtype_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"dtype\":\"float8\"}", 400, "invalid_dtype",
                           "/dtype");
}

static void unknown_return_name_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"return\":[\"output\",\"attention\"]}", 400,
                           "invalid_return", "/return/1");
}

static void zero_scale_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"scale\":0}", 400, "invalid_scale", "/scale");
}

static void negative_scale_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"scale\":-0.5}", 400, "invalid_scale", "/scale");
}

static void float32_overflow_is_number_out_of_range(void **state)
{
    (void)state;
    expect_rejected_change("{\"dtype\":\"float32\","
                           "\"x\":[[1,0,1,0],[0,2,0,1e39],[1,1,1,1]]}",
                           400, "number_out_of_range", "/x/1/3");
}

/* ---- syntax ----------------------------------------------------------- */

static void empty_body_is_rejected(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = ""});
    expect_problem(&r, 400, "invalid_json", NULL);
    response_free(&r);
}

static void malformed_json_gives_line_and_column(void **state)
{
    (void)state;
    http_response r = post_json("{\"x\": [[1, 2],\n  [3, }");
    const char *detail = expect_problem(&r, 400, "invalid_json", NULL);
    if (!strstr(detail, "line 2") || !strstr(detail, "column"))
        fail_msg("detail lacks line 2 and a column: %s", detail);
    response_free(&r);
}

static void trailing_garbage_is_rejected(void **state)
{
    (void)state;
    bytes body = {0};
    bytes_append(&body, LESSON_001, strlen(LESSON_001));
    bytes_append(&body, " {}", 3);
    expect_rejected(body.data, 400, "invalid_json", NULL);
    free(body.data);
}

static void non_object_body_is_rejected(void **state)
{
    (void)state;
    expect_rejected("[[1,2],[3,4]]", 400, "invalid_body", "");
}

static void duplicate_keys_are_rejected(void **state)
{
    (void)state;
    /* the second x would silently win in a lenient parser */
    bytes body = {0};
    bytes_append(&body, "{\"x\":[[9,9,9,9]],", 17);
    bytes_append(&body, LESSON_001 + 1, strlen(LESSON_001) - 1);
    http_response r = post_json(body.data);
    const char *detail = expect_problem(&r, 400, "invalid_json", NULL);
    if (!strstr(detail, "duplicate"))
        fail_msg("detail does not say duplicate: %s", detail);
    response_free(&r);
    free(body.data);
}

static void invalid_utf8_is_rejected(void **state)
{
    (void)state;
    expect_rejected("{\"tokens\":[\"a\xff\xfe\",\"b\",\"c\"],"
                    "\"x\":[[1]],\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]]}",
                    400, "invalid_json", NULL);
}

/* A list of labels longer than --max-tokens (8192) labels no request: it is
 * refused before a label is copied. */
static void more_labels_than_max_tokens_is_413(void **state)
{
    (void)state;
    enum { LABELS = 8193 };
    bytes body = {0};
    bytes_append(&body, "{\"tokens\":[", 11);
    for (int i = 0; i < LABELS; i++)
        bytes_append(&body, i ? ",\"a\"" : "\"a\"", i ? 4 : 3);
    const char *rest = "],\"x\":[[1]],\"w_q\":[[1]],\"w_k\":[[1]],"
                       "\"w_v\":[[1]]}";
    bytes_append(&body, rest, strlen(rest));
    http_response r = post_json(body.data);
    const char *detail = expect_problem(&r, 413, "limit_exceeded", "/tokens");
    if (!strstr(detail, "--max-tokens"))
        fail_msg("detail does not name --max-tokens: %s", detail);
    response_free(&r);
    free(body.data);
}

static void nesting_far_deeper_than_the_schema_is_rejected(void **state)
{
    (void)state;
    enum { DEPTH = 100000 }; /* far past jansson's 2048 and our rank 3 */
    char *body = malloc(2 * DEPTH + 16);
    assert_non_null(body);
    size_t len = 0;
    len += (size_t)sprintf(body, "{\"x\":");
    memset(body + len, '[', DEPTH);
    len += DEPTH;
    memset(body + len, ']', DEPTH);
    len += DEPTH;
    body[len++] = '}';
    body[len] = '\0';
    http_response r = post_json(body);
    expect_status(&r, 400);
    expect_content_type(&r, "application/problem+json");
    response_free(&r);
    free(body);
    assert_true(server_alive(&g_srv));
}

/* ---- options not computed ---------------------------------------------- */

static void add_zero_attn_is_422_unsupported_option(void **state)
{
    (void)state;
    expect_rejected_change("{\"add_zero_attn\":true}", 422,
                           "unsupported_option", "/add_zero_attn");
}

/* ---- non-finite results ----------------------------------------------- */

static void overflowing_scores_are_422_not_infinity(void **state)
{
    (void)state;
    /* q·k ≈ 1e199 · 1e199 overflows float64 */
    char *body = lesson_with(
        "{\"x\":[[1e200,0,1e200,0],[0,2e200,0,2e200],[1e200,1e200,1e200,"
        "1e200]]}");
    http_response r = post_json(body);
    expect_problem(&r, 422, "non_finite_result", NULL);
    expect(!strstr(r.body.data, "Infinity") && !strstr(r.body.data, "NaN"), &r);
    /* float64 is advised only to float32 requests */
    expect(!strstr(r.body.data, "use float64"), &r);
    response_free(&r);
    free(body);
}

static void overflowing_float32_scores_are_422(void **state)
{
    (void)state;
    /* 1e30 fits float32, its squared projections do not */
    char *body = lesson_with("{\"dtype\":\"float32\","
                             "\"x\":[[1e30,0,1e30,0],[0,2e30,0,2e30],"
                             "[1e30,1e30,1e30,1e30]]}");
    http_response r = post_json(body);
    expect_problem(&r, 422, "non_finite_result", NULL);
    expect(strstr(r.body.data, "use float64") != NULL, &r);
    response_free(&r);
    free(body);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest validation[] = {
        cmocka_unit_test(num_heads_zero_is_rejected),
        cmocka_unit_test(add_zero_attn_is_422_unsupported_option),
        cmocka_unit_test(num_heads_negative_is_rejected),
        cmocka_unit_test(num_heads_fractional_is_rejected),
        cmocka_unit_test(num_heads_not_dividing_width_is_rejected),
        cmocka_unit_test(num_heads_not_matching_stack_depth_is_rejected),
        cmocka_unit_test(num_heads_as_string_is_wrong_type),
        cmocka_unit_test(ragged_row_points_at_the_row),
        cmocka_unit_test(empty_matrix_is_rejected),
        cmocka_unit_test(empty_row_is_rejected),
        cmocka_unit_test(wrong_nesting_depth_is_rejected),
        cmocka_unit_test(weight_rows_must_match_x_width),
        cmocka_unit_test(key_width_must_match_query_width),
        cmocka_unit_test(unknown_field_is_rejected_strictly),
        cmocka_unit_test(missing_required_field_is_named),
        cmocka_unit_test(missing_x_is_named),
        cmocka_unit_test(string_where_number_belongs_is_wrong_type),
        cmocka_unit_test(null_where_number_belongs_is_wrong_type),
        cmocka_unit_test(boolean_where_number_belongs_is_wrong_type),
        cmocka_unit_test(scalar_where_matrix_belongs_is_wrong_type),
        cmocka_unit_test(unknown_dtype_is_rejected),
        cmocka_unit_test(unknown_return_name_is_rejected),
        cmocka_unit_test(zero_scale_is_rejected),
        cmocka_unit_test(negative_scale_is_rejected),
        cmocka_unit_test(float32_overflow_is_number_out_of_range),
        cmocka_unit_test(empty_body_is_rejected),
        cmocka_unit_test(malformed_json_gives_line_and_column),
        cmocka_unit_test(trailing_garbage_is_rejected),
        cmocka_unit_test(non_object_body_is_rejected),
        cmocka_unit_test(duplicate_keys_are_rejected),
        cmocka_unit_test(invalid_utf8_is_rejected),
        cmocka_unit_test(nesting_far_deeper_than_the_schema_is_rejected),
        cmocka_unit_test(more_labels_than_max_tokens_is_413),
        cmocka_unit_test(overflowing_scores_are_422_not_infinity),
        cmocka_unit_test(overflowing_float32_scores_are_422),
    };

    int failed = cmocka_run_group_tests_name("validation", validation,
                                             validation_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
