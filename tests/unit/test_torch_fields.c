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

#include "server/json/batch_first.h"
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
    const char *fields = "{\"x\":[[1,2],[3,4]],\"in_proj_weight\":" IN_PROJ
                         ",\"in_proj_bias\":[1,2,3,4,5,6],"
                         "\"out_proj.weight\":[[1,2],[3,4]]}";
    const char *dict = "{\"x\":[[1,2],[3,4]],\"state_dict\":{"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_transpose_moves_every_row_where_it_belongs),
        cmocka_unit_test(a_sequence_first_batch_is_read_batch_first),
        cmocka_unit_test(batch_first_leaves_one_sequence_and_defaults_to_true),
        cmocka_unit_test(a_state_dict_under_a_prefix_is_its_keys_as_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
