/*
 * softmax_rows.h - the exponentials of a softmax row, vectorisable.
 *
 * glibc's exp() is a scalar call of ~15 ns; an (h, n, n) softmax at n = 2048
 * needs 33 M of them, more time than all the matrix products.  These loops
 * have no calls and no branches, so the compiler turns them into SIMD code,
 * and target_clones builds them for AVX-512, AVX2 and baseline x86-64, the
 * best chosen when the program loads.
 *
 * exp(x) = 2^k · exp(r) with k = round(x / ln 2) and r = x − k·ln 2 (ln 2 in
 * two parts, Cody & Waite, so r is exact), |r| ≤ ln 2 / 2.  exp(r) is its
 * Taylor polynomial: degree 13 for double (truncation < 5e-18, below half an
 * ulp) and degree 7 for float (< 6e-9).  Measured against glibc: at most
 * 2 ulp apart (tests/unit/test_attention.c).  Inputs are ≤ 0 here (a score
 * minus its row maximum); below the smallest normal result the value is 0,
 * and −∞ (a masked key) gives exactly 0.
 */
#ifndef CORE_SOFTMAX_ROWS_H
#define CORE_SOFTMAX_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Not under TSan: the ifunc resolvers of target_clones run during relocation,
 * before the TSan runtime exists, and crash when instrumented. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    !defined(__SANITIZE_THREAD__)
#define SOFTMAX_CLONES                                                         \
    __attribute__((                                                            \
        target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SOFTMAX_CLONES
#endif

/* row[j] = exp(row[j] − max) for j < m; returns the sum of the row. */
double softmax_exp_row_f64(double *row, size_t m, double max);
float softmax_exp_row_f32(float *row, size_t m, float max);

/* dst[j] = src[j] / divisor (the lessons divide by √d_k), or src[j] · factor
 * when divide is false.  dst may be src. */
void softmax_scale_row_f64(const double *src, double *dst, size_t m, double by,
                           bool divide);
void softmax_scale_row_f32(const float *src, float *dst, size_t m, float by,
                           bool divide);

/* row[j] /= sum. */
void softmax_normalize_row_f64(double *row, size_t m, double sum);
void softmax_normalize_row_f32(float *row, size_t m, float sum);

/* Are all m elements finite? */
bool softmax_all_finite_f64(const double *row, size_t m);
bool softmax_all_finite_f32(const float *row, size_t m);

/* The largest element of a row (NaN elements are skipped; the callers check
 * finiteness separately). */
double softmax_row_max_f64(const double *row, size_t m);
float softmax_row_max_f32(const float *row, size_t m);

/* One exponential of x ≤ 0, for tests. */
double softmax_exp_f64(double x);
float softmax_exp_f32(float x);

#endif
