/*
 * test_attention.c - the BLAS forward pass agrees with the textbook reference
 * on random problems of every kind, reproduces lesson 001, and handles masks,
 * empty rows and overflow as documented.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/attention_problems.h"

#include "core/attention.h"
#include "core/softmax_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every stage of attn_forward() within rounding of the reference, with its
 * own kernels (own) or with OpenBLAS alone (what a CPU without AVX-512
 * runs). */
static void random_problems_match_the_reference(bool own)
{
    attn_use_own_kernels(own);
    pool *workers = pool_create(2, 4);
    for (unsigned seed = 0; seed < 120; seed++) {
        tensor_dtype dtype = seed % 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64;
        random_problem rp;
        make_random_problem(&rp, dtype, seed);
        attn_result fast, ref;
        assert_int_equal(attn_forward(workers, &rp.p, want_all, &fast),
                         ATTN_OK);
        assert_int_equal(attn_forward_reference(&rp.p, want_all, &ref),
                         ATTN_OK);
        double tolerance = dtype == TENSOR_FLOAT32 ? 1e-5 : 1e-12;
        for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
            double err = relative_error(&rp.p, s, fast.stage[s], ref.stage[s]);
            if (err > tolerance)
                fail_msg("seed %u stage %s: relative error %g", seed,
                         attn_stage_name(s), err);
        }
        attn_result_free(&fast);
        /* without any (h, n, m) stage the fused online-softmax pass runs */
        unsigned fused_want = ATTN_WANT(ATTN_OUTPUT) |
                              ATTN_WANT(ATTN_HEAD_OUTPUTS) |
                              ATTN_WANT(ATTN_CONCAT);
        assert_int_equal(attn_forward(workers, &rp.p, fused_want, &fast),
                         ATTN_OK);
        for (int s = ATTN_HEAD_OUTPUTS; s <= ATTN_OUTPUT; s++) {
            double err = relative_error(&rp.p, s, fast.stage[s], ref.stage[s]);
            if (err > tolerance)
                fail_msg("seed %u fused stage %s: relative error %g", seed,
                         attn_stage_name(s), err);
        }
        attn_result_free(&fast);
        /* weights without raw or scaled scores: the same numbers */
        unsigned weights_want =
            ATTN_WANT(ATTN_WEIGHTS) | ATTN_WANT(ATTN_OUTPUT);
        assert_int_equal(attn_forward(workers, &rp.p, weights_want, &fast),
                         ATTN_OK);
        attn_stage checked[] = {ATTN_WEIGHTS, ATTN_OUTPUT};
        for (size_t c = 0; c < 2; c++) {
            attn_stage s = checked[c];
            double err = relative_error(&rp.p, s, fast.stage[s], ref.stage[s]);
            if (err > tolerance)
                fail_msg("seed %u weights-only stage %s: relative error %g",
                         seed, attn_stage_name(s), err);
        }
        attn_result_free(&fast);
        attn_result_free(&ref);
        free_random_problem(&rp);
    }
    pool_destroy(workers);
    attn_use_own_kernels(true);
}

static void own_kernels_match_reference_on_random_problems(void **state)
{
    (void)state;
    random_problems_match_the_reference(true);
}

static void openblas_path_matches_reference_on_random_problems(void **state)
{
    (void)state;
    random_problems_match_the_reference(false);
}

/* Lesson 001 (../shared/seeds/001_*.txt): X (3×4) and fixed 4×4 weights. */
static const double lesson_x[] = {1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1};
static const double lesson_wq[] = {0.1, 0.2, 0, 0,   0, 0.1, 0.3, 0,
                                   0.1, 0,   0, 0.2, 0, 0,   0.2, 0.3};
static const double lesson_wk[] = {0.2, 0, 0.1, 0, 0, 0.1, 0, 0.3,
                                   0.1, 0, 0.2, 0, 0, 0.2, 0, 0.1};
