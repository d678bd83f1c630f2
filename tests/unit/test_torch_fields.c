/*
 * test_torch_fields.c - nn.MultiheadAttention's and
 * scaled_dot_product_attention's own forms of a request, as the decoder
 * reads them: batch_first, the state_dict member, a float key_padding_mask
 * and a mask that broadcasts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/request/batch_first.h"
#include "server/json/decode.h"
#include "tests/unit/request_fixtures.h"

#include <stdio.h>
#include <string.h>

#define IDENTITY_WEIGHTS                                                       \
    "\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0],[0,1]],\"w_v\":[[1,0],[0,1]]"

/* Every a × b grid of rows turned b × a matches the row-by-row copy, for
 * every shape up to 13 × 13 and rows of 1 to 3 numbers. */
static void the_transpose_moves_every_row_where_it_belongs(void **state)
{
    (void)state;
    double grid[13 * 13 * 3], want[13 * 13 * 3];
    for (size_t a = 1; a <= 13; a++)
        for (size_t b = 1; b <= 13; b++)
            for (size_t width = 1; width <= 3; width++) {
                for (size_t i = 0; i < a * b * width; i++)
                    grid[i] = (double)i;
                for (size_t i = 0; i < a; i++)
                    for (size_t j = 0; j < b; j++)
                        memcpy(&want[(j * a + i) * width],
                               &grid[(i * b + j) * width],
                               width * sizeof *grid);
                batch_first_transpose(grid, a, b, width * sizeof *grid);
                if (memcmp(grid, want, a * b * width * sizeof *grid) != 0)
                    fail_msg("%zu x %zu rows of %zu", a, b, width);
            }
}

/* "batch_first": false reads x (L, N, E) and context (S, N, E) as the
 * core's (N, L, E) and (N, S, E). */
static void a_sequence_first_batch_is_read_batch_first(void **state)
{
    (void)state;
    /* L = 3 queries, N = 2 sequences, E = 2; S = 1 key */
    const char *body = "{\"x\":[[[1,2],[3,4]],[[5,6],[7,8]],[[9,10],[11,12]]],"
                       "\"context\":[[[-1,-2],[-3,-4]]],"
                       "\"batch_first\":false," IDENTITY_WEIGHTS "}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    assert_int_equal(req.problem.batch, 2);
    assert_int_equal(req.problem.n, 3);
    assert_int_equal(req.problem.m, 1);
    const double x[12] = {1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12};
    const double context[4] = {-1, -2, -3, -4};
    assert_memory_equal(req.problem.x, x, sizeof x);
    assert_memory_equal(req.problem.context, context, sizeof context);
    assert_false(req.batch_first);
    api_request_free(&req);
}

/* One sequence is the same either way; absent, batch_first is true. */
static void batch_first_leaves_one_sequence_and_defaults_to_true(void **state)
{
    (void)state;
    const char *bodies[2] = {
        "{\"x\":[[1,2],[3,4]],\"batch_first\":false," IDENTITY_WEIGHTS "}",
        "{\"x\":[[[1,2],[3,4]]]," IDENTITY_WEIGHTS "}"};
    const double x[4] = {1, 2, 3, 4};
    for (int i = 0; i < 2; i++) {
        api_request req;
        codec_error err;
        assert_true(decode_request(bodies[i], strlen(bodies[i]), &limits, NULL,
                                   &req, &err));
        assert_memory_equal(req.problem.x, x, sizeof x);
        assert_int_equal(req.batch_first, i == 1);
        api_request_free(&req);
    }
}

/* The module's state_dict under a model's prefix gives the problem its
 * keys give as fields. */
static void a_state_dict_under_a_prefix_is_its_keys_as_fields(void **state)
{
    (void)state;
#define IN_PROJ "[[1,0],[0,1],[2,0],[0,2],[1,1],[0,3]]"
    const char *fields =
        "{\"x\":[[1,2],[3,4]],\"num_heads\":1,\"in_proj_weight\":" IN_PROJ
        ",\"in_proj_bias\":[1,2,3,4,5,6],"
        "\"out_proj.weight\":[[1,2],[3,4]]}";
    const char *dict = "{\"x\":[[1,2],[3,4]],\"num_heads\":1,\"state_dict\":{"
                       "\"encoder.layers.0.self_attn.in_proj_weight\":" IN_PROJ
                       ",\"encoder.layers.0.self_attn.in_proj_bias\":"
                       "[1,2,3,4,5,6],"
                       "\"encoder.layers.0.self_attn.out_proj.weight\":"
                       "[[1,2],[3,4]]}}";
    api_request a, b;
    codec_error err;
    assert_true(
        decode_request(fields, strlen(fields), &limits, NULL, &a, &err));
    assert_true(decode_request(dict, strlen(dict), &limits, NULL, &b, &err));
    assert_memory_equal(a.w_q, b.w_q, 4 * sizeof(double));
    assert_memory_equal(a.w_k, b.w_k, 4 * sizeof(double));
    assert_memory_equal(a.w_v, b.w_v, 4 * sizeof(double));
    assert_memory_equal(a.w_o, b.w_o, 4 * sizeof(double));
    assert_memory_equal(a.b_v, b.b_v, 2 * sizeof(double));
    const double b_v[2] = {5, 6};
    assert_memory_equal(b.b_v, b_v, sizeof b_v);
    api_request_free(&a);
    api_request_free(&b);
}

