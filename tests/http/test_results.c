/*
 * test_results.c - the numbers POST /v1/attention returns for lesson 001:
 * the default output and weights, the metadata and shapes, `return`, the
 * 1/√d_k scale, heads by reshape and as 3-D stacks, and float32.
 *
 * One group, "results", on a server with the default flags; every 200 is
 * checked against NumPy on the lesson's own code.
 */
#include "tests/http/harness.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- constants -------------------------------------------------------- */

/* float32 results against the float64 reference: float32 has a 6e-8
 * relative epsilon and a handful of roundings stand between input and
 * output. */
#define TOL_F32 1e-6

/* Q = X @ W_q and Q Kᵀ (unscaled). */
static const double LESSON_001_Q[3][4] = {
    {0.2, 0.2, 0.0, 0.2},
    {0.0, 0.2, 1.0, 0.6},
    {0.2, 0.30000000000000004, 0.5, 0.5},
};
static const double LESSON_001_SCORES[3][3] = {
    {0.06000000000000001, 0.28, 0.20000000000000004},
    {0.30000000000000004, 0.6, 0.6000000000000001},
    {0.21000000000000002, 0.5800000000000001, 0.5},
};
/* The same weights split into 2 heads of d_k = 2 by reshape (lesson 002's
 * convention), NumPy: weights[1] (second head) and the concatenated output. */
static const double LESSON_001_H2_WEIGHTS_1[3][3] = {
    {0.3146648378255653, 0.35235710016444194, 0.3329780620099928},
    {0.3011422256514843, 0.3420174927801655, 0.3568402815683501},
    {0.2989291321545731, 0.35673143807838265, 0.34433942976704424},
};
static const double LESSON_001_H2_OUTPUT[3][4] = {
    {0.30421222395128256, 0.26479456713276334, 0.2723027424513312,
     0.4408362586687746},
    {0.3084827367822019, 0.2609715268043086, 0.2739733041477197,
     0.44385908158257126},
    {0.3084225800628311, 0.26195747002774195, 0.2758873173769237,
     0.4459944041614663},
};

/* ======================================================================= */
/* group "results": POST /v1/attention, default limits                     */
/* ======================================================================= */

