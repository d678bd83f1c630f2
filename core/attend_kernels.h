/*
 * attend_kernels.h - the two products of one head's attention, without
 * packing: scores = Q Kᵀ and head output = weights · V.
 *
 * OpenBLAS copies ("packs") both operands of every product into its own
 * layout before its kernel runs.  That pays off when an element is reused
 * thousands of times, as in the projections, but weights · V reuses each of
 * the (rows, m) weights only d_v = 64 times: `perf` put 9 % of a one-thread
 * (n, d, h) = (1024, 512, 8) forward pass in packing and another 3 % in
 * zeroing C before each product (beta = 0).  These kernels read the operands
 * where they are: the weights row by row as the softmax left them, V row by
 * row in its wide layout, Q in its wide layout; only Kᵀ is needed in another
 * layout, and attention_impl.inc writes it once per forward pass (it is
 * small, (h, d_k, m)).
 *
 * Register blocking.  The scores kernel keeps a tile of SCORE_ROWS query
 * rows × SCORE_VECS vectors of keys in registers and walks d_k: per step,
 * SCORE_VECS loads of Kᵀ, SCORE_ROWS broadcasts of Q, SCORE_ROWS ·
 * SCORE_VECS fused multiply-adds.  The values kernel keeps VALUE_ROWS rows ×
 * VALUE_VECS vectors of output columns and walks the keys.  The code is
 * written once with GCC vector types of ATTEND_VEC_BYTES (an AVX-512
 * register) and built, like softmax_rows.c, for AVX-512, AVX2 (each vector
 * in two halves) and baseline x86-64; the best runs.
 *
 * Measured side by side with cblas_sgemm at (n, d_k, h) = (1024, 64, 8),
 * one thread, 128-row blocks: weights · V 14.5 → 10.8 ms (75 → 100 GFLOP/s),
 * Q Kᵀ 15.0 → 13.0 ms; a whole one-thread forward pass at (1024, 512, 8)
 * in float32 with weights 54.4 → 48.2 ms (commit message).
 *
 * Summation order differs from OpenBLAS's (each output is a chain of fused
 * multiply-adds over the inner dimension, in order), so results agree with
 * it to rounding, not bit for bit.
 */
#ifndef CORE_ATTEND_KERNELS_H
#define CORE_ATTEND_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

/* Kᵀ is packed in tiles of the scores kernel's width: tile τ holds keys
 * [τ·W, τ·W + W) as a (d_k, W) block, W = the kernel's tile width, so the
 * d_k rows a tile of scores reads are contiguous (rows of a plain (d_k, m)
 * Kᵀ are 4 KiB apart at m = 1024 and all fall into one L1 set).  Key j0, a
 * multiple of W, starts at element j0 · d_k.  Elements of the packed Kᵀ for
 * m keys: d_k times m rounded up to W.  The padding is read (into scores that
 * are then dropped), so the caller zeroes it. */
size_t attend_key_tile_f64(void); /* W */
size_t attend_key_tile_f32(void);
size_t attend_keys_padded_f64(size_t m);
size_t attend_keys_padded_f32(size_t m);

/* Rows of K (rows, d_k), row stride ldk, are keys [key0, key0 + rows) of the
 * packed Kᵀ kt. */
void attend_pack_keys_f64(const double *k, size_t ldk, size_t rows, size_t d_k,
                          double *kt, size_t key0);
void attend_pack_keys_f32(const float *k, size_t ldk, size_t rows, size_t d_k,
                          float *kt, size_t key0);

/* s (rows, keys) = alpha · q (rows, d_k) @ Kᵀ[:, 0:keys] (d_k, keys); q has
 * row stride ldq, s lds; kt is packed (above), its padding zero.  Nothing is
 * read from s. */
void attend_scores_f64(size_t rows, size_t keys, size_t d_k, double alpha,
                       const double *q, size_t ldq, const double *kt, double *s,
                       size_t lds);
void attend_scores_f32(size_t rows, size_t keys, size_t d_k, float alpha,
                       const float *q, size_t ldq, const float *kt, float *s,
                       size_t lds);

/* Can attend_values handle d_v columns?  (A whole number of vectors.) */
bool attend_values_fits_f64(size_t d_v);
bool attend_values_fits_f32(size_t d_v);

/* o (rows, d_v) = p (rows, keys) @ v (keys, d_v), or o += that when
 * accumulate; row strides ldp, ldv, ldo.  d_v must fit (above). */
void attend_values_f64(size_t rows, size_t d_v, size_t keys, const double *p,
                       size_t ldp, const double *v, size_t ldv, double *o,
                       size_t ldo, bool accumulate);
void attend_values_f32(size_t rows, size_t d_v, size_t keys, const float *p,
                       size_t ldp, const float *v, size_t ldv, float *o,
                       size_t ldo, bool accumulate);

#endif
