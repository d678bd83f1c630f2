#include "softmax_rows.h"

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

/* Sums and maxima are kept in independent lanes so that the loops
 * vectorise without -ffast-math (which would let the compiler reorder any
 * floating-point sum); the lanes are combined in a fixed order, so results do
 * not depend on which clone runs. */
#define LANES_F64 8
#define LANES_F32 16

SOFTMAX_CLONES
double softmax_exp_row_f64(double *row, size_t m, double max)
{
    for (size_t j = 0; j < m; j++)
        row[j] = exp_f64(row[j] - max);
    double lane[LANES_F64] = {0};
    size_t j = 0;
    for (; j + LANES_F64 <= m; j += LANES_F64)
        for (size_t l = 0; l < LANES_F64; l++)
            lane[l] += row[j + l];
    for (; j < m; j++)
        lane[0] += row[j];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
           ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

SOFTMAX_CLONES
float softmax_exp_row_f32(float *row, size_t m, float max)
{
    for (size_t j = 0; j < m; j++)
        row[j] = exp_f32(row[j] - max);
    float lane[LANES_F32] = {0};
    size_t j = 0;
    for (; j + LANES_F32 <= m; j += LANES_F32)
        for (size_t l = 0; l < LANES_F32; l++)
            lane[l] += row[j + l];
    for (; j < m; j++)
        lane[0] += row[j];
    for (size_t width = LANES_F32 / 2; width > 0; width /= 2)
        for (size_t l = 0; l < width; l++)
            lane[l] += lane[l + width];
    return lane[0];
}

SOFTMAX_CLONES
double softmax_row_max_f64(const double *row, size_t m)
{
    double lane[LANES_F64];
    for (size_t l = 0; l < LANES_F64; l++)
        lane[l] = -INFINITY;
    size_t j = 0;
    for (; j + LANES_F64 <= m; j += LANES_F64)
        for (size_t l = 0; l < LANES_F64; l++)
            lane[l] = row[j + l] > lane[l] ? row[j + l] : lane[l];
    for (; j < m; j++)
        lane[0] = row[j] > lane[0] ? row[j] : lane[0];
    double max = lane[0];
    for (size_t l = 1; l < LANES_F64; l++)
        max = lane[l] > max ? lane[l] : max;
    return max;
}

SOFTMAX_CLONES
float softmax_row_max_f32(const float *row, size_t m)
{
    float lane[LANES_F32];
    for (size_t l = 0; l < LANES_F32; l++)
        lane[l] = -INFINITY;
    size_t j = 0;
    for (; j + LANES_F32 <= m; j += LANES_F32)
        for (size_t l = 0; l < LANES_F32; l++)
            lane[l] = row[j + l] > lane[l] ? row[j + l] : lane[l];
    for (; j < m; j++)
        lane[0] = row[j] > lane[0] ? row[j] : lane[0];
    float max = lane[0];
    for (size_t l = 1; l < LANES_F32; l++)
        max = lane[l] > max ? lane[l] : max;
    return max;
}

SOFTMAX_CLONES
void softmax_scale_row_f64(const double *src, double *dst, size_t m, double by,
                           bool divide)
{
    if (divide)
        for (size_t j = 0; j < m; j++)
            dst[j] = src[j] / by;
    else
        for (size_t j = 0; j < m; j++)
            dst[j] = src[j] * by;
}

SOFTMAX_CLONES
void softmax_scale_row_f32(const float *src, float *dst, size_t m, float by,
                           bool divide)
{
    if (divide)
        for (size_t j = 0; j < m; j++)
            dst[j] = src[j] / by;
    else
        for (size_t j = 0; j < m; j++)
            dst[j] = src[j] * by;
}

SOFTMAX_CLONES
void softmax_normalize_row_f64(double *row, size_t m, double sum)
{
    for (size_t j = 0; j < m; j++)
        row[j] /= sum;
}

SOFTMAX_CLONES
void softmax_normalize_row_f32(float *row, size_t m, float sum)
{
    for (size_t j = 0; j < m; j++)
        row[j] /= sum;
}

/* x − x is 0 for every finite x and NaN for ±∞ and NaN; OR-ing the
 * comparisons keeps the loop free of early exits, so it vectorises. */
SOFTMAX_CLONES
bool softmax_all_finite_f64(const double *row, size_t m)
{
    int bad = 0;
    for (size_t j = 0; j < m; j++)
        bad |= !(row[j] - row[j] == 0);
    return !bad;
}

SOFTMAX_CLONES
bool softmax_all_finite_f32(const float *row, size_t m)
{
    int bad = 0;
    for (size_t j = 0; j < m; j++)
        bad |= !(row[j] - row[j] == 0);
    return !bad;
}
