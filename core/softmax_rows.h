/*
 * softmax_rows.h - the exponentials of a softmax row, vectorisable.
 *
 * glibc's exp() is a scalar call of ~15 ns; an (h, n, n) softmax at n = 2048
 * needs 33 M of them, more time than all the matrix products.  These loops
 * are written on vectors as wide as each level's registers, with no calls
 * and no branches per element (tests/unit/check_vector_code.py reads their
 * code).  On x86-64 they are built three times, for AVX-512, for AVX2 with FMA
 * and for the build's own target, and each call runs the build of the level
 * core/arch.h says is in use (the CPU's best unless capped); elsewhere once,
 * for the build's target (NEON on AArch64).
 *
 * exp(x) = 2^k · exp(r) with k = round(x / ln 2) and r = x − k·ln 2 (ln 2 in
 * two parts, Cody & Waite, so r is exact), |r| ≤ ln 2 / 2.  exp(r) is its
 * Taylor polynomial: degree 13 for double (truncation < 5e-18, below half an
 * ulp) and degree 7 for float (< 6e-9).  Measured against glibc: at most
 * 2 ulp apart, at every level (tests/arch/test_simd_levels.c).  Inputs are
 * ≤ 0 here (a score minus its row maximum); below the smallest normal result
 * the value is 0, and −∞ (a masked key) gives exactly 0.
 */
#ifndef CORE_SOFTMAX_ROWS_H
#define CORE_SOFTMAX_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* The largest |element| of a row, 0 for an empty row, NaN if any element
 * is NaN (a bound on the row's magnitudes that fails on NaN). */
double softmax_row_abs_max_f64(const double *row, size_t m);
float softmax_row_abs_max_f32(const float *row, size_t m);

/* One exponential of x ≤ 0, for tests. */
double softmax_exp_f64(double x);
float softmax_exp_f32(float x);

#endif