static const double lesson_wv[] = {0, 0.1, 0,   0.2, 0.2, 0, 0.2, 0,
                                   0, 0.3, 0.1, 0,   0.1, 0, 0,   0.3};

static attn_problem lesson_001(void)
{
    return (attn_problem){.dtype = TENSOR_FLOAT64,
                          .n = 3,
                          .m = 3,
                          .d = 4,
                          .d_c = 4,
                          .heads = 1,
                          .d_k = 4,
                          .d_v = 4,
                          .x = lesson_x,
                          .w_q = lesson_wq,
                          .w_k = lesson_wk,
                          .w_v = lesson_wv};
}

static void large_problems_match_the_reference(bool own)
{
    attn_use_own_kernels(own);
    /* big enough (≈ 10⁷ multiply-adds) that every pass runs in parallel,
     * with several row blocks and key blocks */
    pool *workers = pool_create(3, 4);
    for (unsigned seed = 0; seed < 4; seed++) {
        random_problem rp = {0};
        attn_problem *p = &rp.p;
        p->dtype = seed % 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64;
        p->n = 300, p->m = 700, p->d = 24, p->d_c = 20, p->heads = 3;
        /* d_v = 5 multiplies by V with the GEMM, 16 with attend_values() */
        p->d_k = 8, p->d_v = seed % 2 ? 5 : 16, p->d_out = seed < 2 ? 7 : 0;
        size_t width_v = p->heads * p->d_v;
        p->x = rp.buffers[0] = random_tensor(p->dtype, p->n * p->d);
        p->context = rp.buffers[1] = random_tensor(p->dtype, p->m * p->d_c);
        p->w_q = rp.buffers[2] = random_tensor(p->dtype, p->d * 24);
        p->w_k = rp.buffers[3] = random_tensor(p->dtype, p->d_c * 24);
        p->w_v = rp.buffers[4] = random_tensor(p->dtype, p->d_c * width_v);
        p->w_o = p->d_out ? (rp.buffers[5] =
                                 random_tensor(p->dtype, width_v * p->d_out))
                          : NULL;
        if (seed % 3 == 0) { /* biases, with and without W_o */
            p->b_q = rp.buffers[9] = random_tensor(p->dtype, 24);
            p->b_k = rp.buffers[10] = random_tensor(p->dtype, 24);
            p->b_v = rp.buffers[11] = random_tensor(p->dtype, width_v);
            if (p->w_o)
                p->b_o = rp.buffers[12] = random_tensor(p->dtype, p->d_out);
        }
        p->causal = seed == 1;
        attn_result ref, all, fused;
        unsigned fused_want = ATTN_WANT(ATTN_OUTPUT) |
                              ATTN_WANT(ATTN_HEAD_OUTPUTS) | ATTN_WANT(ATTN_Q);
        assert_int_equal(attn_forward_reference(p, want_all, &ref), ATTN_OK);
        assert_int_equal(attn_forward(workers, p, want_all, &all), ATTN_OK);
        assert_int_equal(attn_forward(workers, p, fused_want, &fused), ATTN_OK);
        double tolerance = p->dtype == TENSOR_FLOAT32 ? 1e-5 : 1e-12;
        for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
            double err = relative_error(p, s, all.stage[s], ref.stage[s]);
            if (err > tolerance)
                fail_msg("seed %u stage %s: %g", seed, attn_stage_name(s), err);
            if (fused.stage[s]) {
                err = relative_error(p, s, fused.stage[s], ref.stage[s]);
                if (err > tolerance)
                    fail_msg("seed %u fused %s: %g", seed, attn_stage_name(s),
                             err);
            }
        }
        attn_result_free(&ref);
        attn_result_free(&all);
        attn_result_free(&fused);
        free_random_problem(&rp);
    }
    pool_destroy(workers);
    attn_use_own_kernels(true);
}

static void large_problems_split_over_the_pool_match_the_reference(void **state)
{
    (void)state;
    large_problems_match_the_reference(true);
}

