/*
 * attention.c - dtype-independent parts of the forward pass: sizes, the
 * stages handed back (their names and shapes: stages.c).  The arithmetic lives
 * in attention_impl.inc (the fast pass) and attention_reference.inc (the
 * textbook one), compiled once for double and once for float.
 */
#include "core/attention.h"

#include "core/arch.h"
#include "core/attend_kernels.h"
#include "core/attn_stop.h"
#include "core/softmax_rows.h"

#include <assert.h>
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

/* Rows handled by one task of the attention pass, and by one call of the
 * product kernel in the projections: 120 rows make products big enough for
 * the kernels to run near their peak (a 120-row block of X or of the
 * weights stays in L2), still give a 2-core machine several tasks per head
 * at n = 256, and are a whole number of the scores kernel's 8-row tiles
 * and of the product kernel's 6-row tiles (attend_kernels.c).  Blocks of
 * 128 rows end in a 2-row product tile, which makes the fused pass slower
 * (docs/performance.md, "The core's constants and choices, measured"). */
#define ATTN_ROW_BLOCK 120
/* Rows per task of the fused pass under a sliding window (fused_rows): a
 * block of r rows computes about r + 2w keys of which each row sees 2w − 1,
 * so fewer rows waste fewer keys; 64 were faster than 128 and 32 no faster
 * again (docs/performance.md, "The core's constants and choices,
 * measured"). */
#define ATTN_WINDOW_ROW_BLOCK 64
/* Keys per tile of the fused pass: a 120 × 512 tile of float scores (240 KiB)
 * stays in L2 beside the K and V rows it is made from. */
#define ATTN_KEY_BLOCK 512
/* Most row blocks per task of the fused pass a test may ask for
 * (attn_set_fused_group): the task keeps their running sums on its
 * stack. */
#define ATTN_FUSED_GROUP_MAX 8
/* Keys a sliding window or causal may cut from either end of a key block at
 * a time: a whole number of the scores kernel's tiles (16 or 32 keys) and
 * fine enough that a window of 256 wastes less than a quarter of its work
 * on keys it hides. */
#define ATTN_SKIP_GRAIN 64
/* Below this many multiply-adds a forward pass runs on the calling thread
 * alone: waking a helper costs more than it saves (docs/performance.md,
 * "The core's constants and choices, measured"), and a lesson-sized
 * request needs a few thousand. */
#define ATTN_PARALLEL_MIN_WORK (1u << 20)
/* Most multiply-adds one OpenBLAS call of a projection takes (it packs W
 * once per call, so a task's rows go in as few calls as this allows): the
 * stop (attn_stop.h) is read between calls, and 2^28 multiply-adds are a
 * few milliseconds of one core (docs/performance.md, "Stopping a pass"). */
#define ATTN_STOP_WORK ((size_t)1 << 28)
/* The stages shaped (h, n, m): wanting any of them means materialising the
 * scores row block by row block instead of the fused online softmax. */
#define ATTN_SCORE_STAGES                                                      \
    (ATTN_WANT(ATTN_SCORES) | ATTN_WANT(ATTN_SCALED_SCORES) |                  \
     ATTN_WANT(ATTN_MASKED_SCORES) | ATTN_WANT(ATTN_WEIGHTS))

/* Elements of stage s (of the whole batch), or SIZE_MAX on overflow. */
static size_t stage_elements(const attn_problem *p, attn_stage s)
{
    size_t dims[ATTN_MAX_RANK], count = 1;
    int rank = attn_stage_shape(p, s, dims);
    for (int i = 0; i < rank; i++)
        if (!tensor_mul_size(count, dims[i], &count))
            return SIZE_MAX;
    return count;
}

/* The stages attn_forward() hands back for `want`: those p has, and the
 * output. */
static unsigned stages_computed(const attn_problem *p, unsigned want)
{
    unsigned stages = ATTN_WANT(ATTN_OUTPUT);
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        if ((want & ATTN_WANT(s)) && attn_stage_applies(p, (attn_stage)s))
            stages |= ATTN_WANT(s);
    return stages;
}

/* *acc += a · b · c; false on overflow. */
static bool add_product(size_t *acc, size_t a, size_t b, size_t c)
{
    size_t ab;
    return tensor_mul_size(a, b, &ab) && tensor_mul_add_size(acc, ab, c);
}

