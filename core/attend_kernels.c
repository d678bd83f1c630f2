/*
 * attend_kernels.c - register-blocked Q Kᵀ and weights · V for one head
 * (attend_kernels.h), compiled once per element type from
 * attend_kernels_impl.inc.
 */
#include "core/attend_kernels.h"
#include "core/arch.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* One AVX-512 register.  The kernels are built for AVX-512 only: their tiles
 * need its 32 vector registers.  Built for AVX2, with each vector split in
 * two, the tiles need twice the 16 registers AVX2 has; with 32-byte vectors
 * and tiles that fit them (scores 6 × 2, product 4 × 3 vectors) they are
 * still slower than OpenBLAS's Haswell kernels.  So below AVX-512, and on
 * every other architecture, attention_impl.inc calls OpenBLAS
 * (attend_kernels_usable); there the code below is built for the plain
 * target and never called. */
#define ATTEND_VEC_BYTES 64
#if ARCH_X86_64
#include <immintrin.h>
#define KERNEL_TARGET __attribute__((target(ARCH_TARGET_AVX512)))
#else
#define KERNEL_TARGET
#endif

bool attend_kernels_usable(void)
{
    return arch_simd_level() >= ARCH_SIMD_AVX512;
}

/* Scores tile: 8 query rows × 2 vectors of keys = 16 accumulators (of 32
 * AVX-512 registers); with 2 loads of Kᵀ and 8 broadcasts per 16 fused
 * multiply-adds.  Of the tiles 12 × 2, 6 × 3, 8 × 3 and 4 × 4, none is
 * faster. */
#define SCORE_ROWS 8
#define SCORE_VECS 2
#define SCORE_ROW_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
/* Product tile: 6 rows × 4 vectors of output columns = 24 accumulators; per
 * step of the inner dimension 4 loads of b and 6 broadcasts of a per 24
 * fused multiply-adds.  4 vectors are 64 float columns, the usual d_v: one
 * sweep over the keys for weights · V. */
#define PRODUCT_ROWS 6
#define PRODUCT_VECS 4
#define PRODUCT_ROW_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)

#define REAL double
#define SFX(name) name##_f64
typedef double vec_f64 __attribute__((vector_size(ATTEND_VEC_BYTES)));
typedef int64_t ivec_f64 __attribute__((vector_size(ATTEND_VEC_BYTES)));
#define VEC vec_f64
#define IVEC ivec_f64
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
#define SFX(name) name##_f32
typedef float vec_f32 __attribute__((vector_size(ATTEND_VEC_BYTES)));
typedef int32_t ivec_f32 __attribute__((vector_size(ATTEND_VEC_BYTES)));
#define VEC vec_f32
#define IVEC ivec_f32
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