static void large_problems_match_the_reference_through_openblas(void **state)
{
    (void)state;
    large_problems_match_the_reference(false);
}

/* A visualizer compares the weights of a request that asks for every stage
 * with those of one that asks for the weights alone: they must be the same
 * bits (d_k = 3 makes 1/√d_k inexact, where a folded scale would differ). */
static void weights_do_not_depend_on_the_other_stages_asked_for(void **state)
{
    (void)state;
    pool *workers = pool_create(2, 4);
    for (unsigned seed = 0; seed < 24; seed++) {
        random_problem rp;
        make_random_problem(&rp, seed % 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64,
                            seed);
        attn_result all, alone;
        assert_int_equal(attn_forward(workers, &rp.p, want_all, &all), ATTN_OK);
        assert_int_equal(
            attn_forward(workers, &rp.p, ATTN_WANT(ATTN_WEIGHTS), &alone),
            ATTN_OK);
        assert_memory_equal(all.stage[ATTN_WEIGHTS], alone.stage[ATTN_WEIGHTS],
                            stage_count(&rp.p, ATTN_WEIGHTS) *
                                tensor_dtype_size(rp.p.dtype));
        attn_result_free(&all);
        attn_result_free(&alone);
        free_random_problem(&rp);
    }
    pool_destroy(workers);
}

static void lesson_001_weights_and_output_match_numpy(void **state)
{
    (void)state;
    attn_problem p = lesson_001();
    attn_result r;
    unsigned want = ATTN_WANT(ATTN_WEIGHTS) | ATTN_WANT(ATTN_OUTPUT);
    assert_int_equal(attn_forward(NULL, &p, want, &r), ATTN_OK);
    /* printed by NumPy 1.24 running the lesson's code with repr() */
    static const double weights[] = {
        0.31359894363028484, 0.35006362369355476, 0.3363374326761604,
        0.300872365693425,   0.3495638171532875,  0.3495638171532875,
        0.297684785421469,   0.35817982316456765, 0.34413539141396327};
    static const double output[] = {
        0.310939404018981,   0.2599745505225781,  0.27228657364329856,
        0.4409266792802701,  0.31460743543795877, 0.260174473138685,
        0.27478190857664375, 0.4446946720073013,  0.3181485113229296,
        0.2567280707341729,  0.27628102523216297, 0.44651254669001605};
    const double *w = r.stage[ATTN_WEIGHTS], *o = r.stage[ATTN_OUTPUT];
    for (int i = 0; i < 9; i++)
        assert_true(fabs(w[i] - weights[i]) <= 1e-15);
    for (int i = 0; i < 12; i++)
        assert_true(fabs(o[i] - output[i]) <= 1e-15);
    attn_result_free(&r);
}

/* q = x·W_q + b_q (and k, v, output alike): with identity weights and one
 * token, every stage is the input plus its bias, and the output is
 * v + b_o. */
static void biases_are_added_after_each_projection(void **state)
{
    (void)state;
    const double x[2] = {1, 2}, eye[4] = {1, 0, 0, 1};
    const double b_q[2] = {10, 20}, b_k[2] = {-1, -2}, b_v[2] = {0.5, 0.25};
    const double b_o[2] = {100, 200};
    attn_problem p = {.dtype = TENSOR_FLOAT64,
                      .n = 1,
                      .m = 1,
                      .d = 2,
                      .d_c = 2,
                      .heads = 1,
                      .d_k = 2,
                      .d_v = 2,
                      .d_out = 2,
                      .x = x,
                      .w_q = eye,
                      .w_k = eye,
                      .w_v = eye,
                      .w_o = eye,
                      .b_q = b_q,
                      .b_k = b_k,
                      .b_v = b_v,
                      .b_o = b_o};
    for (int reference = 0; reference < 2; reference++) {
        attn_result r;
        unsigned want = (1u << ATTN_STAGE_COUNT) - 1;
        assert_int_equal(reference ? attn_forward_reference(&p, want, &r)
                                   : attn_forward(NULL, &p, want, &r),
                         ATTN_OK);
        const double *q = r.stage[ATTN_Q], *k = r.stage[ATTN_K];
        const double *v = r.stage[ATTN_V], *out = r.stage[ATTN_OUTPUT];
        assert_true(q[0] == 11 && q[1] == 22);
        assert_true(k[0] == 0 && k[1] == 0);
        assert_true(v[0] == 1.5 && v[1] == 2.25);
        /* one key: weight 1, head output = v */
        assert_true(out[0] == 101.5 && out[1] == 202.25);
        attn_result_free(&r);
    }
}

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

