/*
 * attend_kernels.c - register-blocked Q Kᵀ and weights · V for one head
 * (attend_kernels.h), compiled from attend_kernels_impl.inc once per element
 * type and instruction set: AVX-512 and AVX2 with FMA on x86-64, and the
 * public functions call the build of the level arch_simd_level() names.
 * Elsewhere the code is built once for the plain target and never called
 * (attend_kernels_usable() says no; only the packing helpers and the sizes
 * are used).
 */
#include "core/attend_kernels.h"
#include "core/arch.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if ARCH_X86_64
#include <immintrin.h>
#endif

bool attend_kernels_usable(void)
{
    return ARCH_X86_64 && arch_simd_level() >= ARCH_SIMD_AVX2;
}

/* AVX-512: 32 vector registers of 64 bytes.
 * Scores tile: 8 query rows × 2 vectors of keys = 16 accumulators; with 2
 * loads of Kᵀ and 8 broadcasts per 16 fused multiply-adds.  Of the tiles
 * 12 × 2, 6 × 3, 8 × 3 and 4 × 4, none is faster.
 * Product tile: 6 rows × 4 vectors of output columns = 24 accumulators; per
 * step of the inner dimension 4 loads of b and 6 broadcasts of a per 24
 * fused multiply-adds.  4 vectors are 64 float columns, the usual d_v: one
 * sweep over the keys for weights · V. */
#define ATTEND_VEC_BYTES 64
#define SCORE_ROWS 8
#define SCORE_VECS 2
#define SCORE_ROW_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#define PRODUCT_ROWS 6
#define PRODUCT_VECS 4
#define PRODUCT_ROW_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)
#if ARCH_X86_64
#define KERNEL_TARGET __attribute__((target(ARCH_TARGET_AVX512)))
#else
#define KERNEL_TARGET
#endif

#define REAL double
#define SFX(name) name##_avx512_f64
typedef double vec_avx512_f64 __attribute__((vector_size(ATTEND_VEC_BYTES)));
typedef int64_t ivec_avx512_f64 __attribute__((vector_size(ATTEND_VEC_BYTES)));
#define VEC vec_avx512_f64
#define IVEC ivec_avx512_f64
#if ARCH_X86_64
#define VEC_MAX(a, b) (VEC) _mm512_max_pd((__m512d)(a), (__m512d)(b))
#define VEC_PICK2(a, b, pick)                                                  \
    (VEC) _mm512_permutex2var_pd((__m512d)(a), (__m512i)(pick), (__m512d)(b))
#endif
#include "core/attend_kernels_impl.inc"
#undef REAL
#undef SFX
#undef VEC
#undef IVEC
#undef VEC_MAX
#undef VEC_PICK2

#define REAL float
#define SFX(name) name##_avx512_f32
typedef float vec_avx512_f32 __attribute__((vector_size(ATTEND_VEC_BYTES)));
typedef int32_t ivec_avx512_f32 __attribute__((vector_size(ATTEND_VEC_BYTES)));
#define VEC vec_avx512_f32
#define IVEC ivec_avx512_f32
#if ARCH_X86_64
#define VEC_MAX(a, b) (VEC) _mm512_max_ps((__m512)(a), (__m512)(b))
#define VEC_PICK2(a, b, pick)                                                  \
    (VEC) _mm512_permutex2var_ps((__m512)(a), (__m512i)(pick), (__m512)(b))
#endif
#include "core/attend_kernels_impl.inc"
#undef REAL
#undef SFX
#undef VEC
#undef IVEC
#undef VEC_MAX
#undef VEC_PICK2

#undef ATTEND_VEC_BYTES
#undef SCORE_ROWS
#undef SCORE_VECS
#undef SCORE_ROW_CASES
#undef PRODUCT_ROWS
#undef PRODUCT_VECS
#undef PRODUCT_ROW_CASES
#undef KERNEL_TARGET

#if ARCH_X86_64
/* Does the level in use run the AVX2 build (else the AVX-512 one)? */
static bool avx2_build(void) { return arch_simd_level() < ARCH_SIMD_AVX512; }

/* AVX2: 16 vector registers of 32 bytes.
 * Scores tile: 6 query rows × 2 vectors of keys = 12 accumulators, 2 loads
 * of Kᵀ and one broadcast of Q at a time: 15 registers.
 * Product tile: the same shape, 6 rows × 2 vectors: per step of the inner
 * dimension 2 loads of b kept in registers and 6 broadcasts of a for 12
 * fused multiply-adds.  (With 4 rows × 3 vectors, 16 registers, GCC reads
 * b from memory in every multiply-add: 16 loads per 12.)  Kᵀ is packed
 * element by element (AVX2 has no two-vector shuffle of AVX-512's). */