/* Rows per task of a projection over `rows` rows (pass 1 and pass 3): one
 * share per thread, at least ATTN_ROW_BLOCK.  When OpenBLAS does the product
 * (a width that is not whole vectors), it packs the weight matrix once per
 * call: 128-row calls packed a (512, 1536) W eight times at n = 1024, one
 * call per thread packs it once each. */
static size_t projection_rows(size_t rows, size_t threads)
{
    size_t share = (rows + threads - 1) / threads;
    return share < ATTN_ROW_BLOCK ? ATTN_ROW_BLOCK : share;
}

static size_t scratch_rows(const attn_problem *p)
{
    return p->n < ATTN_ROW_BLOCK ? p->n : ATTN_ROW_BLOCK;
}

/* Query rows per task of the fused pass.  A window of w makes a block of
 * r rows compute about r + 2w keys of which each row sees 2w − 1. */
static size_t fused_rows(const attn_problem *p)
{
    size_t rows = p->window ? ATTN_WINDOW_ROW_BLOCK : ATTN_ROW_BLOCK;
    return p->n < rows ? p->n : rows;
}

/* Multiply-adds of the forward pass (projections, Q Kᵀ, weights · V, W_o),
 * saturating: only compared with ATTN_PARALLEL_MIN_WORK. */
static double multiply_adds(const attn_problem *p)
{
    double n = (double)p->n, m = (double)p->m, h = (double)p->heads;
    double h_kv = (double)attn_kv_heads(p);
    double d_k = (double)p->d_k, d_v = (double)p->d_v;
    double m_new = (double)attn_new_keys(p);
    return n * (double)p->d * h * d_k +
           m_new * (double)p->d_c * h_kv * (d_k + d_v) +
           h * n * m * (d_k + d_v) +
           (p->w_o ? n * h * d_v * (double)p->d_out : 0);
}

/* attn_set_fused_group(): 0 (the rule below) until a test says otherwise */
static atomic_size_t fused_group_wanted = 0;

void attn_set_fused_group(size_t group)
{
    atomic_store(&fused_group_wanted, group);
}

/* Most row blocks one task of the fused pass takes each key block for
 * (fused_group): the size the scratch is made for.  They read the block's
 * K and V rows from L2 one after the other, where a task of one row block
 * streams a head's whole K and V from L3 once they outgrow L2 (the kernels
 * lose 4 to 17 % to that: docs/performance.md, "ONNX Runtime as an
 * anchor").  4 row blocks keep 3 of 4 reads in L2 and leave a 2-thread
 * pool 9 tasks per head at n = 4096. */
#define ATTN_FUSED_GROUP 4
/* One core's L2 on the machines measured (AMD Zen 5: 1 MiB): half of it
 * for a head's K and V leaves room for the score tile, Q and the running
 * sums of the row blocks. */
#define ATTN_L2_BYTES ((size_t)1 << 20)

/* Row blocks per task of the fused pass: ATTN_FUSED_GROUP when one head's
 * K and V would not stay in half of L2 from one row block to the next, else
 * 1; or what a test asked for (attn_set_fused_group). */
static size_t fused_group(const attn_problem *p)
{
    size_t wanted = atomic_load(&fused_group_wanted);
    if (wanted)
        return wanted < ATTN_FUSED_GROUP_MAX ? wanted : ATTN_FUSED_GROUP_MAX;
    double head_bytes = (double)p->m * (double)(p->d_k + p->d_v) *
                        (double)tensor_dtype_size(p->dtype);
    return head_bytes > (double)(ATTN_L2_BYTES / 2) ? ATTN_FUSED_GROUP : 1;
}

/* Keys in one tile of the fused pass. */
static size_t tile_keys(const attn_problem *p)
{
    return p->m < ATTN_KEY_BLOCK ? p->m : ATTN_KEY_BLOCK;
}

/* Elements of one thread's scratch in the fused pass: a score tile, the
 * output accumulator, the running maximum and sum and the tile's row
 * maxima. */
static size_t fused_scratch(const attn_problem *p)
{
    return scratch_rows(p) * (tile_keys(p) + fused_group(p) * (p->d_v + 3));
}

static size_t sequence_bytes_needed(const attn_problem *p, unsigned want,
                                    size_t threads);