static void overflowing_scores_are_reported_not_returned(void **state)
{
    (void)state;
    attn_problem p = lesson_001();
    double huge_x[12];
    for (int i = 0; i < 12; i++)
        huge_x[i] = lesson_x[i] * 1e200;
    p.x = huge_x;
    attn_result r;
    assert_int_equal(attn_forward(NULL, &p, want_all, &r), ATTN_ERR_NONFINITE);
    assert_int_equal(r.nonfinite_stage, ATTN_SCORES);
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        assert_null(r.stage[s]);
    /* the fused pass (only the output wanted) finds the same, with and
     * without a window, where no bound on q and k can vouch for a score;
     * also when a tiny scale would bring the scores back in range: q · k
     * overflows before it is scaled, as the scores stage does */
    for (size_t window = 0; window < 3; window += 2)
        for (int tiny = 0; tiny < 2; tiny++) {
            p.window = window;
            p.scale = tiny ? 1e-300 : 0;
            assert_int_equal(attn_forward(NULL, &p, ATTN_WANT(ATTN_OUTPUT), &r),
                             ATTN_ERR_NONFINITE);
            assert_int_equal(r.nonfinite_stage, ATTN_SCORES);
        }
}

/* Non-finite head outputs and outputs are found in whichever block of rows
 * they are, by every task: 300 causal rows, and only the last ten reach
 * values that overflow.  The output: rows 290 to 299 hold V's 1e308 and
 * W_o's 1e308 takes them past DBL_MAX.  The head outputs: the fused pass
 * sums exp(s − max) · v before it divides, ten times 1e308 for row 299. */
static void overflows_in_the_last_rows_are_reported(void **state)
{
    (void)state;
    enum { N = 300, D = 16, FIRST_BIG = 290 };
    double *x = calloc(N * D, sizeof *x), *zeros = calloc(D * D, sizeof *x);
    double *w_v = calloc(D * D, sizeof *x), *w_o = malloc(D * D * sizeof *x);
    for (size_t i = FIRST_BIG; i < N; i++)
        for (size_t j = 0; j < D; j++)
            x[i * D + j] = 1;
    for (size_t j = 0; j < D; j++)
        w_v[j * D + j] = 1e308; /* v = x · 1e308 */
    for (size_t j = 0; j < D * D; j++)
        w_o[j] = 1e308;
    attn_problem p = {.dtype = TENSOR_FLOAT64,
                      .n = N,
                      .m = N,
                      .d = D,
                      .d_c = D,
                      .heads = 2,
                      .d_k = D / 2,
                      .d_v = D / 2,
                      .d_out = D,
                      .x = x,
                      .w_q = zeros,
                      .w_k = zeros,
                      .w_v = w_v,
                      .w_o = w_o,
                      .causal = true};
    pool *workers = pool_create(2, 4);
    attn_result r;
    for (int pooled = 0; pooled < 2; pooled++) {
        /* scores 0: row i's weights 1/(i + 1), head outputs ≤ 10/291 · 1e308 */
        assert_int_equal(
            attn_forward(pooled ? workers : NULL, &p, want_all, &r),
            ATTN_ERR_NONFINITE);
        assert_int_equal(r.nonfinite_stage, ATTN_OUTPUT);
        p.w_o = NULL;
        assert_int_equal(attn_forward(pooled ? workers : NULL, &p,
                                      ATTN_WANT(ATTN_OUTPUT), &r),
                         ATTN_ERR_NONFINITE);
        assert_int_equal(r.nonfinite_stage, ATTN_HEAD_OUTPUTS);
        p.w_o = w_o;
    }
    pool_destroy(workers);
    free(x);
    free(zeros);
    free(w_v);
    free(w_o);
}

