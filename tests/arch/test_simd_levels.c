/*
 * test_simd_levels.c - every SIMD level this CPU runs (core/arch.h), each in
 * turn as the level in use: the softmax row loops against libm and plain
 * loops, and the forward pass against the textbook reference.  On an
 * AVX-512 machine that covers the AVX-512, AVX2 and generic builds of the
 * loops; under qemu-aarch64 the one generic (NEON) build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/test_random.h"

#include "core/arch.h"
#include "core/attend_kernels.h"
#include "core/attention.h"
#include "core/softmax_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exponentials checked per type and level: steps of 708 / 400000 ≈ 0.002
 * over the whole input range, every reduction interval met many times, and
 * still a second or two under qemu. */
#define EXP_VALUES 400001
/* The softmax's promise (softmax_rows.h): within 2 ulp of glibc. */
#define EXP_MAX_ULP 2
/* Row lengths around the loops' vector widths (8 doubles, 16 floats, 4 of
 * them in row_max), so every tail is met. */
#define MAX_ROW 80
/* The oracle's tolerances for the whole forward pass. */
#define FORWARD_TOLERANCE_F64 1e-12
#define FORWARD_TOLERANCE_F32 1e-5

/* Levels from the CPU's best down: attention.c asks whether the kernels run
 * at its first forward pass, so the first one must be at the best level. */
static int levels_down(arch_simd *out)
{
    int count = 0;
    for (int level = (int)arch_simd_cpu(); level >= 0; level--)
        out[count++] = (arch_simd)level;
    return count;
}

static void use_level(arch_simd level)
{
    arch_simd_limit(level);
    attn_use_own_kernels(level >= ARCH_SIMD_AVX2);
    print_message("   level %s\n", arch_simd_name(level));
}