static bool add_packed_weights(size_t *elements, const attn_problem *p);

/* Sequence b of a batch, as a problem of its own. */
static attn_problem sequence_of(const attn_problem *p, size_t b)
{
    attn_problem seq = *p;
    size_t elem = tensor_dtype_size(p->dtype);
    seq.batch = 0;
    if (p->x)
        seq.x = (const char *)p->x + b * p->n * p->d * elem;
    size_t h = p->heads, h_kv = attn_kv_heads(p), m_new = attn_new_keys(p);
    if (p->q) {
        seq.q = (const char *)p->q + b * h * p->n * p->d_k * elem;
        seq.k = (const char *)p->k + b * h_kv * m_new * p->d_k * elem;
        seq.v = (const char *)p->v + b * h_kv * m_new * p->d_v * elem;
    }
    if (p->context)
        seq.context = (const char *)p->context + b * m_new * p->d_c * elem;
    if (p->past) {
        seq.past_k =
            (const char *)p->past_k + b * h_kv * p->past * p->d_k * elem;
        seq.past_v =
            (const char *)p->past_v + b * h_kv * p->past * p->d_v * elem;
    }
    if (p->key_padding)
        seq.key_padding = p->key_padding + b * p->m;
    if (p->mask_per_sequence) {
        size_t plane = (p->mask_per_head ? h : 1) * p->n * p->m;
        if (p->allow)
            seq.allow = p->allow + b * plane;
        if (p->bias)
            seq.bias = (const char *)p->bias + b * plane * elem;
    }
    seq.mask_per_sequence = false;
    return seq;
}

size_t attn_bytes_needed(const attn_problem *p, unsigned want, size_t threads)
{
    /* one sequence at work, the projections' W packed once for all of them
     * (attn_shared), and a batch's stages each sequence is copied into */
    attn_problem seq = p->batch ? sequence_of(p, 0) : *p;
    size_t bytes = sequence_bytes_needed(&seq, want, threads), elements = 0;
    for (int s = 0; p->batch && s < ATTN_STAGE_COUNT; s++)
        if ((stages_computed(p, want) & ATTN_WANT(s)) &&
            !tensor_mul_add_size(&elements, stage_elements(p, (attn_stage)s),
                                 1))
            return SIZE_MAX;
    size_t shared_bytes;
    if (bytes == SIZE_MAX || !add_packed_weights(&elements, p) ||
        !tensor_mul_size(elements, tensor_dtype_size(p->dtype),
                         &shared_bytes) ||
        shared_bytes > SIZE_MAX - bytes)
        return SIZE_MAX;
    return bytes + shared_bytes;
}

static size_t sequence_bytes_needed(const attn_problem *p, unsigned want,
                                    size_t threads)
{
    size_t h = p->heads, h_kv = attn_kv_heads(p), m_new = attn_new_keys(p);
    size_t elements = 0;
    /* the passes' wide Q (n, h·d_k), K and V (every key, past and new), the
     * concatenation and the output */
    bool fits = add_product(&elements, p->n, h, p->d_k) &&
                add_product(&elements, p->m, h_kv, p->d_k + p->d_v) &&
                add_product(&elements, p->n, h, p->d_v) &&
                (!p->w_o || add_product(&elements, p->n, p->d_out, 1));
    /* every wanted stage but those above is a buffer of its own (x_pe is
     * counted below) */
    unsigned own = stages_computed(p, want) &
                   ~(ATTN_WANT(ATTN_X_PE) | ATTN_WANT(ATTN_CONCAT) |
                     ATTN_WANT(ATTN_OUTPUT));
    for (int s = 0; fits && s < ATTN_STAGE_COUNT; s++)
        if (own & ATTN_WANT(s))
            fits =
                add_product(&elements, stage_elements(p, (attn_stage)s), 1, 1);
    /* the sinusoidal encoding's x + PE and context + PE */
    if (fits && p->sinusoidal)
        fits = add_product(&elements, p->n, p->d, 1) &&
               (!p->context || add_product(&elements, m_new, p->d_c, 1));
    /* RoPE's cos and sin per query and new key, and the unrotated q and k
     * when they are wanted */
    if (fits && p->rope_dims)
        fits = add_product(&elements, p->n + m_new, p->rope_dims, 1) &&
               (!(want & ATTN_WANT(ATTN_Q)) ||
                add_product(&elements, p->n, h, p->d_k)) &&
               (!(want & ATTN_WANT(ATTN_K)) ||
                add_product(&elements, m_new, h_kv, p->d_k));
    if (!fits)
        return SIZE_MAX;
    /* each head's Kᵀ, its rows padded for the scores kernel */
    size_t keys_padded = p->dtype == TENSOR_FLOAT32
                             ? attend_keys_padded_f32(p->m)
                             : attend_keys_padded_f64(p->m);
    if (keys_padded < p->m ||
        !tensor_mul_add_size(&elements, keys_padded, attn_kv_heads(p) * p->d_k))
        return SIZE_MAX;
    /* each head's values, rows contiguous (when there are several heads) */
    if (h_kv > 1 && !add_product(&elements, p->m, h_kv, p->d_v))
        return SIZE_MAX;
    /* one scratch per thread that may join a loop: a (row block × m) tile,
     * or the fused pass's (row block × key block) tile and accumulators */
    size_t tile =
        want & ATTN_SCORE_STAGES ? scratch_rows(p) * p->m : fused_scratch(p);
    if (p->m > SIZE_MAX / ATTN_ROW_BLOCK ||
        !tensor_mul_add_size(&elements, tile, threads))
        return SIZE_MAX;
    size_t bytes;
    if (!tensor_mul_size(elements, tensor_dtype_size(p->dtype), &bytes))
        return SIZE_MAX;
    return bytes;
}