static int results_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void lesson_001_default_returns_output_and_weights(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    expect_content_type(&r, "application/json");
    json_t *v = body_json(&r);
    expect_matrix(json_array_get(json_object_get(v, "weights"), 0),
                  &LESSON_001_WEIGHTS[0][0], 3, 3, TOL_F64, "weights[0]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F64, "output");
    assert_int_equal(json_array_size(json_object_get(v, "weights")), 1);
    /* only the default tensors */
    const char *absent[] = {
        "q", "k", "v", "scores", "scaled_scores", "head_outputs", "concat"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        if (json_object_get(v, absent[i]))
            fail_msg("%s returned without being asked for", absent[i]);
    json_decref(v);
    response_free(&r);
}

static void lesson_001_metadata_and_shapes(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_int_equal(json_integer_value(json_object_get(v, "num_heads")), 1);
    assert_int_equal(json_integer_value(json_object_get(v, "head_dim")), 4);
    assert_int_equal(json_integer_value(json_object_get(v, "value_dim")), 4);
    assert_true(json_number_value(json_object_get(v, "scale")) == 0.5);
    assert_string_equal(json_string_value(json_object_get(v, "dtype")),
                        "float64");
    json_t *shapes = json_object_get(v, "shapes");
    struct {
        const char *name;
        size_t rank, dims[3];
    } want[] = {
        {"q", 3, {1, 3, 4}},
        {"k", 3, {1, 3, 4}},
        {"v", 3, {1, 3, 4}},
        {"scores", 3, {1, 3, 3}},
        {"scaled_scores", 3, {1, 3, 3}},
        {"weights", 3, {1, 3, 3}},
        {"head_outputs", 3, {1, 3, 4}},
        {"concat", 2, {3, 4}},
        {"output", 2, {3, 4}},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        expect_shape(json_object_get(shapes, want[i].name), want[i].dims,
                     want[i].rank, want[i].name);
    json_decref(v);
    response_free(&r);
}

static void weights_rows_sum_to_one(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    json_t *w = json_array_get(json_object_get(v, "weights"), 0);
    for (size_t i = 0; i < 3; i++) {
        double sum = 0;
        for (size_t j = 0; j < 3; j++)
            sum += json_number_value(json_array_get(json_array_get(w, i), j));
        assert_true(fabs(sum - 1.0) <= TOL_F64);
    }
    json_decref(v);
    response_free(&r);
}

static void return_selects_exactly_the_named_tensors(void **state)
{
    (void)state;
    char *body = lesson_with("{\"return\":[\"q\",\"scores\"]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    expect_matrix(json_array_get(json_object_get(v, "q"), 0),
                  &LESSON_001_Q[0][0], 3, 4, TOL_F64, "q[0]");
    expect_matrix(json_array_get(json_object_get(v, "scores"), 0),
                  &LESSON_001_SCORES[0][0], 3, 3, TOL_F64, "scores[0]");
    assert_null(json_object_get(v, "weights"));
    assert_null(json_object_get(v, "output"));
    /* shapes still describe every stage */
    size_t out_dims[2] = {3, 4};
    expect_shape(json_object_get(json_object_get(v, "shapes"), "output"),
                 out_dims, 2, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void scaled_scores_use_one_over_sqrt_dk(void **state)
{
    (void)state;
    char *body = lesson_with("{\"return\":[\"scaled_scores\"]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    double scaled[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            scaled[i][j] = LESSON_001_SCORES[i][j] / 2.0; /* √d_k = 2 */
    expect_matrix(json_array_get(json_object_get(v, "scaled_scores"), 0),
                  &scaled[0][0], 3, 3, TOL_F64, "scaled_scores[0]");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void per_head_stack_equals_single_head_matrix(void **state)
{
    (void)state;
    /* 3-D weights h×d×d_k with h = 1: the same numbers as lesson 001 */
    char *body = lesson_with(
        "{\"w_q\":[[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
        "[0.0,0.0,0.2,0.3]]],"
        "\"w_k\":[[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
        "[0.0,0.2,0.0,0.1]]],"
        "\"w_v\":[[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
        "[0.1,0.0,0.0,0.3]]]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    expect_matrix(json_array_get(json_object_get(v, "weights"), 0),
                  &LESSON_001_WEIGHTS[0][0], 3, 3, TOL_F64, "weights[0]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void two_heads_by_reshape_match_numpy(void **state)
{
    (void)state;
    char *body = lesson_with("{\"num_heads\":2}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_int_equal(json_integer_value(json_object_get(v, "num_heads")), 2);
    assert_int_equal(json_integer_value(json_object_get(v, "head_dim")), 2);
    assert_true(json_number_value(json_object_get(v, "scale")) ==
                1.0 / sqrt(2.0));
    size_t w_dims[3] = {2, 3, 3}, q_dims[3] = {2, 3, 2};
    json_t *shapes = json_object_get(v, "shapes");
    expect_shape(json_object_get(shapes, "weights"), w_dims, 3, "weights");
    expect_shape(json_object_get(shapes, "q"), q_dims, 3, "q");
    expect_matrix(json_array_get(json_object_get(v, "weights"), 1),
                  &LESSON_001_H2_WEIGHTS_1[0][0], 3, 3, TOL_F64, "weights[1]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_H2_OUTPUT[0][0], 3,
                  4, TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void two_heads_as_3d_stacks_equal_reshape(void **state)
{
    (void)state;
    /* head i = columns 2i, 2i+1 of each lesson matrix */
    char *body =
        lesson_with("{\"w_q\":[[[0.1,0.2],[0.0,0.1],[0.1,0.0],[0.0,0.0]],"
                    "[[0.0,0.0],[0.3,0.0],[0.0,0.2],[0.2,0.3]]],"
                    "\"w_k\":[[[0.2,0.0],[0.0,0.1],[0.1,0.0],[0.0,0.2]],"
                    "[[0.1,0.0],[0.0,0.3],[0.2,0.0],[0.0,0.1]]],"
                    "\"w_v\":[[[0.0,0.1],[0.2,0.0],[0.0,0.3],[0.1,0.0]],"
                    "[[0.0,0.2],[0.2,0.0],[0.1,0.0],[0.0,0.3]]]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_int_equal(json_integer_value(json_object_get(v, "num_heads")), 2);
    expect_matrix(json_array_get(json_object_get(v, "weights"), 1),
                  &LESSON_001_H2_WEIGHTS_1[0][0], 3, 3, TOL_F64, "weights[1]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_H2_OUTPUT[0][0], 3,
                  4, TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void float32_dtype_is_close_to_float64(void **state)
{
    (void)state;
    char *body = lesson_with("{\"dtype\":\"float32\"}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(v, "dtype")),
                        "float32");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F32, "output");
    /* float32 numbers are written as the shortest text of the float32
     * (at most 9 significant digits), not as a widened float64 */
    const char *first = strstr(r.body.data, "\"output\":[[");
    assert_non_null(first);
    first += strlen("\"output\":[[");
    size_t digits = 0;
    for (const char *c = first; *c != ',' && *c != ']'; c++)
        digits += isdigit((unsigned char)*c) != 0;
    if (digits > 9 + 1) /* + the leading 0 of 0.xxx */
        fail_msg("float32 output written with %zu digits: %.30s", digits,
                 first);
    json_decref(v);
    response_free(&r);
    free(body);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest results[] = {
        cmocka_unit_test(lesson_001_default_returns_output_and_weights),
        cmocka_unit_test(lesson_001_metadata_and_shapes),
        cmocka_unit_test(weights_rows_sum_to_one),
        cmocka_unit_test(return_selects_exactly_the_named_tensors),
        cmocka_unit_test(scaled_scores_use_one_over_sqrt_dk),
        cmocka_unit_test(per_head_stack_equals_single_head_matrix),
        cmocka_unit_test(two_heads_by_reshape_match_numpy),
        cmocka_unit_test(two_heads_as_3d_stacks_equal_reshape),
        cmocka_unit_test(float32_dtype_is_close_to_float64),
    };

    int failed = cmocka_run_group_tests_name("results", results, results_setup,
                                             group_stop);
    harness_done();
    return failed ? 1 : 0;
}