static void shapes_follow_the_lesson_002_example(void **state)
{
    (void)state;
    attn_problem p = {
        .n = 5, .m = 5, .d = 8, .d_c = 8, .heads = 2, .d_k = 4, .d_v = 4};
    size_t dims[ATTN_MAX_RANK];
    assert_int_equal(attn_stage_shape(&p, ATTN_Q, dims), 3);
    assert_true(dims[0] == 2 && dims[1] == 5 && dims[2] == 4);
    assert_int_equal(attn_stage_shape(&p, ATTN_WEIGHTS, dims), 3);
    assert_true(dims[0] == 2 && dims[1] == 5 && dims[2] == 5);
    assert_int_equal(attn_stage_shape(&p, ATTN_OUTPUT, dims), 2);
    assert_true(dims[0] == 5 && dims[1] == 8);
}

/* B sequences in one problem give, stage by stage, exactly what B problems
 * of one sequence give (the same code runs each), with a leading B axis;
 * per-sequence key padding and masks go to their own sequence. */
static void a_batch_equals_its_sequences_one_by_one(void **state)
{
    (void)state;
    pool *workers = pool_create(2, 4);
    enum { B = 3 };
    for (unsigned seed = 0; seed < 6; seed++) {
        random_problem rp;
        make_random_problem(&rp, seed % 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64,
                            seed + 40);
        attn_problem batch = rp.p;
        /* one cache per sequence is the oracle's (tests/oracle) */
        batch.m -= batch.past;
        batch.past = 0;
        batch.past_k = batch.past_v = NULL;
        size_t elem = tensor_dtype_size(batch.dtype);
        size_t n = batch.n, m = batch.m;
        batch.batch = B;
        void *x = random_tensor(batch.dtype, B * n * batch.d);
        void *ctx = batch.context
                        ? random_tensor(batch.dtype, B * m * batch.d_c)
                        : NULL;
        uint8_t *pad = malloc(B * m), *allow = malloc(B * n * m);
        for (size_t j = 0; j < B * m; j++)
            pad[j] = uniform() > 0.6;
        for (size_t j = 0; j < B * n * m; j++)
            allow[j] = uniform() > -0.5;
        batch.x = x;
        batch.context = ctx;
        batch.key_padding = seed % 2 ? pad : NULL;
        batch.allow = seed % 3 ? allow : NULL;
        batch.bias = NULL;
        batch.mask_per_sequence = seed % 3 == 1;
        size_t dims[ATTN_MAX_RANK];
        assert_int_equal(attn_stage_shape(&batch, ATTN_WEIGHTS, dims), 4);
        assert_true(dims[0] == B && dims[1] == batch.heads && dims[2] == n &&
                    dims[3] == m);
        attn_result all;
        assert_int_equal(attn_forward(workers, &batch, want_all, &all),
                         ATTN_OK);
        for (size_t b = 0; b < B; b++) {
            attn_problem one = batch;
            one.batch = 0;
            one.x = (char *)x + b * n * batch.d * elem;
            if (ctx)
                one.context = (char *)ctx + b * m * batch.d_c * elem;
            if (batch.key_padding)
                one.key_padding = pad + b * m;
            if (batch.allow && batch.mask_per_sequence)
                one.allow = allow + b * n * m;
            one.mask_per_sequence = false;
            attn_result single;
            assert_int_equal(attn_forward(workers, &one, want_all, &single),
                             ATTN_OK);
            for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
                if (!attn_stage_applies(&one, s))
                    continue;
                size_t bytes = stage_count(&one, s) * elem;
                if (memcmp((char *)all.stage[s] + b * bytes, single.stage[s],
                           bytes) != 0)
                    fail_msg("seed %u sequence %zu: %s differs", seed, b,
                             attn_stage_name(s));
            }
            attn_result_free(&single);
        }
        attn_result_free(&all);
        free(x);
        free(ctx);
        free(pad);
        free(allow);
        free_random_problem(&rp);
    }
    pool_destroy(workers);
}