void attn_result_free(attn_result *r)
{
    if (!r)
        return;
    void *output = r->stage[ATTN_OUTPUT];
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        /* without w_o, output aliases concat: free that buffer once */
        if (s != ATTN_OUTPUT && r->stage[s] == output)
            r->stage[s] = NULL;
        free(r->stage[s]);
        r->stage[s] = NULL;
    }
}

/* The position of query i and of key j (j < m₀: a cached key). */
static inline int64_t query_position(const attn_problem *p, size_t i)
{
    return p->positions ? p->positions[i] : (int64_t)(p->past + i);
}

static inline int64_t key_position(const attn_problem *p, size_t j)
{
    if (j < p->past)
        return (int64_t)j;
    size_t fresh = j - p->past; /* the new key's row */
    if (p->context_positions)
        return p->context_positions[fresh];
    if (!p->context && p->positions && attn_new_keys(p) == p->n)
        return p
            ->positions[fresh]; /* self-attention: the keys are the queries */
    return (int64_t)j;
}

/* RoPE's θ_i = base^(−2i / dims), i < dims / 2. */
static inline double rope_theta(const attn_problem *p, size_t i)
{
    return pow(p->rope_base, -(double)(2 * i) / (double)p->rope_dims);
}

/* 10000^(2i / width): what the sinusoidal encoding divides positions by
 * in columns 2i and 2i + 1 of a width-wide row. */
static inline double sinusoid_divisor(size_t i, size_t width)
{
    return pow(10000.0, (double)(2 * i) / (double)width);
}

/* Where head `head`'s (n, m) plane of the masks starts. */
static inline size_t mask_plane(const attn_problem *p, size_t head)
{
    return p->mask_per_head ? head * p->n * p->m : 0;
}

/* Is key j hidden from head `head`'s query i by the causal flag, the window,
 * the boolean mask or the key padding? */
static inline bool key_hidden(const attn_problem *p, size_t head, size_t i,
                              size_t j)
{
    if (p->causal || p->window) {
        int64_t ahead = key_position(p, j) - query_position(p, i);
        if (p->causal && ahead > 0)
            return true;
        uint64_t distance =
            ahead < 0 ? (uint64_t)0 - (uint64_t)ahead : (uint64_t)ahead;
        if (p->window && distance >= p->window)
            return true;
    }
    if (p->allow && !p->allow[mask_plane(p, head) + i * p->m + j])
        return true;
    if (p->key_padding && p->key_padding[j])
        return true;
    return false;
}

/* ALiBi's −slope · |p_i − p_j| for head `head`, query i and key j. */
static inline double alibi_bias(const attn_problem *p, size_t head, size_t i,
                                size_t j)
{
    int64_t ahead = key_position(p, j) - query_position(p, i);
    double distance = ahead < 0 ? -(double)ahead : (double)ahead;
    return -p->alibi_slopes[head] * distance;
}

