/*
 * attention_problems.h - the attention tests' problems: random tensors and
 * random problems of every kind (reproducible from a seed, test_random.h),
 * lesson 001's problem, and how far a stage is from the reference's.  Each test
 * file that includes it has its own copies.
 */
#ifndef TESTS_UNIT_ATTENTION_PROBLEMS_H
#define TESTS_UNIT_ATTENTION_PROBLEMS_H

#include "tests/unit/test_random.h"

#include "core/attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline void *random_tensor(tensor_dtype dtype, size_t count)
{
    void *a = malloc(count * tensor_dtype_size(dtype) + 1);
    for (size_t i = 0; i < count; i++) {
        if (dtype == TENSOR_FLOAT32)
            ((float *)a)[i] = (float)uniform();
        else
            ((double *)a)[i] = uniform();
    }
    return a;
}

static inline double element(const void *a, tensor_dtype dtype, size_t i)
{
    return dtype == TENSOR_FLOAT32 ? (double)((const float *)a)[i]
                                   : ((const double *)a)[i];
}

static inline size_t stage_count(const attn_problem *p, attn_stage s)
{
    size_t dims[ATTN_MAX_RANK], count = 1;
    int rank = attn_stage_shape(p, s, dims);
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    return count;
}

/* Largest |a − b| over the stage, relative to the largest |b|; 0 when
 * neither has the stage (one the problem does not have), ∞ when only one
 * does. */
static inline double relative_error(const attn_problem *p, attn_stage s,
                                    const void *a, const void *b)
{
    if (!a || !b)
        return a == b ? 0 : INFINITY;
    double max_diff = 0, max_ref = 0;
    for (size_t i = 0; i < stage_count(p, s); i++) {
        double x = element(a, p->dtype, i), y = element(b, p->dtype, i);
        if (isinf(x) && isinf(y) && x == y)
            continue; /* both masked (−∞) */
        max_diff = fmax(max_diff, fabs(x - y));
        max_ref = fmax(max_ref, fabs(y));
    }
    return max_ref > 0 ? max_diff / max_ref : max_diff;
}

typedef struct {
    attn_problem p;
    void *buffers[18];
} random_problem;

