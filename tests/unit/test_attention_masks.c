/*
 * test_attention_masks.c - what the masks hide: causal, a boolean mask
 * that leaves a query nothing, key padding, and a sliding window whose
 * hidden keys the fused pass skips without changing any answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/attention_problems.h"

static void causal_mask_zeroes_the_upper_triangle(void **state)
{
    (void)state;
    attn_problem p = lesson_001();
    p.causal = true;
    attn_result r;
    assert_int_equal(attn_forward(NULL, &p, want_all, &r), ATTN_OK);
    const double *w = r.stage[ATTN_WEIGHTS],
                 *masked = r.stage[ATTN_MASKED_SCORES];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (j > i) {
                assert_true(w[i * 3 + j] == 0.0);
                assert_true(masked[i * 3 + j] == -INFINITY);
            } else {
                assert_true(w[i * 3 + j] > 0.0);
            }
        }
    assert_true(w[0] == 1.0); /* the first query sees only itself */
    attn_result_free(&r);
}

static void
a_query_with_no_visible_key_gets_zero_weights_and_output(void **state)
{
    (void)state;
    attn_problem p = lesson_001();
    uint8_t allow[9] = {1, 1, 1, 0, 0, 0, 1, 0, 1}; /* row 1 sees nothing */
    p.allow = allow;
    attn_result r;
    assert_int_equal(attn_forward(NULL, &p, want_all, &r), ATTN_OK);
    const double *w = r.stage[ATTN_WEIGHTS], *out = r.stage[ATTN_OUTPUT];
    for (int j = 0; j < 3; j++)
        assert_true(w[3 + j] == 0.0);
    for (int c = 0; c < 4; c++)
        assert_true(out[4 + c] == 0.0);
    assert_true(fabs(w[6] + w[8] - 1.0) < 1e-15 && w[7] == 0.0);
    attn_result_free(&r);
}

static void key_padding_hides_keys_from_every_query(void **state)
{
    (void)state;
    attn_problem p = lesson_001();
    uint8_t padding[3] = {0, 0, 1};
    p.key_padding = padding;
    attn_result r;
    assert_int_equal(attn_forward(NULL, &p, want_all, &r), ATTN_OK);
    const double *w = r.stage[ATTN_WEIGHTS];
    for (int i = 0; i < 3; i++) {
        assert_true(w[i * 3 + 2] == 0.0);
        assert_true(fabs(w[i * 3] + w[i * 3 + 1] - 1.0) < 1e-15);
    }
    attn_result_free(&r);
}

/* The fused pass skips the keys a window (and causal) hide from a whole
 * block of queries, ATTN_SKIP_GRAIN keys at a time: at every width around
 * its grains and blocks, with and without causal, over positions 0, 1, ...,
 * over shuffled positions and over a KV cache, it gives the reference's
 * output. */
static void a_window_skips_only_the_keys_it_hides(void **state)
{
    (void)state;
    static const size_t windows[] = {1,   2,   3,   63,  64,  65,  127,
                                     128, 129, 255, 256, 511, 512, 513};
    random_problem rp;
    make_random_problem(&rp, TENSOR_FLOAT64, 2);
    attn_problem p = rp.p;
    p.n = 600; /* 5 blocks of queries, 2 blocks of keys */
    p.d = 4;
    p.heads = 2;
    p.kv_heads = 0;
    p.d_k = p.d_v = 3;
    p.w_o = p.b_q = p.b_k = p.b_v = p.b_o = NULL;
    p.allow = NULL;
    p.bias = NULL;
    p.key_padding = NULL;
    p.positions = p.context_positions = NULL;
    p.alibi_slopes = NULL;
    p.rope_dims = 0;
    p.sinusoidal = false;
    void *x = random_tensor(p.dtype, p.n * p.d);
    void *w = random_tensor(p.dtype, p.d * p.heads * p.d_k);
    void *past_k = random_tensor(p.dtype, p.heads * 70 * p.d_k);
    void *past_v = random_tensor(p.dtype, p.heads * 70 * p.d_v);
    p.x = x;
    p.w_q = p.w_k = p.w_v = w;
    int64_t positions[600];
    unsigned output = ATTN_WANT(ATTN_OUTPUT);
    for (size_t cached = 0; cached < 2; cached++)
        for (size_t w_i = 0; w_i < sizeof windows / sizeof *windows; w_i++)
            for (int causal = 0; causal < 4; causal++) {
                p.past = cached ? 70 : 0;
                p.past_k = cached ? past_k : NULL;
                p.past_v = cached ? past_v : NULL;
                p.m = p.n + p.past;
                /* causal 2, 3: the same over shuffled positions (a
                 * permutation: 37 is prime to 600), so that neither a block
                 * of queries nor a run of keys has neighbouring positions */
                for (size_t i = 0; i < p.n; i++)
                    positions[i] = (int64_t)(p.past + i * 37 % p.n);
                p.positions = causal >= 2 ? positions : NULL;
                p.window = windows[w_i];
                p.causal = causal % 2;
                attn_result fast, ref;
                assert_int_equal(attn_forward(NULL, &p, output, &fast),
                                 ATTN_OK);
                assert_int_equal(attn_forward_reference(&p, output, &ref),
                                 ATTN_OK);
                double err =
                    relative_error(&p, ATTN_OUTPUT, fast.stage[ATTN_OUTPUT],
                                   ref.stage[ATTN_OUTPUT]);
                if (err > 1e-12)
                    fail_msg("window %zu, causal %d, cache %zu: relative "
                             "error %g",
                             p.window, causal, p.past, err);
                attn_result_free(&fast);
                attn_result_free(&ref);
            }
    free(x);
    free(w);
    free(past_k);
    free(past_v);
    free_random_problem(&rp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(causal_mask_zeroes_the_upper_triangle),
        cmocka_unit_test(
            a_query_with_no_visible_key_gets_zero_weights_and_output),
        cmocka_unit_test(key_padding_hides_keys_from_every_query),
        cmocka_unit_test(a_window_skips_only_the_keys_it_hides),
    };
    return cmocka_run_group_tests_name("attention masks", tests, NULL, NULL);
}