/* attn_use_own_kernels(): 1 until a test or benchmark says otherwise */
static atomic_int own_kernels_wanted = 1;

void attn_use_own_kernels(bool on) { atomic_store(&own_kernels_wanted, on); }

/* Do the products go through attend_kernels.h (else OpenBLAS)?  Asked per
 * forward pass: the level in use may be capped between passes, and the
 * kernels' layout (the packed Kᵀ's tiles) is that level's. */
static bool attn_own_kernels(void)
{
    return attend_kernels_usable() && atomic_load(&own_kernels_wanted);
}

/* Do the projections (X · W, concat · W_o) go through the kernels (else
 * OpenBLAS)?  At AVX-512, yes, reading W in place.  At AVX2, in float32,
 * with each W packed once a request into the product kernel's strips
 * (packs_w(), attend_kernels.h): OpenBLAS's Haswell kernels and the kernels
 * reading W in place were as fast as each other, W packed is faster than both;
 * in float64 OpenBLAS is as fast or faster (docs/performance.md, "Without
 * AVX-512"). */
static bool attn_own_projections(tensor_dtype dtype)
{
    return arch_simd_level() >= ARCH_SIMD_AVX512 || dtype == TENSOR_FLOAT32;
}

/* Is each W packed (above)?  Only with the kernels in use. */
static bool attn_pack_projections(tensor_dtype dtype)
{
    return attn_own_kernels() && arch_simd_level() < ARCH_SIMD_AVX512 &&
           attn_own_projections(dtype);
}

/* Projection `matrix`'s W (0, 1, 2: W_q, W_k, W_v; 3: W_o), its inner
 * dimension and columns, or NULL when the pass multiplies none (Q, K and V
 * given, or no W_o). */
static const void *projection_w(const attn_problem *p, size_t matrix,
                                size_t *inner, size_t *cols)
{
    size_t h = p->heads, h_kv = attn_kv_heads(p);
    if (matrix == 3) {
        *inner = h * p->d_v, *cols = p->d_out;
        return p->w_o;
    }
    if (p->q)
        return NULL;
    *inner = matrix == 0 || !p->context ? p->d : p->d_c;
    *cols = matrix == 0   ? h * p->d_k
            : matrix == 1 ? h_kv * p->d_k
                          : h_kv * p->d_v;
    return matrix == 0 ? p->w_q : matrix == 1 ? p->w_k : p->w_v;
}

/* Is projection `matrix`'s W (cols columns) packed for request p, once,
 * before its first sequence?  When the projections pack (above), and when
 * more than ATTN_ROW_BLOCK rows of the whole request (every sequence of a
 * batch) go through it: a copy costs a read and a write of W, which the
 * strips pay back only while further rows read them; a lesson-sized
 * request reads W in place (docs/performance.md, "Without AVX-512"). */
static bool packs_w(const attn_problem *p, size_t matrix, size_t cols)
{
    size_t rows = matrix == 0 || matrix == 3 ? p->n : attn_new_keys(p);
    size_t all_rows = SIZE_MAX;
    bool fits = p->dtype == TENSOR_FLOAT32 ? attend_product_fits_f32(cols)
                                           : attend_product_fits_f64(cols);
    return attn_pack_projections(p->dtype) && fits &&
           (!tensor_mul_size(rows, p->batch ? p->batch : 1, &all_rows) ||
            all_rows > ATTN_ROW_BLOCK);
}

/* Elements of the projections' packed W (packs_w()). */
static bool add_packed_weights(size_t *elements, const attn_problem *p)
{
    for (size_t matrix = 0; matrix < 4; matrix++) {
        size_t inner, cols;
        if (projection_w(p, matrix, &inner, &cols) &&
            packs_w(p, matrix, cols) && !add_product(elements, inner, cols, 1))
            return false;
    }
    return true;
}

/* What a pass stopped by `why` returns. */
static attn_status stop_status(attn_stop_reason why)
{
    return why == ATTN_STOP_DEADLINE ? ATTN_ERR_DEADLINE : ATTN_ERR_CANCELLED;
}

/* What the sequences of one request share: the projections' W in the
 * product kernel's strips (packs_w(); NULL: W is read in place), packed
 * before the first sequence, and RoPE's cos and sin of every query and new
 * key (attention_state.inc's rope_q, rope_k), made by the first sequence
 * and read by the others.  Each is made once per request and freed with
 * shared_free(). */
