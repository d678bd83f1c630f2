/*
 * test_attention_groups.c - the fused pass's tasks take each key block for
 * several row blocks in turn (attn_set_fused_group): every group size gives
 * the reference's output, whatever the masks, positions and heads, at every
 * SIMD level, with the row blocks, key blocks and groups ending anywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/arch.h"
#include "core/pool.h"
#include "tests/unit/attention_problems.h"

/* What a problem of this file switches on. */
typedef struct {
    const char *name;
    size_t n, m_new, past; /* m = past + m_new; cross-attention if m_new != n */
    size_t heads, kv_heads;
    bool causal, alibi, rope, padding;
    size_t window;
} group_case;

static const group_case cases[] = {
    /* 6 row blocks of 120 (the last of 100) and the keys in blocks of 512
     * and 188 */
    {"plain", 700, 700, 0, 2, 0, false, false, false, false, 0},
    /* the key block boundary at 512 falls inside row block 4's diagonal */
    {"causal", 700, 700, 0, 2, 0, true, false, false, false, 0},
    /* 11 row blocks of 64 under a window; keys trimmed at both ends */
    {"window", 700, 700, 0, 2, 0, false, false, false, false, 100},
    {"causal window", 700, 700, 0, 2, 0, true, false, false, false, 300},
    {"alibi", 700, 700, 0, 3, 0, false, true, false, false, 0},
    {"rope causal", 700, 700, 0, 2, 0, true, false, true, false, 0},
    /* grouped-query heads: 2 and 1 key/value heads (own values layout) */
    {"grouped heads", 700, 700, 0, 4, 2, false, false, false, false, 0},
    {"one key head", 700, 700, 0, 4, 1, true, false, false, false, 0},
    {"padding", 700, 700, 0, 2, 0, false, false, false, true, 0},
    /* a KV cache: its values copied before the new ones */
    {"cache", 500, 500, 90, 2, 2, true, false, false, false, 0},
    /* one key just past the first key block */
    {"cross 513", 361, 513, 0, 2, 0, false, false, false, false, 0},
};

/* Under an emulator (tests/arch/suite.mk runs the arm64 unit tests under
 * qemu with ATTN_TEST_EMULATED=1) the cases that end blocks where the other
 * architecture could go wrong: the key block boundary on the diagonal, shared
 * key heads, a cache and the one key past a block.  Each case's masks and
 * positions are the same C on every CPU; the whole list runs on this one. */
static const char *const emulated_cases[] = {"causal", "grouped heads", "cache",
                                             "cross 513"};

static bool case_runs(const group_case *c)
{
    if (!getenv("ATTN_TEST_EMULATED"))
        return true;
    for (size_t k = 0; k < sizeof emulated_cases / sizeof *emulated_cases; k++)
        if (strcmp(c->name, emulated_cases[k]) == 0)
            return true;
    return false;
}

/* The problem of case c: random tensors, d_k = d_v = 8 (whole vectors for
 * the product kernel in both types). */
static void make_group_problem(random_problem *rp, const group_case *c,
                               tensor_dtype dtype)
{
    memset(rp, 0, sizeof *rp);
    attn_problem *p = &rp->p;
    p->dtype = dtype;
    p->n = c->n, p->past = c->past, p->m = c->past + c->m_new;
    p->d = 12, p->d_c = c->m_new == c->n ? 12 : 10;
    p->heads = c->heads, p->kv_heads = c->kv_heads;
    p->d_k = p->d_v = 8;
    size_t h_kv = attn_kv_heads(p);
    p->x = rp->buffers[0] = random_tensor(dtype, p->n * p->d);
    if (c->m_new != c->n)
        p->context = rp->buffers[1] = random_tensor(dtype, c->m_new * p->d_c);
    p->w_q = rp->buffers[2] = random_tensor(dtype, p->d * p->heads * 8);
    p->w_k = rp->buffers[3] = random_tensor(dtype, p->d_c * h_kv * 8);
    p->w_v = rp->buffers[4] = random_tensor(dtype, p->d_c * h_kv * 8);
    if (c->past) {
        p->past_k = rp->buffers[16] = random_tensor(dtype, h_kv * c->past * 8);
        p->past_v = rp->buffers[17] = random_tensor(dtype, h_kv * c->past * 8);
    }
    p->causal = c->causal;
    p->window = c->window;
    if (c->rope) {
        p->rope_dims = 8;
        p->rope_base = 10000;
    }
    if (c->alibi) {
        double *slopes = malloc(p->heads * sizeof *slopes);
        for (size_t hd = 0; hd < p->heads; hd++)
            slopes[hd] = 1.0 / (double)(2u << hd);
        p->alibi_slopes = rp->buffers[15] = slopes;
    }
    if (c->padding) {
        uint8_t *pad = malloc(p->m);
        for (size_t j = 0; j < p->m; j++)
            pad[j] = j % 7 == 3 || (j >= 500 && j < 530);
        p->key_padding = rp->buffers[8] = pad;
    }
}