#define ATTEND_VEC_BYTES 32
#define SCORE_ROWS 6
#define SCORE_VECS 2
#define SCORE_ROW_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)
#define PRODUCT_ROWS 6
#define PRODUCT_VECS 2
#define PRODUCT_ROW_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)
#define KERNEL_TARGET __attribute__((target(ARCH_TARGET_AVX2)))

#define REAL double
#define SFX(name) name##_avx2_f64
typedef double vec_avx2_f64 __attribute__((vector_size(ATTEND_VEC_BYTES)));
typedef int64_t ivec_avx2_f64 __attribute__((vector_size(ATTEND_VEC_BYTES)));
#define VEC vec_avx2_f64
#define IVEC ivec_avx2_f64
#define VEC_MAX(a, b) (VEC) _mm256_max_pd((__m256d)(a), (__m256d)(b))
#include "core/attend_kernels_impl.inc"
#undef REAL
#undef SFX
#undef VEC
#undef IVEC
#undef VEC_MAX

#define REAL float
#define SFX(name) name##_avx2_f32
typedef float vec_avx2_f32 __attribute__((vector_size(ATTEND_VEC_BYTES)));
typedef int32_t ivec_avx2_f32 __attribute__((vector_size(ATTEND_VEC_BYTES)));
#define VEC vec_avx2_f32
#define IVEC ivec_avx2_f32
#define VEC_MAX(a, b) (VEC) _mm256_max_ps((__m256)(a), (__m256)(b))
#include "core/attend_kernels_impl.inc"
#undef REAL
#undef SFX
#undef VEC
#undef IVEC
#undef VEC_MAX
#define LEVEL_CALL(name, type, ...)                                            \
    (avx2_build() ? name##_avx2_##type(__VA_ARGS__)                            \
                  : name##_avx512_##type(__VA_ARGS__))
#else
#define LEVEL_CALL(name, type, ...) name##_avx512_##type(__VA_ARGS__)
#endif

/* The public functions, for both element types: each calls its build at
 * the level in use. */
#define PUBLIC_FUNCTIONS(REAL, type)                                           \
    size_t attend_key_tile_##type(void)                                        \
    {                                                                          \
        return LEVEL_CALL(attend_key_tile, type);                              \
    }                                                                          \
    size_t attend_keys_padded_##type(size_t m)                                 \
    {                                                                          \
        return LEVEL_CALL(attend_keys_padded, type, m);                        \
    }                                                                          \
    void attend_pack_keys_##type(const REAL *k, size_t ldk, size_t rows,       \
                                 size_t d_k, REAL *kt, size_t key0)            \
    {                                                                          \
        LEVEL_CALL(attend_pack_keys, type, k, ldk, rows, d_k, kt, key0);       \
    }                                                                          \
    void attend_scores_##type(                                                 \
        size_t rows, size_t keys, size_t d_k, REAL alpha, const REAL *q,       \
        size_t ldq, const REAL *kt, REAL *s, size_t lds, REAL *row_max)        \
    {                                                                          \
        LEVEL_CALL(attend_scores, type, rows, keys, d_k, alpha, q, ldq, kt, s, \
                   lds, row_max);                                              \
    }                                                                          \
    bool attend_product_fits_##type(size_t cols)                               \
    {                                                                          \
        return LEVEL_CALL(attend_product_fits, type, cols);                    \
    }                                                                          \
    void attend_product_##type(                                                \
        size_t rows, size_t cols, size_t inner, const REAL *a, size_t lda,     \
        const REAL *b, size_t ldb, REAL *c, size_t ldc, bool accumulate)       \
    {                                                                          \
        LEVEL_CALL(attend_product, type, rows, cols, inner, a, lda, b, ldb, c, \
                   ldc, accumulate);                                           \
    }                                                                          \
    size_t attend_product_strip_##type(void)                                   \
    {                                                                          \
        return LEVEL_CALL(attend_product_strip, type);                         \
    }                                                                          \
    void attend_pack_product_##type(const REAL *b, size_t ldb, size_t inner,   \
                                    size_t cols, REAL *packed)                 \
    {                                                                          \
        LEVEL_CALL(attend_pack_product, type, b, ldb, inner, cols, packed);    \
    }                                                                          \
    void attend_product_packed_##type(                                         \
        size_t rows, size_t cols, size_t inner, const REAL *a, size_t lda,     \
        const REAL *packed, REAL *c, size_t ldc, bool accumulate)              \
    {                                                                          \
        LEVEL_CALL(attend_product_packed, type, rows, cols, inner, a, lda,     \
                   packed, c, ldc, accumulate);                                \
    }

PUBLIC_FUNCTIONS(double, f64)
PUBLIC_FUNCTIONS(float, f32)
