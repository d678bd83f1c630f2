/*
 * softmax_rows.c - the row loops of softmax_rows.h: exp, built once per SIMD
 * level this architecture has and called at the level core/arch.h names.
 */
#include "core/softmax_rows.h"
#include "core/arch.h"

#include <math.h>
#if ARCH_X86_64
#include <immintrin.h>
#endif

/* Round-to-nearest by adding 1.5·2^52 (2^23 for float): the integer lands in
 * the low bits of the mantissa. */
#define SHIFT_F64 6755399441055744.0
#define SHIFT_F32 12582912.0f
#define LOG2E 1.4426950408889634
/* ln 2 = LN2_HI + LN2_LO, LN2_HI with its low 32 bits zero: k·LN2_HI is
 * exact for every k used here (fdlibm's split) */
#define LN2_HI 0.6931471803691238
#define LN2_LO 1.9082149292705877e-10
/* Below this exp(x) is not a normal double (float): the result is 0. */
#define MIN_X_F64 -708.0
#define MIN_X_F32 -87.0f

/* Taylor coefficients 1/i! of exp(r), i = 13 .. 0 (double) and 7 .. 0
 * (float), for Horner's rule; the scalar exp below and the row loops'
 * vector exp (softmax_rows_impl.inc) take the same steps. */
static const double taylor_f64[] = {1.6059043836821613e-10,
                                    2.08767569878681e-09,
                                    2.505210838544172e-08,
                                    2.755731922398589e-07,
                                    2.7557319223985893e-06,
                                    2.48015873015873e-05,
                                    1.984126984126984e-04,
                                    1.3888888888888889e-03,
                                    8.333333333333333e-03,
                                    4.1666666666666664e-02,
                                    1.6666666666666666e-01,
                                    0.5,
                                    1.0,
                                    1.0};
static const float taylor_f32[] = {1.98412698e-04f,
                                   1.38888889e-03f,
                                   8.33333333e-03f,
                                   4.16666667e-02f,
                                   1.66666667e-01f,
                                   0.5f,
                                   1.0f,
                                   1.0f};
#define TAYLOR_TERMS_F64 (sizeof taylor_f64 / sizeof *taylor_f64)
#define TAYLOR_TERMS_F32 (sizeof taylor_f32 / sizeof *taylor_f32)
/* ln 2's two parts for float, as for double above */
#define LN2_HI_F32 0.693145752f
#define LN2_LO_F32 1.42860677e-06f
#define LOG2E_F32 1.44269504f

static inline double exp_f64(double x)
{
    double clamped = x < MIN_X_F64 ? MIN_X_F64 : x;
    double kd = clamped * LOG2E + SHIFT_F64;
    uint64_t kbits;
    memcpy(&kbits, &kd, sizeof kbits);
    kd -= SHIFT_F64;
    double r = clamped - kd * LN2_HI - kd * LN2_LO;
    double p = taylor_f64[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < TAYLOR_TERMS_F64; i++)
        p = p * r + taylor_f64[i];
    uint64_t sbits = (kbits + 1023) << 52;
    double scale;
    memcpy(&scale, &sbits, sizeof scale);
    return x < MIN_X_F64 ? 0.0 : p * scale;
}

static inline float exp_f32(float x)
{
    float clamped = x < MIN_X_F32 ? MIN_X_F32 : x;
    float kf = clamped * LOG2E_F32 + SHIFT_F32;
    uint32_t kbits;
    memcpy(&kbits, &kf, sizeof kbits);
    kf -= SHIFT_F32;
    float r = clamped - kf * LN2_HI_F32 - kf * LN2_LO_F32;
    float p = taylor_f32[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < TAYLOR_TERMS_F32; i++)
        p = p * r + taylor_f32[i];
    uint32_t sbits = (kbits + 127) << 23;
    float scale;
    memcpy(&scale, &sbits, sizeof scale);
    return x < MIN_X_F32 ? 0.0f : p * scale;
}

double softmax_exp_f64(double x) { return exp_f64(x); }
float softmax_exp_f32(float x) { return exp_f32(x); }

/* The loops of one element type at one SIMD level, as softmax_rows.h
 * declares them (row, m, ...). */