/* A whole model's state_dict with "module" gives the problem that module's
 * keys give alone: the other attention module and the other modules' keys
 * are left out. */
static void a_models_state_dict_gives_the_module_it_names(void **state)
{
    (void)state;
    const char *alone =
        "{\"x\":[[1,2],[3,4]],\"num_heads\":1,\"state_dict\":{"
        "\"in_proj_weight\":" IN_PROJ ",\"in_proj_bias\":[1,2,3,4,5,6]}}";
    const char *model = "{\"x\":[[1,2],[3,4]],\"num_heads\":1,"
                        "\"module\":\"layers.1.self_attn\",\"state_dict\":{"
                        "\"layers.0.self_attn.in_proj_weight\":[[9]],"
                        "\"layers.0.linear1.weight\":[[9,9]],"
                        "\"layers.1.self_attn.in_proj_weight\":" IN_PROJ
                        ",\"layers.1.self_attn.in_proj_bias\":[1,2,3,4,5,6],"
                        "\"layers.1.norm1.weight\":[9,9]}}";
    api_request a, b;
    codec_error err;
    assert_true(decode_request(alone, strlen(alone), &limits, NULL, &a, &err));
    assert_true(decode_request(model, strlen(model), &limits, NULL, &b, &err));
    assert_memory_equal(a.w_q, b.w_q, 4 * sizeof(double));
    assert_memory_equal(a.w_k, b.w_k, 4 * sizeof(double));
    assert_memory_equal(a.w_v, b.w_v, 4 * sizeof(double));
    assert_memory_equal(a.b_v, b.b_v, 2 * sizeof(double));
    api_request_free(&a);
    api_request_free(&b);
}

/* The allow mask (one byte per score) and bias of a decoded body; false
 * when refused (err then says why). */
static bool masks_of(const char *body, uint8_t *allow, double *bias,
                     size_t count, api_request *req, codec_error *err)
{
    if (!decode_request(body, strlen(body), &limits, NULL, req, err))
        return false;
    for (size_t i = 0; i < count; i++) {
        allow[i] = req->problem.allow ? req->problem.allow[i] : 1;
        bias[i] =
            req->problem.bias ? ((const double *)req->problem.bias)[i] : 0;
    }
    return true;
}

#define QKV_2X3 "\"q\":[[[1],[2]]],\"k\":[[[1],[2],[3]]],\"v\":[[[1],[2],[3]]]"

/* With q, k and v, a mask of (1, S), (L, 1) or (1, 1, 1) broadcasts to the
 * (L, S) it stands for, as scaled_dot_product_attention's does. */