/* Case c's output from groups of 1, 3 and 8 row blocks (3 also over a
 * pool) within rounding of the reference's ref. */
static void groups_match(const random_problem *rp, const group_case *c,
                         const attn_result *ref, pool *workers)
{
    static const size_t groups[] = {1, 3, 8};
    double tolerance = rp->p.dtype == TENSOR_FLOAT32 ? 2e-5 : 1e-12;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        for (int pooled = 0; pooled < 1 + (groups[g] == 3); pooled++) {
            attn_set_fused_group(groups[g]);
            attn_result fast;
            assert_int_equal(attn_forward(pooled ? workers : NULL, &rp->p,
                                          ATTN_WANT(ATTN_OUTPUT), &fast),
                             ATTN_OK);
            double err =
                relative_error(&rp->p, ATTN_OUTPUT, fast.stage[ATTN_OUTPUT],
                               ref->stage[ATTN_OUTPUT]);
            if (!(err <= tolerance))
                fail_msg("%s, %s, level %s, group %zu%s: relative error %g",
                         c->name,
                         rp->p.dtype == TENSOR_FLOAT32 ? "float32" : "float64",
                         arch_simd_name(arch_simd_level()), groups[g],
                         pooled ? ", pool" : "", err);
            attn_result_free(&fast);
        }
    attn_set_fused_group(0);
}

/* Every case, both types, at every SIMD level from the CPU's best down
 * (the kernels' first use must be at the best): the output within rounding
 * of the reference's. */
static void every_group_size_gives_the_reference_output(void **state)
{
    (void)state;
    pool *workers = pool_create(1, 4);
    rng_state = 0x5eed;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int type = 0; type < 2 && case_runs(&cases[c]); type++) {
            random_problem rp;
            make_group_problem(&rp, &cases[c],
                               type ? TENSOR_FLOAT32 : TENSOR_FLOAT64);
            attn_result ref;
            assert_int_equal(
                attn_forward_reference(&rp.p, ATTN_WANT(ATTN_OUTPUT), &ref),
                ATTN_OK);
            for (int level = (int)arch_simd_cpu(); level >= 0; level--) {
                arch_simd_limit((arch_simd)level);
                attn_use_own_kernels(level >= ARCH_SIMD_AVX2);
                groups_match(&rp, &cases[c], &ref, workers);
            }
            arch_simd_limit(arch_simd_cpu());
            attn_use_own_kernels(true);
            attn_result_free(&ref);
            free_random_problem(&rp);
        }
    pool_destroy(workers);
}

/* A group of row blocks is the same arithmetic as its row blocks one by
 * one, in the same order: the outputs are the same bits. */
static void a_group_gives_the_same_bits_as_its_row_blocks_alone(void **state)
{
    (void)state;
    rng_state = 0x9209;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        if (!case_runs(&cases[c]))
            continue;
        random_problem rp;
        make_group_problem(&rp, &cases[c], TENSOR_FLOAT32);
        unsigned out = ATTN_WANT(ATTN_OUTPUT);
        attn_result one, three;
        attn_set_fused_group(1);
        assert_int_equal(attn_forward(NULL, &rp.p, out, &one), ATTN_OK);
        attn_set_fused_group(3);
        assert_int_equal(attn_forward(NULL, &rp.p, out, &three), ATTN_OK);
        attn_set_fused_group(0);
        size_t count = stage_count(&rp.p, ATTN_OUTPUT);
        if (memcmp(one.stage[ATTN_OUTPUT], three.stage[ATTN_OUTPUT],
                   count * sizeof(float)) != 0)
            fail_msg("%s: a group of 3 differs from its row blocks alone",
                     cases[c].name);
        attn_result_free(&one);
        attn_result_free(&three);
        free_random_problem(&rp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_group_size_gives_the_reference_output),
        cmocka_unit_test(a_group_gives_the_same_bits_as_its_row_blocks_alone),
    };
    return cmocka_run_group_tests_name("attention row groups", tests, NULL,
                                       NULL);
}