#define ROW_LOOPS(REAL)                                                        \
    struct {                                                                   \
        REAL (*exp_row)(REAL *, size_t, REAL);                                 \
        REAL (*row_max)(const REAL *, size_t);                                 \
        REAL (*row_abs_max)(const REAL *, size_t);                             \
        void (*scale_row)(const REAL *, REAL *, size_t, REAL, bool);           \
        void (*normalize_row)(REAL *, size_t, REAL);                           \
        bool (*all_finite)(const REAL *, size_t);                              \
    }
typedef ROW_LOOPS(double) row_loops_f64;
typedef ROW_LOOPS(float) row_loops_f32;

/* Each level's loops are written on GCC vectors of that level's width
 * (softmax_rows_levels.inc): 16 bytes for the build's own target (SSE2 on
 * x86-64, NEON on AArch64), 32 for AVX2, 64 for AVX-512.  Written lane by
 * lane over 64-byte groups instead, GCC 12 turned the AVX2 and generic
 * builds of the row maximum into one scalar compare and branch per element
 * (tests/unit/check_vector_code.py now fails such a build).  Sums and
 * maxima are kept in independent lanes, so no -ffast-math is needed (it
 * would let the compiler reorder any floating-point sum); the lanes are
 * combined in a fixed order.  The file is built with -ffp-contract=fast
 * (Makefile): the builds for CPUs with FMA evaluate exp's polynomial with
 * fused multiply-adds, the generic x86-64 build with separate ones, so the
 * last bit of an exponential may differ between a CPU with FMA and one
 * without (both within 2 ulp).  And with -fno-trapping-math, so that no
 * comparison is kept as a branch for the exceptions it might raise. */
#define REAL double
#define IREAL int64_t
#define SFX(name) name##_f64
#define EXP_MIN MIN_X_F64
#define EXP_LOG2E LOG2E
#define EXP_SHIFT SHIFT_F64
#define EXP_LN2_HI LN2_HI
#define EXP_LN2_LO LN2_LO
#define EXP_TAYLOR taylor_f64
#define EXP_TERMS TAYLOR_TERMS_F64
#define EXP_BIAS 1023
#define EXP_MANTISSA 52
#define X86_MAX_128(a, b) _mm_max_pd((__m128d)(a), (__m128d)(b))
#define X86_MAX_256(a, b) _mm256_max_pd((__m256d)(a), (__m256d)(b))
#define X86_MAX_512(a, b) _mm512_max_pd((__m512d)(a), (__m512d)(b))
#include "core/softmax_rows_levels.inc"
#undef REAL
#undef IREAL
#undef SFX
#undef EXP_MIN
#undef EXP_LOG2E
#undef EXP_SHIFT
#undef EXP_LN2_HI
#undef EXP_LN2_LO
#undef EXP_TAYLOR
#undef EXP_TERMS
#undef EXP_BIAS
#undef EXP_MANTISSA
#undef X86_MAX_128
#undef X86_MAX_256
#undef X86_MAX_512

#define REAL float
#define IREAL int32_t
#define SFX(name) name##_f32
#define EXP_MIN MIN_X_F32
#define EXP_LOG2E LOG2E_F32
#define EXP_SHIFT SHIFT_F32
#define EXP_LN2_HI LN2_HI_F32
#define EXP_LN2_LO LN2_LO_F32
#define EXP_TAYLOR taylor_f32
#define EXP_TERMS TAYLOR_TERMS_F32
#define EXP_BIAS 127
#define EXP_MANTISSA 23
#define X86_MAX_128(a, b) _mm_max_ps((__m128)(a), (__m128)(b))
#define X86_MAX_256(a, b) _mm256_max_ps((__m256)(a), (__m256)(b))
#define X86_MAX_512(a, b) _mm512_max_ps((__m512)(a), (__m512)(b))
#include "core/softmax_rows_levels.inc"
#undef REAL
#undef IREAL
#undef SFX
#undef EXP_MIN
#undef EXP_LOG2E
#undef EXP_SHIFT
#undef EXP_LN2_HI
#undef EXP_LN2_LO
#undef EXP_TAYLOR
#undef EXP_TERMS
#undef EXP_BIAS
#undef EXP_MANTISSA
#undef X86_MAX_128
#undef X86_MAX_256
#undef X86_MAX_512