static void an_sdpa_attn_mask_broadcasts_to_the_scores(void **state)
{
    (void)state;
    static const struct {
        const char *mask;
        uint8_t allow[6];
    } cases[] = {
        {"[[true,false,true]]", {1, 0, 1, 1, 0, 1}},
        {"[[true],[false]]", {1, 1, 1, 0, 0, 0}},
        {"[[[false]]]", {0, 0, 0, 0, 0, 0}},
        {"[[true,false,true],[false,true,true]]", {1, 0, 1, 0, 1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char body[256];
        snprintf(body, sizeof body, "{" QKV_2X3 ",\"attn_mask\":%s}",
                 cases[c].mask);
        uint8_t allow[6];
        double bias[6];
        api_request req;
        codec_error err;
        if (!masks_of(body, allow, bias, 6, &req, &err))
            fail_msg("%s: %s", cases[c].mask, err.detail);
        assert_false(req.problem.mask_per_head);
        assert_memory_equal(allow, cases[c].allow, 6);
        api_request_free(&req);
    }
}

/* In a batch of q, k and v, a 3-D attn_mask is one per head (h, L, S), as
 * broadcasting reads it, not one per sequence. */
static void a_3d_sdpa_attn_mask_in_a_batch_is_per_head(void **state)
{
    (void)state;
    const char *body = "{\"q\":[[[[1]],[[2]]],[[[3]],[[4]]]],"
                       "\"k\":[[[[1]],[[2]]],[[[3]],[[4]]]],"
                       "\"v\":[[[[1]],[[2]]],[[[3]],[[4]]]],"
                       "\"attn_mask\":[[[0.5]],[[-1]]]}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    assert_false(req.problem.mask_per_sequence);
    assert_true(req.problem.mask_per_head);
    const double bias[2] = {0.5, -1};
    assert_memory_equal(req.problem.bias, bias, sizeof bias);
    api_request_free(&req);
}

/* A float key_padding_mask is added to its keys' scores over the mask's
 * numbers; −∞ there hides the key.  (base64 of [0.25, −∞] and [1, 2]) */
static void a_float_key_padding_mask_is_added_to_its_keys(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,0],[0,1]]," IDENTITY_WEIGHTS
                       ",\"key_padding_mask\":{\"shape\":[2],\"base64\":"
                       "\"AAAAAAAA0D8AAAAAAADw/w==\"},"
                       "\"attn_mask\":[[1,2],[3,4]]}";
    uint8_t allow[4];
    double bias[4];
    api_request req;
    codec_error err;
    assert_true(masks_of(body, allow, bias, 4, &req, &err));
    const uint8_t want_allow[4] = {1, 0, 1, 0};
    const double want_bias[4] = {1.25, 0, 3.25, 0};
    assert_memory_equal(allow, want_allow, 4);
    assert_memory_equal(bias, want_bias, sizeof want_bias);
    assert_null(req.problem.key_padding);
    api_request_free(&req);
}

/* Arrays the body did not hold are charged to the parse account: the
 * allow mask of an additive mask's −∞, and a broadcast mask, which a small
 * body cannot make larger than its account (413). */
static void arrays_made_from_the_body_are_charged_to_its_account(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,0],[0,1]]," IDENTITY_WEIGHTS
                       ",\"mask\":{\"shape\":[2,2],\"base64\":"
                       "\"AAAAAAAAAAAAAAAAAADw/wAAAAAAAAAAAAAAAAAAAAA=\"}}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    assert_int_equal(req.parse_held, 4);
    api_request_free(&req);
    /* q and k of 1000 rows (12 KB of body): a (1, 1) mask broadcast to a
     * million scores */
    static char rows[4096] = "[[", big[16384];
    for (int i = 0; i < 1000; i++)
        strcat(rows, i ? ",[1]" : "[1]");
    strcat(rows, "]]");
    snprintf(big, sizeof big,
             "{\"q\":%s,\"k\":%s,\"v\":%s,\"attn_mask\":[[true]]}", rows, rows,
             rows);
    request_limits wide = limits;
    wide.max_tokens = 1000;
    assert_false(decode_request(big, strlen(big), &wide, NULL, &req, &err));
    assert_int_equal(err.code, ERR_LIMIT_EXCEEDED);
}

/* What Python's json.dumps writes for −∞ is not JSON: 400 invalid_json,
 * and the detail says how to send −∞. */
static void python_minus_infinity_says_how_to_send_it(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,0],[0,1]]," IDENTITY_WEIGHTS
                       ",\"mask\":[[0,-Infinity],[0,0]]}";
    api_request req;
    codec_error err;
    assert_false(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    assert_int_equal(err.code, ERR_INVALID_JSON);
    assert_non_null(strstr(err.detail, "JSON has no -Infinity"));
    assert_non_null(strstr(err.detail, "binary form"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_transpose_moves_every_row_where_it_belongs),
        cmocka_unit_test(a_sequence_first_batch_is_read_batch_first),
        cmocka_unit_test(batch_first_leaves_one_sequence_and_defaults_to_true),
        cmocka_unit_test(a_state_dict_under_a_prefix_is_its_keys_as_fields),
        cmocka_unit_test(a_models_state_dict_gives_the_module_it_names),
        cmocka_unit_test(an_sdpa_attn_mask_broadcasts_to_the_scores),
        cmocka_unit_test(a_3d_sdpa_attn_mask_in_a_batch_is_per_head),
        cmocka_unit_test(a_float_key_padding_mask_is_added_to_its_keys),
        cmocka_unit_test(arrays_made_from_the_body_are_charged_to_its_account),
        cmocka_unit_test(python_minus_infinity_says_how_to_send_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
