/*
 * attend_kernels.h - the products of the forward pass, packing little:
 * scores = Q Kᵀ, and c = a @ b for weights · V and the projections.
 *
 * OpenBLAS copies ("packs") both operands of every product into its own
 * layout before its kernel runs, and zeroes C first when beta = 0: a
 * visible share of a forward pass (docs/performance.md, "The core's
 * constants and choices, measured").  Packing pays for itself when an element
 * is reused thousands of times; weights · V reuses each weight only d_v = 64
 * times.  These kernels read the operands where they are: the weights row by
 * row as the softmax left them, V, Q, X and W row by row in their own layouts;
 * Kᵀ is needed in another layout, and attention_impl.inc writes it once per
 * forward pass (it is small, (h, d_k, m)), in tiles (below); at AVX2 each W
 * of the float32 projections that more than one block of rows goes through
 * is copied once a request into the product kernel's strips
 * (attend_pack_product, below).
 *
 * Register blocking.  The scores kernel keeps a tile of SCORE_ROWS query
 * rows × SCORE_VECS vectors of keys in registers and walks d_k: per step,
 * SCORE_VECS loads of Kᵀ, SCORE_ROWS broadcasts of Q, SCORE_ROWS ·
 * SCORE_VECS fused multiply-adds.  The product kernel keeps PRODUCT_ROWS
 * rows × PRODUCT_VECS vectors of output columns and walks the inner
 * dimension.  The code is written with GCC vector types of ATTEND_VEC_BYTES
 * (one register) and built twice, for AVX-512 (64 bytes, 32 registers) and
 * for AVX2 with FMA (32 bytes, 16 registers, smaller tiles): callers ask
 * attend_kernels_usable() first and use OpenBLAS where it says no.
 *
 * Side by side with cblas_sgemm, one thread, these kernels are faster on
 * weights · V and Q Kᵀ, and on the projections at AVX-512 reading W in
 * place and at AVX2 in float32 from W packed (the figures:
 * docs/performance.md, "The core's constants and choices, measured" and
 * "Without AVX-512").
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
/* May the scores and product kernels run: an x86-64 CPU with AVX2 and FMA,
 * and arch_simd_level() (core/arch.h) not capped below it?  Every function
 * here runs the build of the level in use (its tile width included), so the
 * level must not change during a forward pass.  When false they
 * must not be called; the packing helpers and the sizes below work
 * anywhere. */
bool attend_kernels_usable(void);

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
 * read from s.  row_max (rows), unless NULL, receives each row's largest
 * score, NaNs skipped (−∞ if every score is NaN), as softmax_row_max()
 * finds it: taken while the tile is in registers, it spares the softmax a
 * pass over the row. */
void attend_scores_f64(size_t rows, size_t keys, size_t d_k, double alpha,
                       const double *q, size_t ldq, const double *kt, double *s,
                       size_t lds, double *row_max);
void attend_scores_f32(size_t rows, size_t keys, size_t d_k, float alpha,
                       const float *q, size_t ldq, const float *kt, float *s,
                       size_t lds, float *row_max);

/* Can attend_product handle `cols` columns?  (A whole number of vectors.) */
bool attend_product_fits_f64(size_t cols);
bool attend_product_fits_f32(size_t cols);

/* c (rows, cols) = a (rows, inner) @ b (inner, cols), or c += that when
 * accumulate; row strides lda, ldb, ldc; cols must fit (above).  Weights · V
 * (inner = the keys, cols = d_v) and the projections X · W (inner = d). */
void attend_product_f64(size_t rows, size_t cols, size_t inner, const double *a,
                        size_t lda, const double *b, size_t ldb, double *c,
                        size_t ldc, bool accumulate);
void attend_product_f32(size_t rows, size_t cols, size_t inner, const float *a,
                        size_t lda, const float *b, size_t ldb, float *c,
                        size_t ldc, bool accumulate);

/* A wide b read in place has one cache line of a tile's columns a row, each
 * a row stride apart: at the projections' strides (2 KiB at d = 512) they
 * fall into a few of L1's sets, and the columns are read from L2 or L3 again
 * for every panel of rows.  So a b that many products read (the projections'
 * W) is packed once into strips of the product kernel's width: strip σ holds
 * columns [σ·S, σ·S + S) as an (inner, S) block with its rows contiguous, at
 * element σ·S · inner, the last strip narrower (the remaining columns);
 * S = attend_product_strip().  The packed b has inner × cols elements. */
size_t attend_product_strip_f64(void); /* S */
size_t attend_product_strip_f32(void);
void attend_pack_product_f64(const double *b, size_t ldb, size_t inner,
                             size_t cols, double *packed);
void attend_pack_product_f32(const float *b, size_t ldb, size_t inner,
                             size_t cols, float *packed);

/* attend_product() with b packed (above); cols must fit. */
void attend_product_packed_f64(size_t rows, size_t cols, size_t inner,
                               const double *a, size_t lda,
                               const double *packed, double *c, size_t ldc,
                               bool accumulate);
void attend_product_packed_f32(size_t rows, size_t cols, size_t inner,
                               const float *a, size_t lda, const float *packed,
                               float *c, size_t ldc, bool accumulate);

#endif
