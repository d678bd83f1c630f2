/*
 * test_softmax_rows.c - the softmax's row loops (core/softmax_rows.h): the
 * vector exp within 2 ulp of libm's, the row maximum, and exp_row's sum
 * with masked keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/attention_problems.h"

#include "core/softmax_rows.h"

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
        cmocka_unit_test(vector_exp_is_within_two_ulp_of_libm),
        cmocka_unit_test(row_max_is_the_largest_element_and_skips_nan),
        cmocka_unit_test(exp_row_sums_and_zeroes_masked_keys),
    };
    return cmocka_run_group_tests_name("softmax rows", tests, NULL, NULL);
}