static inline void make_random_problem(random_problem *rp, tensor_dtype dtype,
                                       unsigned seed)
{
    rng_state = 0x9e3779b97f4a7c15u ^ (seed * 0x2545f4914f6cdd1du);
    memset(rp, 0, sizeof *rp);
    attn_problem *p = &rp->p;
    p->dtype = dtype;
    p->heads = 1 + seed % 5;
    p->n = 1 + (size_t)((uniform() + 1) * 70); /* up to 140: 3 row blocks */
    p->d = 1 + (size_t)((uniform() + 1) * 12);
    p->d_k = 1 + seed % 7;
    /* 16 is whole vectors for both types: weights · V by attend_values() */
    p->d_v = seed % 5 == 4 ? 16 : 1 + (seed / 7) % 5;
    bool cross = seed % 3 == 0;
    p->m = cross ? 1 + (size_t)((uniform() + 1) * (seed % 2 ? 300 : 40)) : p->n;
    p->d_c = cross ? 1 + seed % 9 : p->d;
    /* grouped-query heads on some: one key/value head, or half as many */
    if (seed % 4 == 2)
        p->kv_heads = seed % 8 == 2 || p->heads % 2 ? 1 : p->heads / 2;
    size_t h_kv = attn_kv_heads(p);
    size_t width_k = p->heads * p->d_k, width_v = h_kv * p->d_v;
    size_t width_kv_k = h_kv * p->d_k;
    rp->buffers[0] = random_tensor(dtype, p->n * p->d);
    p->x = rp->buffers[0];
    if (cross) {
        rp->buffers[1] = random_tensor(dtype, p->m * p->d_c);
        p->context = rp->buffers[1];
    }
    p->w_q = rp->buffers[2] = random_tensor(dtype, p->d * width_k);
    p->w_k = rp->buffers[3] = random_tensor(dtype, p->d_c * width_kv_k);
    p->w_v = rp->buffers[4] = random_tensor(dtype, p->d_c * width_v);
    if (seed % 2) {
        p->d_out = 1 + seed % 11;
        p->w_o = rp->buffers[5] =
            random_tensor(dtype, p->heads * p->d_v * p->d_out);
    }
    /* a KV cache before the new keys on some: masks cover both */
    if (seed % 4 == 1) {
        p->past = 1 + seed % 13;
        p->past_k = rp->buffers[16] =
            random_tensor(dtype, h_kv * p->past * p->d_k);
        p->past_v = rp->buffers[17] =
            random_tensor(dtype, h_kv * p->past * p->d_v);
        p->m += p->past;
    }
    /* RoPE (either style) on some, the sinusoidal encoding on others */
    if (seed % 3 == 1 && p->d_k >= 2) {
        p->rope_dims = seed % 9 == 4 ? 2 : p->d_k / 2 * 2;
        p->rope_base = seed % 2 ? 10000 : 100;
        p->rope_interleaved = seed % 6 == 4;
    }
    p->sinusoidal = seed % 5 == 1;
    p->scale = seed % 4 == 1 ? 0.37 : 0;
    p->causal = seed % 5 == 2;
    if (seed % 4 == 3) {
        uint8_t *allow = malloc(p->n * p->m);
        for (size_t i = 0; i < p->n * p->m; i++)
            allow[i] = uniform() > -0.6;
        p->allow = rp->buffers[6] = allow;
    }
    if (seed % 6 == 5)
        p->bias = rp->buffers[7] = random_tensor(dtype, p->n * p->m);
    if (seed % 7 == 4) {
        uint8_t *pad = malloc(p->m);
        for (size_t j = 0; j < p->m; j++)
            pad[j] = uniform() > 0.5;
        p->key_padding = rp->buffers[8] = pad;
    }
    if (seed % 5 == 3) /* a window, over positions 0, 1, ... or given */
        p->window = 1 + seed % 9;
    if (seed % 10 == 8) { /* positions with gaps and repeats */
        int64_t *pos = malloc(p->n * sizeof *pos), *kpos = NULL;
        for (size_t i = 0; i < p->n; i++)
            pos[i] = (int64_t)(i * 2 - (i % 3 == 2)) + 5;
        p->positions = rp->buffers[13] = pos;
        if (cross) {
            kpos = malloc(p->m * sizeof *kpos);
            for (size_t j = 0; j < attn_new_keys(p); j++)
                kpos[j] = (int64_t)(j + p->past);
            p->context_positions = rp->buffers[14] = kpos;
        }
    }
    if (seed % 6 == 1) { /* ALiBi: one slope per head */
        double *slopes = malloc(p->heads * sizeof *slopes);
        for (size_t hd = 0; hd < p->heads; hd++)
            slopes[hd] = 1.0 / (double)(2u << hd);
        p->alibi_slopes = rp->buffers[15] = slopes;
    }
    if (seed % 3 != 2) { /* biases on two problems in three */
        p->b_q = rp->buffers[9] = random_tensor(dtype, width_k);
        p->b_k = rp->buffers[10] = random_tensor(dtype, width_kv_k);
        p->b_v = rp->buffers[11] = random_tensor(dtype, width_v);
        if (p->w_o)
            p->b_o = rp->buffers[12] = random_tensor(dtype, p->d_out);
    }
}

static inline void free_random_problem(random_problem *rp)
{
    for (int i = 0; i < 18; i++)
        free(rp->buffers[i]);
}

/* every stage there is */
enum { want_all = (1u << ATTN_STAGE_COUNT) - 1 };

/* Lesson 001 (../shared/seeds/001_*.txt): X (3×4) and fixed 4×4 weights. */
static const double lesson_x[] = {1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1};
static const double lesson_wq[] = {0.1, 0.2, 0, 0,   0, 0.1, 0.3, 0,
                                   0.1, 0,   0, 0.2, 0, 0,   0.2, 0.3};
static const double lesson_wk[] = {0.2, 0, 0.1, 0, 0, 0.1, 0, 0.3,
                                   0.1, 0, 0.2, 0, 0, 0.2, 0, 0.1};
static const double lesson_wv[] = {0, 0.1, 0,   0.2, 0.2, 0, 0.2, 0,
                                   0, 0.3, 0.1, 0,   0.1, 0, 0,   0.3};

static inline attn_problem lesson_001(void)
{
    return (attn_problem){.dtype = TENSOR_FLOAT64,
                          .n = 3,
                          .m = 3,
                          .d = 4,
                          .d_c = 4,
                          .heads = 1,
                          .d_k = 4,
                          .d_v = 4,
                          .x = lesson_x,
                          .w_q = lesson_wq,
                          .w_k = lesson_wk,
                          .w_v = lesson_wv};
}

#endif