typedef struct {
    void *packed_w[4];
    void *rope_q, *rope_k;
} attn_shared;

static void shared_free(attn_shared *shared)
{
    for (size_t matrix = 0; matrix < 4; matrix++)
        free(shared->packed_w[matrix]);
    free(shared->rope_q), free(shared->rope_k);
    memset(shared, 0, sizeof *shared);
}

#define REAL double
#define SFX(name) name##_f64
#define GEMM cblas_dgemm
#define EXP exp
#define ROWS(name) softmax_##name##_f64
#define KERN(name) attend_##name##_f64
#include "core/attention_impl.inc"
#include "core/attention_reference.inc"
#undef REAL
#undef SFX
#undef GEMM
#undef EXP
#undef ROWS
#undef KERN

#define REAL float
#define SFX(name) name##_f32
#define GEMM cblas_sgemm
#define EXP expf
#define ROWS(name) softmax_##name##_f32
#define KERN(name) attend_##name##_f32
#include "core/attention_impl.inc"
#include "core/attention_reference.inc"
#undef REAL
#undef SFX
#undef GEMM
#undef EXP
#undef ROWS
#undef KERN

/* One sequence (p->batch == 0), by the fast pass or the reference. */
static attn_status forward_sequence(pool *workers, const attn_problem *p,
                                    unsigned want, attn_result *out,
                                    bool reference, attn_shared *shared)
{
    memset(out, 0, sizeof *out);
    if (reference)
        return p->dtype == TENSOR_FLOAT32 ? reference_f32(p, want, out)
                                          : reference_f64(p, want, out);
    return p->dtype == TENSOR_FLOAT32
               ? forward_f32(workers, p, want, out, shared)
               : forward_f64(workers, p, want, out, shared);
}

/* A batch: each sequence in turn, its stages copied into the batch's. */
static attn_status forward_batch(pool *workers, const attn_problem *p,
                                 unsigned want, attn_result *out,
                                 bool reference, attn_shared *shared)
{
    memset(out, 0, sizeof *out);
    attn_stop_reason why = attn_stop_check(p->stop);
    if (why != ATTN_RUN)
        return stop_status(why);
    unsigned stages = stages_computed(p, want);
    size_t elem = tensor_dtype_size(p->dtype);
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        if (stages & ATTN_WANT(s)) {
            out->stage[s] = malloc(stage_elements(p, (attn_stage)s) * elem + 1);
            if (!out->stage[s]) {
                attn_result_free(out);
                return ATTN_ERR_NOMEM;
            }
        }
    for (size_t b = 0; b < p->batch; b++) {
        attn_problem seq = sequence_of(p, b);
        attn_result one;
        attn_status status =
            forward_sequence(workers, &seq, want, &one, reference, shared);
        if (status != ATTN_OK) {
            attn_result_free(out);
            out->nonfinite_stage = one.nonfinite_stage;
            return status;
        }
        for (int s = 0; s < ATTN_STAGE_COUNT; s++)
            if (stages & ATTN_WANT(s)) {
                size_t bytes = stage_elements(&seq, (attn_stage)s) * elem;
                memcpy((char *)out->stage[s] + b * bytes, one.stage[s], bytes);
            }
        attn_result_free(&one);
    }
    return ATTN_OK;
}

attn_status attn_forward(pool *workers, const attn_problem *p, unsigned want,
                         attn_result *out)
{
    attn_shared shared = {0};
    memset(out, 0, sizeof *out);
    attn_status status = p->dtype == TENSOR_FLOAT32
                             ? pack_weights_f32(workers, p, &shared)
                             : pack_weights_f64(workers, p, &shared);
    if (status == ATTN_OK)
        status = p->batch
                     ? forward_batch(workers, p, want, out, false, &shared)
                     : forward_sequence(workers, p, want, out, false, &shared);
    shared_free(&shared);
    return status;
}

attn_status attn_forward_reference(const attn_problem *p, unsigned want,
                                   attn_result *out)
{
    attn_shared unused = {0};
    if (p->batch)
        return forward_batch(NULL, p, want, out, true, &unused);
    return forward_sequence(NULL, p, want, out, true, &unused);
}
