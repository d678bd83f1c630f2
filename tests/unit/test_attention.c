/*
 * test_attention.c - the forward pass agrees with the textbook reference on
 * random problems of every kind (by the kernels and through OpenBLAS, alone
 * and over a pool, one sequence and a batch), reproduces lessons 001 and
 * 002, and sizes what it needs.  Masks, overflow and stopping have files
 * of their own (test_attention_*.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/attention_problems.h"

#include "core/attention.h"

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
        cmocka_unit_test(shapes_follow_the_lesson_002_example),
        cmocka_unit_test(absurd_shapes_overflow_to_size_max),
    };
    return cmocka_run_group_tests_name("attention", tests, NULL, NULL);
}
