/*
 * attention.h - scaled dot-product multi-head attention on plain arrays.
 *
 * Letters used in every shape comment of the core:
 *   n      query tokens (rows of x)
 *   m      key/value tokens (rows of context; n without one)
 *   d      width of x
 *   d_c    width of context (d without one)
 *   h      heads
 *   d_k    query/key width of one head
 *   d_v    value width of one head
 *   d_out  width of the output projection (h·d_v without W_o)
 *   m₀     keys and values of a KV cache (past_k, past_v), 0 without one
 *   m_new  keys and values computed by this request: m − m₀
 *
 * Conventions are the lessons': row vectors, projections x @ W, and a d×(h·d_k)
 * projection is split into heads by columns (head i owns columns i·d_k ..
 * (i+1)·d_k − 1).  Per-head weight stacks h×d×d_k are the same numbers and are
 * turned into that wide layout before they reach the core.
 *
 * The core knows nothing of HTTP or JSON.  Every array is row-major and of the
 * problem's dtype (double or float), except the boolean masks (uint8_t).
 */
#ifndef CORE_ATTENTION_H
#define CORE_ATTENTION_H

#include "core/pool.h"
#include "core/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The stages of the forward pass, in order.  Each can be returned. */
typedef enum {
    ATTN_X_PE,          /* (n, d)       x + sinusoidal encoding   */
    ATTN_Q,             /* (h, n, d_k)  x @ W_q, per head        */
    ATTN_K,             /* (h_kv, m_new, d_k) context @ W_k       */
    ATTN_V,             /* (h_kv, m_new, d_v) context @ W_v       */
    ATTN_Q_ROPE,        /* (h, n, d_k)  q rotated (RoPE)          */
    ATTN_K_ROPE,        /* (h_kv, m_new, d_k) k rotated (RoPE)    */
    ATTN_K_CACHE,       /* (h_kv, m, d_k) past keys, then the new */
    ATTN_V_CACHE,       /* (h_kv, m, d_v) past values, then new   */
    ATTN_SCORES,        /* (h, n, m)    Q Kᵀ (of the rotated q, k) */
    ATTN_SCALED_SCORES, /* (h, n, m)    scale · Q Kᵀ              */
    ATTN_MASKED_SCORES, /* (h, n, m)    scaled + bias, −∞ where masked */
    ATTN_WEIGHTS,       /* (h, n, m)    softmax over keys         */
    ATTN_HEAD_OUTPUTS,  /* (h, n, d_v)  weights @ V               */
    ATTN_CONCAT,        /* (n, h·d_v)   heads side by side        */
    ATTN_OUTPUT,        /* (n, d_out)   concat @ W_o, or concat   */
    ATTN_STAGE_COUNT
} attn_stage;

#define ATTN_WANT(stage) (1u << (stage))

/* The most dimensions a stage has: (B, h, n, m) in a batch. */
#define ATTN_MAX_RANK 4

/* One sequence, or a batch of B sequences that share the weights: then x,
 * context, key_padding (and allow/bias when mask_per_sequence) hold B of
 * what the comments below say, stacked on a leading axis, and every stage
 * gains that axis: (B, h, n, m), (B, n, d_out), ... */
/* A job's stop flag and deadline (core/attn_stop.h); opaque here, so that
 * the C++ parsers that include this header need no C atomics. */
typedef struct attn_stop attn_stop;

typedef struct {
    tensor_dtype dtype;
    size_t batch; /* B ≥ 1, or 0: one sequence, no batch axis */
    size_t n, m, d, d_c, heads, d_k, d_v, d_out;
    /* h_kv key/value heads (grouped-query attention; 1: multi-query), or 0:
     * as many as query heads.  Query head i reads key/value head
     * ⌊i · h_kv / h⌋; K, V, W_k, W_v, b_k, b_v have h_kv heads. */
    size_t kv_heads;
    const void *x;       /* (n, d)                                   */
    const void *context; /* (m_new, d_c), or NULL: self-attention (x) */
    const void *w_q;     /* (d, h·d_k)                               */
    const void *w_k;     /* (d_c, h·d_k)                             */
    const void *w_v;     /* (d_c, h·d_v)                             */
    const void *w_o;     /* (h·d_v, d_out), or NULL: output = concat */
    const void *b_q;     /* (h·d_k) added to x @ W_q, or NULL        */
    const void *b_k;     /* (h·d_k) added to context @ W_k, or NULL  */
    const void *b_v;     /* (h·d_v) added to context @ W_v, or NULL  */
    const void *b_o;     /* (d_out) added to concat @ W_o, or NULL   */
    /* Q, K and V given directly (as scaled_dot_product_attention takes
     * them) instead of projected: then x, context and W_q, W_k, W_v, W_o
     * and the biases are NULL, d and d_c are 0. */
    const void *q;        /* (h, n, d_k), or NULL */
    const void *k;        /* (h_kv, m_new, d_k)   */
    const void *v;        /* (h_kv, m_new, d_v)   */
    double scale;         /* multiplies Q Kᵀ; 0: divide by √d_k instead,
                             exactly as the lessons write it     */
    bool causal;          /* query i attends keys j ≤ i only          */
    const uint8_t *allow; /* (n, m) 1 = may attend, or NULL     */
    const void *bias;     /* (n, m) added to scaled scores, or NULL */
    /* allow and bias: (n, m) for every head, or (h, n, m) one each when
     * mask_per_head; with a leading B when mask_per_sequence */
    const uint8_t *key_padding; /* (m) 1 = padding (ignored), or NULL */
    bool mask_per_sequence;     /* allow/bias: (B, n, m), not one (n, m) */
    bool mask_per_head;         /* allow/bias: (h, n, m) for a sequence  */
    /* Positions of the queries (n) and of the new keys (m_new), or NULL:
     * queries at m₀, m₀ + 1, ...; new keys at the queries' positions in
     * self-attention (no context, m_new = n), else at m₀, m₀ + 1, ...; cached
     * keys are always at 0 .. m₀ − 1.  causal and window compare positions;
     * ALiBi's distance, RoPE's angle and the sinusoidal encoding use them. */
    const int64_t *positions;
    const int64_t *context_positions;
    /* Sliding window: key j is hidden from query i when |p_i − p_j| ≥ window
     * (with causal, p_i − window < p_j ≤ p_i); 0: no window.  At most
     * 2^62 (the passes compare it with differences of int64_t positions). */
    size_t window;
    /* ALiBi: −slope[h] · |p_i − p_j| added to head h's scaled scores, or
     * NULL (Press et al. 2022, "Train Short, Test Long"). */
    const double *alibi_slopes;
    /* RoPE (Su et al. 2021, "RoFormer"): the first rope_dims (even, ≤ d_k)
     * components of every q and k head vector are rotated in pairs by
     * position · θ_i, θ_i = rope_base^(−2i / rope_dims); pairs are
     * (i, i + rope_dims/2) (Llama's rotate_half) or, when rope_interleaved,
     * (2i, 2i + 1) (RoFormer, GPT-J).  0: no rotation. */
    size_t rope_dims;
    double rope_base;
    bool rope_interleaved;
    /* "Attention Is All You Need"'s sinusoidal encoding of each row's
     * position added to x (and to context) before the projections. */
    bool sinusoidal;
    /* A KV cache: m₀ keys (already rotated) and values computed before, at
     * positions 0 .. m₀ − 1, which come before this request's m_new = m − m₀
     * keys; queries then default to positions m₀ .. m₀ + n − 1.  context,
     * k and v hold only the m_new new rows; masks and key_padding all m. */
    size_t past;
    const void *past_k; /* (h_kv, m₀, d_k), or NULL when past is 0 */
    const void *past_v; /* (h_kv, m₀, d_v)                         */
    /* Read once per block of work: the pass returns ATTN_ERR_CANCELLED or
     * ATTN_ERR_DEADLINE when it fires.  NULL: runs to the end. */
    attn_stop *stop;
} attn_problem;

