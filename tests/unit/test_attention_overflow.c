/*
 * test_attention_overflow.c - a stage that overflows is reported
 * (ATTN_ERR_NONFINITE and the first stage that did), never returned, where
 * ever in the problem it happens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/attention_problems.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overflowing_scores_are_reported_not_returned),
        cmocka_unit_test(overflows_in_the_last_rows_are_reported),
    };
    return cmocka_run_group_tests_name("attention overflow", tests, NULL, NULL);
}