/* Q, K and V given directly give every later stage exactly as the same
 * Q, K and V projected from x do (both passes, and the reference). */
static void given_qkv_match_projected_ones(void **state)
{
    (void)state;
    for (unsigned seed = 0; seed < 12; seed++) {
        random_problem rp;
        make_random_problem(&rp, seed % 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64,
                            seed + 70);
        attn_problem *p = &rp.p;
        p->w_o = NULL; /* output = concat on both sides */
        p->b_o = NULL;
        p->d_out = 0;
        attn_result projected;
        assert_int_equal(attn_forward(NULL, p, want_all, &projected), ATTN_OK);
        attn_problem given = *p;
        given.x = given.context = NULL;
        given.w_q = given.w_k = given.w_v = NULL;
        given.b_q = given.b_k = given.b_v = NULL;
        given.d = given.d_c = 0;
        given.q = projected.stage[ATTN_Q];
        given.k = projected.stage[ATTN_K];
        given.v = projected.stage[ATTN_V];
        size_t elem = tensor_dtype_size(p->dtype);
        for (int reference = 0; reference < 2; reference++) {
            attn_result r;
            assert_int_equal(reference
                                 ? attn_forward_reference(&given, want_all, &r)
                                 : attn_forward(NULL, &given, want_all, &r),
                             ATTN_OK);
            for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
                if (!attn_stage_applies(&given, s))
                    continue;
                size_t count = stage_count(p, s);
                if (!reference &&
                    memcmp(r.stage[s], projected.stage[s], count * elem) != 0)
                    fail_msg("seed %u: %s differs", seed, attn_stage_name(s));
                if (reference &&
                    relative_error(p, s, r.stage[s], projected.stage[s]) >
                        (elem == 4 ? 1e-5 : 1e-12))
                    fail_msg("seed %u reference: %s differs", seed,
                             attn_stage_name(s));
            }
            attn_result_free(&r);
        }
        attn_result_free(&projected);
        free_random_problem(&rp);
    }
}

/* (rows, h_kv·w) → (rows, h·w): query head i's columns are those of the
 * key/value head it reads (repeat_interleave over the heads). */
static void *repeat_heads(const attn_problem *p, const void *a, size_t rows,
                          size_t w)
{
    if (!a)
        return NULL;
    size_t elem = tensor_dtype_size(p->dtype), h = p->heads;
    size_t h_kv = attn_kv_heads(p);
    char *out = malloc(rows * h * w * elem);
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < h; i++)
            memcpy(out + (r * h + i) * w * elem,
                   (const char *)a +
                       (r * h_kv + attn_kv_head_of(p, i)) * w * elem,
                   w * elem);
    return out;
}

/* Grouped-query attention is ordinary attention whose K and V weights are
 * repeated per group (PyTorch's enable_gqa, repeat_interleave). */