static uint64_t ulps_apart_f64(double a, double b)
{
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

static uint64_t ulps_apart_f32(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

static void the_level_in_use_is_the_cpus_unless_capped(void **state)
{
    (void)state;
    arch_simd_limit(ARCH_SIMD_AVX512);
    assert_int_equal(arch_simd_level(), arch_simd_cpu());
    arch_simd_limit(ARCH_SIMD_GENERIC);
    assert_int_equal(arch_simd_level(), ARCH_SIMD_GENERIC);
    assert_false(attend_kernels_usable());
    arch_simd_limit(ARCH_SIMD_AVX512);
#if !ARCH_X86_64
    assert_int_equal(arch_simd_cpu(), ARCH_SIMD_GENERIC);
#endif
    arch_simd parsed;
    assert_true(arch_simd_parse("auto", &parsed));
    assert_int_equal(parsed, ARCH_SIMD_AVX512);
    assert_true(arch_simd_parse("avx2", &parsed));
    assert_int_equal(parsed, ARCH_SIMD_AVX2);
    assert_false(arch_simd_parse("sse9", &parsed));
}

static void exp_rows_are_within_two_ulp_of_libm_at_every_level(void **state)
{
    (void)state;
    double *row64 = malloc(EXP_VALUES * sizeof *row64);
    float *row32 = malloc(EXP_VALUES * sizeof *row32);
    assert_non_null(row64);
    assert_non_null(row32);
    arch_simd levels[ARCH_SIMD_COUNT];
    for (int l = 0, count = levels_down(levels); l < count; l++) {
        use_level(levels[l]);
        for (int i = 0; i < EXP_VALUES; i++) {
            row64[i] = -708.0 * i / (EXP_VALUES - 1.0);
            row32[i] = -87.0f * (float)i / (float)(EXP_VALUES - 1);
        }
        double sum64 = softmax_exp_row_f64(row64, EXP_VALUES, 0.0);
        float sum32 = softmax_exp_row_f32(row32, EXP_VALUES, 0.0f);
        uint64_t worst64 = 0, worst32 = 0;
        double check64 = 0;
        for (int i = 0; i < EXP_VALUES; i++) {
            double want = exp(-708.0 * i / (EXP_VALUES - 1.0));
            uint64_t u = ulps_apart_f64(row64[i], want);
            worst64 = u > worst64 ? u : worst64;
            check64 += row64[i];
            u = ulps_apart_f32(
                row32[i], expf(-87.0f * (float)i / (float)(EXP_VALUES - 1)));
            worst32 = u > worst32 ? u : worst32;
        }
        print_message("   worst ulp float64 %llu, float32 %llu\n",
                      (unsigned long long)worst64, (unsigned long long)worst32);
        assert_true(worst64 <= EXP_MAX_ULP);
        assert_true(worst32 <= EXP_MAX_ULP);
        /* the sums are of these values (in lanes: to rounding) */
        assert_true(fabs(sum64 - check64) <= 1e-12 * check64);
        assert_true(sum32 > 0 && isfinite(sum32));
        /* a masked key (−∞) and anything below exp's range give exactly 0 */
        double edge64[3] = {-INFINITY, -800.0, 0.0};
        float edge32[3] = {-INFINITY, -100.0f, 0.0f};
        assert_true(softmax_exp_row_f64(edge64, 3, 0.0) == 1.0);
        assert_true(softmax_exp_row_f32(edge32, 3, 0.0f) == 1.0f);
        assert_true(edge64[0] == 0.0 && edge64[1] == 0.0 && edge64[2] == 1.0);
        assert_true(edge32[0] == 0.0f && edge32[1] == 0.0f &&
                    edge32[2] == 1.0f);
    }
    arch_simd_limit(ARCH_SIMD_AVX512);
    free(row64);
    free(row32);
}

static void row_loops_agree_with_plain_loops_at_every_level(void **state)
{
    (void)state;
    arch_simd levels[ARCH_SIMD_COUNT];
    for (int l = 0, count = levels_down(levels); l < count; l++) {
        use_level(levels[l]);
        for (size_t m = 1; m <= MAX_ROW; m++) {
            double row64[MAX_ROW], out64[MAX_ROW];
            float row32[MAX_ROW], out32[MAX_ROW];
            double max64 = -INFINITY;
            float max32 = -INFINITY;
            for (size_t j = 0; j < m; j++) {
                row64[j] = 10 * uniform();
                row32[j] = (float)(10 * uniform());
                max64 = row64[j] > max64 ? row64[j] : max64;
                max32 = row32[j] > max32 ? row32[j] : max32;
            }
            assert_true(softmax_row_max_f64(row64, m) == max64);
            assert_true(softmax_row_max_f32(row32, m) == max32);
            /* magnitudes: every other element negated, the largest |x|
             * wherever it falls */
            double abs64 = 0;
            float abs32 = 0;
            for (size_t j = 0; j < m; j++) {
                double neg64 = j % 2 ? -row64[j] : row64[j];
                float neg32 = j % 2 ? -row32[j] : row32[j];
                out64[j] = neg64, out32[j] = neg32;
                abs64 = fabs(neg64) > abs64 ? fabs(neg64) : abs64;
                abs32 = fabsf(neg32) > abs32 ? fabsf(neg32) : abs32;
            }
            assert_true(softmax_row_abs_max_f64(out64, m) == abs64);
            assert_true(softmax_row_abs_max_f32(out32, m) == abs32);
            assert_true(softmax_all_finite_f64(row64, m));
            assert_true(softmax_all_finite_f32(row32, m));
            softmax_scale_row_f64(row64, out64, m, 3.0, true);
            softmax_scale_row_f32(row32, out32, m, 0.5f, false);
            for (size_t j = 0; j < m; j++) {
                assert_true(out64[j] == row64[j] / 3.0);
                assert_true(out32[j] == row32[j] * 0.5f);
            }
            softmax_normalize_row_f64(out64, m, 7.0);
            for (size_t j = 0; j < m; j++)
                assert_true(out64[j] == row64[j] / 3.0 / 7.0);
            /* a non-finite value anywhere is found; a NaN is no maximum */
            size_t at = m - 1 - (size_t)(m * (uniform() + 1) / 2) % m;
            row64[at] = NAN;
            row32[at] = INFINITY;
            assert_false(softmax_all_finite_f64(row64, m));
            assert_false(softmax_all_finite_f32(row32, m));
            double max_left = -INFINITY;
            for (size_t j = 0; j < m; j++)
                if (j != at)
                    max_left = row64[j] > max_left ? row64[j] : max_left;
            assert_true(softmax_row_max_f64(row64, m) == max_left);
            /* a bound on magnitudes fails on NaN and on ∞ */
            assert_true(isnan(softmax_row_abs_max_f64(row64, m)));
            assert_true(softmax_row_abs_max_f32(row32, m) == INFINITY);
            row32[at] = -NAN;
            assert_true(isnan(softmax_row_abs_max_f32(row32, m)));
        }
    }
    arch_simd_limit(ARCH_SIMD_AVX512);
}

/* Random inputs of a problem, in its dtype. */
static void *random_tensor(tensor_dtype dtype, size_t count, double amp)
{
    void *a = malloc(count * tensor_dtype_size(dtype));
    assert_non_null(a);
    for (size_t i = 0; i < count; i++) {
        double v = amp * uniform();
        if (dtype == TENSOR_FLOAT32)
            ((float *)a)[i] = (float)v;
        else
            ((double *)a)[i] = v;
    }
    return a;
}

static double value_at(const void *a, tensor_dtype dtype, size_t i)
{
    return dtype == TENSOR_FLOAT32 ? ((const float *)a)[i]
                                   : ((const double *)a)[i];
}

/* Largest |got − want| over the largest |want| of the output. */
static double output_error(const attn_problem *p, const attn_result *got,
                           const attn_result *want)
{
    size_t count = p->n * p->d_out;
    double err = 0, scale = 0;
    for (size_t i = 0; i < count; i++) {
        double w = value_at(want->stage[ATTN_OUTPUT], p->dtype, i);
        double g = value_at(got->stage[ATTN_OUTPUT], p->dtype, i);
        err = fmax(err, fabs(g - w));
        scale = fmax(scale, fabs(w));
    }
    return err / scale;
}

static void forward_pass_matches_the_reference_at_every_level(void **state)
{
    (void)state;
    /* keys past one 512-key block of the fused pass, heads of 16 and 24
     * columns (whole vectors for the kernels, and not) */
    const size_t n = 37, m = 600, d = 48, d_c = 40, heads = 3, d_k = 16,
                 d_v = 24, d_out = 20;
    const unsigned stages_all = (1u << ATTN_STAGE_COUNT) - 1;
    arch_simd levels[ARCH_SIMD_COUNT];
    for (int l = 0, count = levels_down(levels); l < count; l++) {
        use_level(levels[l]);
        for (int t = 0; t < 2; t++) {
            tensor_dtype dtype = t ? TENSOR_FLOAT32 : TENSOR_FLOAT64;
            attn_problem p = {.dtype = dtype,
                              .n = n,
                              .m = m,
                              .d = d,
                              .d_c = d_c,
                              .heads = heads,
                              .d_k = d_k,
                              .d_v = d_v,
                              .d_out = d_out};
            p.x = random_tensor(dtype, n * d, 1);
            p.context = random_tensor(dtype, m * d_c, 1);
            p.w_q = random_tensor(dtype, d * heads * d_k, 0.3);
            p.w_k = random_tensor(dtype, d_c * heads * d_k, 0.3);
            p.w_v = random_tensor(dtype, d_c * heads * d_v, 0.3);
            p.w_o = random_tensor(dtype, heads * d_v * d_out, 0.3);
            attn_result want, fused, whole;
            assert_int_equal(attn_forward_reference(&p, stages_all, &want),
                             ATTN_OK);
            /* no (h, n, m) stage: the fused pass; all: whole rows */
            assert_int_equal(attn_forward(NULL, &p, 0, &fused), ATTN_OK);
            assert_int_equal(attn_forward(NULL, &p, stages_all, &whole),
                             ATTN_OK);
            double tolerance =
                t ? FORWARD_TOLERANCE_F32 : FORWARD_TOLERANCE_F64;
            double err_fused = output_error(&p, &fused, &want);
            double err_whole = output_error(&p, &whole, &want);
            print_message("   %s: fused %.3g, whole rows %.3g\n",
                          tensor_dtype_name(dtype), err_fused, err_whole);
            assert_true(err_fused <= tolerance);
            assert_true(err_whole <= tolerance);
            attn_result_free(&want);
            attn_result_free(&fused);
            attn_result_free(&whole);
            free((void *)p.x);
            free((void *)p.context);
            free((void *)p.w_q);
            free((void *)p.w_k);
            free((void *)p.w_v);
            free((void *)p.w_o);
        }
    }
    arch_simd_limit(ARCH_SIMD_AVX512);
    attn_use_own_kernels(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_level_in_use_is_the_cpus_unless_capped),
        cmocka_unit_test(exp_rows_are_within_two_ulp_of_libm_at_every_level),
        cmocka_unit_test(row_loops_agree_with_plain_loops_at_every_level),
        cmocka_unit_test(forward_pass_matches_the_reference_at_every_level),
    };
    printf("architecture %s, CPU level %s\n", arch_name(),
           arch_simd_name(arch_simd_cpu()));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