typedef enum {
    ATTN_OK = 0,
    ATTN_ERR_NOMEM,     /* an allocation failed; nothing is returned */
    ATTN_ERR_NONFINITE, /* a stage produced NaN or ±∞                */
    ATTN_ERR_CANCELLED, /* p->stop was cancelled; nothing is returned */
    ATTN_ERR_DEADLINE,  /* p->stop's deadline passed; nothing either  */
} attn_status;

typedef struct {
    /* stage[s] is NULL unless s was wanted; the caller frees with
     * attn_result_free().  ATTN_OUTPUT is always computed. */
    void *stage[ATTN_STAGE_COUNT];
    attn_stage nonfinite_stage; /* set with ATTN_ERR_NONFINITE */
} attn_result;

/* Key/value heads of p (h_kv, which is h unless grouped). */
static inline size_t attn_kv_heads(const attn_problem *p)
{
    return p->kv_heads ? p->kv_heads : p->heads;
}

/* The key/value head query head `head` reads. */
static inline size_t attn_kv_head_of(const attn_problem *p, size_t head)
{
    return head * attn_kv_heads(p) / p->heads;
}

/* Keys and values this request computes (m_new). */
static inline size_t attn_new_keys(const attn_problem *p)
{
    return p->m - p->past;
}

/* Whether problem p has stage s at all: x_pe only with the sinusoidal
 * encoding of an x, q_rope and k_rope only with RoPE. */
bool attn_stage_applies(const attn_problem *p, attn_stage s);

/* Shape of a stage: writes up to ATTN_MAX_RANK dims and returns how many
 * (also for a stage p does not have: the shape it would have). */
int attn_stage_shape(const attn_problem *p, attn_stage s,
                     size_t dims[ATTN_MAX_RANK]);

const char *attn_stage_name(attn_stage s);

/* Bytes attn_forward() allocates for problem p and the wanted stages when
 * `threads` threads work on it (pool_size(workers) + 1), or SIZE_MAX when
 * that size overflows.  Callers compare it with their budget before calling
 * attn_forward(). */
size_t attn_bytes_needed(const attn_problem *p, unsigned want, size_t threads);

/* Runs the forward pass, spreading heads and row blocks over `workers` (may be
 * NULL); a batch runs sequence after sequence, each spread the same way. `want`
 * is a set of ATTN_WANT() bits; stages p does not have stay NULL.  On ATTN_OK
 * the caller owns out->stage[] buffers; on error nothing is left allocated. */
attn_status attn_forward(pool *workers, const attn_problem *p, unsigned want,
                         attn_result *out);

void attn_result_free(attn_result *r);

/* With false, every product of attn_forward() goes through OpenBLAS, as on a
 * CPU without AVX2 (core/attend_kernels.h); true (the default) uses the
 * kernels wherever the CPU runs them.  For tests and benchmarks: set it
 * before forward passes start, not during one. */
void attn_use_own_kernels(bool on);

/* Row blocks one task of the fused pass takes each key block for: 0 (the
 * default) lets the core choose by the size of a head's K and V; 1 to 8
 * force it, so that tests reach the blocks' boundaries on small problems.
 * Set it before forward passes start, not during one. */
void attn_set_fused_group(size_t group);

/* Single-threaded textbook implementation (no BLAS) for tests: same inputs,
 * same outputs, written straight from the lessons. */
attn_status attn_forward_reference(const attn_problem *p, unsigned want,
                                   attn_result *out);

#endif