static void grouped_heads_equal_repeated_key_value_heads(void **state)
{
    (void)state;
    unsigned done = 0;
    for (unsigned seed = 2; done < 6; seed += 4) {
        random_problem rp;
        make_random_problem(
            &rp, seed % 8 == 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64, seed);
        attn_problem *p = &rp.p;
        if (attn_kv_heads(p) == p->heads) {
            free_random_problem(&rp);
            continue;
        }
        done++;
        attn_problem full = *p;
        full.kv_heads = 0;
        void *w_k = repeat_heads(p, p->w_k, p->d_c, p->d_k);
        void *w_v = repeat_heads(p, p->w_v, p->d_c, p->d_v);
        void *b_k = repeat_heads(p, p->b_k, 1, p->d_k);
        void *b_v = repeat_heads(p, p->b_v, 1, p->d_v);
        full.w_k = w_k, full.w_v = w_v, full.b_k = b_k, full.b_v = b_v;
        attn_result grouped, repeated;
        assert_int_equal(attn_forward(NULL, p, want_all, &grouped), ATTN_OK);
        assert_int_equal(attn_forward(NULL, &full, want_all, &repeated),
                         ATTN_OK);
        double tolerance = p->dtype == TENSOR_FLOAT32 ? 1e-5 : 1e-12;
        for (int s = ATTN_SCORES; s < ATTN_STAGE_COUNT; s++) {
            double err =
                relative_error(p, s, grouped.stage[s], repeated.stage[s]);
            if (err > tolerance)
                fail_msg("seed %u: %s %g", seed, attn_stage_name(s), err);
        }
        attn_result_free(&grouped);
        attn_result_free(&repeated);
        free(w_k), free(w_v), free(b_k), free(b_v);
        free_random_problem(&rp);
    }
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

static void absurd_shapes_overflow_to_size_max(void **state)
{
    (void)state;
    attn_problem p = {.n = SIZE_MAX / 4,
                      .m = SIZE_MAX / 4,
                      .d = 8,
                      .d_c = 8,
                      .heads = 2,
                      .d_k = 4,
                      .d_v = 4};
    assert_true(attn_bytes_needed(&p, want_all, 2) == SIZE_MAX);
}

/* Distance in units in the last place between two finite values. */
static uint64_t ulps_apart(double a, double b)
{
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

static void vector_exp_is_within_two_ulp_of_libm(void **state)
{
    (void)state;
    uint64_t worst = 0;
    for (int i = 0; i <= 2000000; i++) {
        double x = -708.0 * i / 2000000.0;
        uint64_t u = ulps_apart(softmax_exp_f64(x), exp(x));
        worst = u > worst ? u : worst;
    }
    assert_true(worst <= 2);
    worst = 0;
    for (int i = 0; i <= 2000000; i++) {
        float x = -87.0f * (float)i / 2000000.0f;
        float a = softmax_exp_f32(x), b = expf(x);
        int32_t ia, ib;
        memcpy(&ia, &a, sizeof ia);
        memcpy(&ib, &b, sizeof ib);
        uint64_t u = (uint64_t)(ia > ib ? ia - ib : ib - ia);
        worst = u > worst ? u : worst;
    }
    assert_true(worst <= 2);
    assert_true(softmax_exp_f64(-INFINITY) == 0.0);
    /* and the row loop as this CPU runs it (its AVX2 / AVX-512 clone, with
     * fused multiply-adds), which is what the forward pass calls */
    enum { ROW = 2000001 };
    double *row64 = malloc(ROW * sizeof *row64);
    float *row32 = malloc(ROW * sizeof *row32);
    assert_non_null(row64);
    assert_non_null(row32);
    for (int i = 0; i < ROW; i++) {
        row64[i] = -708.0 * i / (ROW - 1.0);
        row32[i] = -87.0f * (float)i / (float)(ROW - 1);
    }
    softmax_exp_row_f64(row64, ROW, 0.0);
    softmax_exp_row_f32(row32, ROW, 0.0f);
    uint64_t worst64 = 0, worst32 = 0;
    for (int i = 0; i < ROW; i++) {
        uint64_t u = ulps_apart(row64[i], exp(-708.0 * i / (ROW - 1.0)));
        worst64 = u > worst64 ? u : worst64;
        float b = expf(-87.0f * (float)i / (float)(ROW - 1));
        int32_t ia, ib;
        memcpy(&ia, &row32[i], sizeof ia);
        memcpy(&ib, &b, sizeof ib);
        u = (uint64_t)(ia > ib ? ia - ib : ib - ia);
        worst32 = u > worst32 ? u : worst32;
    }
    free(row64);
    free(row32);
    assert_true(worst64 <= 2);
    assert_true(worst32 <= 2);
    assert_true(softmax_exp_f64(-709.0) == 0.0);
    assert_true(softmax_exp_f64(0.0) == 1.0);
    assert_true(softmax_exp_f32(-INFINITY) == 0.0f);
    assert_true(softmax_exp_f32(0.0f) == 1.0f);
}

/* The row maximum is the largest element wherever it sits (in the vector
 * part of the row or the tail), NaN elements are skipped, and a row of
 * −∞ (every key masked) has maximum −∞. */
static void row_max_is_the_largest_element_and_skips_nan(void **state)
{
    (void)state;
    double row64[150];
    float row32[150];
    for (size_t m = 1; m <= 150; m += 7)
        for (size_t at = 0; at < m; at += 3) {
            for (size_t j = 0; j < m; j++) {
                row64[j] = -1000 + uniform();
                row32[j] = (float)row64[j];
            }
            row64[(at + 1) % m] = NAN, row32[(at + 1) % m] = NAN;
            row64[at] = 7.5, row32[at] = 7.5f;
            if ((at + 1) % m == at) /* m = 1: the NaN was overwritten */
                row64[at] = row32[at] = 7.5f;
            assert_true(softmax_row_max_f64(row64, m) == 7.5);
            assert_true(softmax_row_max_f32(row32, m) == 7.5f);
            for (size_t j = 0; j < m; j++)
                row64[j] = -INFINITY, row32[j] = -INFINITY;
            assert_true(softmax_row_max_f64(row64, m) == -INFINITY);
            assert_true(softmax_row_max_f32(row32, m) == -INFINITY);
        }
}

static void exp_row_sums_and_zeroes_masked_keys(void **state)
{
    (void)state;
    double row[5] = {1.0, -INFINITY, 3.0, 2.0, -INFINITY};
    double sum = softmax_exp_row_f64(row, 5, 3.0);
    assert_true(row[1] == 0.0 && row[4] == 0.0 && row[2] == 1.0);
    assert_true(fabs(row[0] - exp(-2.0)) <= 2e-16);
    assert_true(fabs(sum - (1.0 + exp(-1.0) + exp(-2.0))) <= 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(own_kernels_match_reference_on_random_problems),
        cmocka_unit_test(biases_are_added_after_each_projection),
        cmocka_unit_test(a_batch_equals_its_sequences_one_by_one),
        cmocka_unit_test(given_qkv_match_projected_ones),
        cmocka_unit_test(grouped_heads_equal_repeated_key_value_heads),
        cmocka_unit_test(openblas_path_matches_reference_on_random_problems),
        cmocka_unit_test(large_problems_match_the_reference_through_openblas),
        cmocka_unit_test(
            large_problems_split_over_the_pool_match_the_reference),
        cmocka_unit_test(weights_do_not_depend_on_the_other_stages_asked_for),
        cmocka_unit_test(lesson_001_weights_and_output_match_numpy),
        cmocka_unit_test(causal_mask_zeroes_the_upper_triangle),
        cmocka_unit_test(
            a_query_with_no_visible_key_gets_zero_weights_and_output),
        cmocka_unit_test(key_padding_hides_keys_from_every_query),
        cmocka_unit_test(overflowing_scores_are_reported_not_returned),
        cmocka_unit_test(overflows_in_the_last_rows_are_reported),
        cmocka_unit_test(shapes_follow_the_lesson_002_example),
        cmocka_unit_test(a_window_skips_only_the_keys_it_hides),
        cmocka_unit_test(absurd_shapes_overflow_to_size_max),
        cmocka_unit_test(vector_exp_is_within_two_ulp_of_libm),
        cmocka_unit_test(row_max_is_the_largest_element_and_skips_nan),
        cmocka_unit_test(exp_row_sums_and_zeroes_masked_keys),
    };
    return cmocka_run_group_tests_name("attention", tests, NULL, NULL);
}
