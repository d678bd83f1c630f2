/*
 * softmax_rows.c - the row loops of softmax_rows.h: exp, built once per SIMD
 * level this architecture has and called at the level core/arch.h names.
 */
#include "core/softmax_rows.h"
#include "core/arch.h"

#include <math.h>

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

static inline double exp_f64(double x)
{
    double clamped = x < MIN_X_F64 ? MIN_X_F64 : x;
    double kd = clamped * LOG2E + SHIFT_F64;
    uint64_t kbits;
    memcpy(&kbits, &kd, sizeof kbits);
    kd -= SHIFT_F64;
    double r = clamped - kd * LN2_HI - kd * LN2_LO;
    /* Taylor coefficients 1/i! for i = 13 .. 0 (Horner) */
    double p = 1.6059043836821613e-10;
    p = p * r + 2.08767569878681e-09;
    p = p * r + 2.505210838544172e-08;
    p = p * r + 2.755731922398589e-07;
    p = p * r + 2.7557319223985893e-06;
    p = p * r + 2.48015873015873e-05;
    p = p * r + 1.984126984126984e-04;
    p = p * r + 1.3888888888888889e-03;
    p = p * r + 8.333333333333333e-03;
    p = p * r + 4.1666666666666664e-02;
    p = p * r + 1.6666666666666666e-01;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    uint64_t sbits = (kbits + 1023) << 52;
    double scale;
    memcpy(&scale, &sbits, sizeof scale);
    return x < MIN_X_F64 ? 0.0 : p * scale;
}

static inline float exp_f32(float x)
{
    float clamped = x < MIN_X_F32 ? MIN_X_F32 : x;
    float kf = clamped * 1.44269504f + SHIFT_F32;
    uint32_t kbits;
    memcpy(&kbits, &kf, sizeof kbits);
    kf -= SHIFT_F32;
    float r = clamped - kf * 0.693145752f - kf * 1.42860677e-06f;
    float p = 1.98412698e-04f;
    p = p * r + 1.38888889e-03f;
    p = p * r + 8.33333333e-03f;
    p = p * r + 4.16666667e-02f;
    p = p * r + 1.66666667e-01f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
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

/* Sums and maxima are kept in independent lanes (a 64-byte vector of each
 * type) so that the loops vectorise without -ffast-math, which would let the
 * compiler reorder any floating-point sum; the lanes are combined in a fixed
 * order.  The file is built with -ffp-contract=fast (Makefile): the builds
 * for CPUs with FMA evaluate exp's polynomial with fused multiply-adds, the
 * generic x86-64 build with separate ones, so the last bit of an
 * exponential may differ between a CPU with FMA and one without (both
 * within 2 ulp).  And with -fno-trapping-math: exp's clamps are then
 * selects, not branches, and the exponential loop vectorises at every level
 * (AVX-512 alone has the masked stores that vectorise it with branches). */
#define REAL double
#define SFX(name) name##_f64
#define LANES 8
typedef double vec_f64 __attribute__((vector_size(64)));
typedef int64_t ivec_f64 __attribute__((vector_size(64)));
#define VEC vec_f64
#define IVEC ivec_f64
#include "core/softmax_rows_levels.inc"
#undef REAL
#undef SFX
#undef LANES
#undef VEC
#undef IVEC

#define REAL float
#define SFX(name) name##_f32
#define LANES 16
typedef float vec_f32 __attribute__((vector_size(64)));
typedef int32_t ivec_f32 __attribute__((vector_size(64)));
#define VEC vec_f32
#define IVEC ivec_f32
#include "core/softmax_rows_levels.inc"
#undef REAL
#undef SFX
#undef LANES
#undef VEC
#undef IVEC
