/*
 * test_attention_packing.c - at AVX2 the float32 projections read each W
 * from a copy packed into the product kernel's strips: made once per
 * request (every sequence of a batch reads the same copy), and only for a W
 * more than one row block of the request goes through; else W is read in
 * place.  Either way the outputs are the same bits.
 *
 * attend_pack_product_f32() and _f64() are wrapped at link time (-Wl,--wrap,
 * tests/unit/suite.mk): the wrappers count the copies a forward pass makes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/arch.h"
#include "core/pool.h"
#include "tests/unit/attention_problems.h"

void __real_attend_pack_product_f32(const float *b, size_t ldb, size_t inner,
                                    size_t cols, float *packed);
void __real_attend_pack_product_f64(const double *b, size_t ldb, size_t inner,
                                    size_t cols, double *packed);

/* W packed since the test last set it to 0 (pool workers pack too). */
static atomic_long packs;

void __wrap_attend_pack_product_f32(const float *b, size_t ldb, size_t inner,
                                    size_t cols, float *packed)
{
    atomic_fetch_add(&packs, 1);
    __real_attend_pack_product_f32(b, ldb, inner, cols, packed);
}

void __wrap_attend_pack_product_f64(const double *b, size_t ldb, size_t inner,
                                    size_t cols, double *packed)
{
    atomic_fetch_add(&packs, 1);
    __real_attend_pack_product_f64(b, ldb, inner, cols, packed);
}

/* Runs the tests at AVX2, as a CPU without AVX-512 would; a CPU without
 * AVX2 has no packed W to count. */
static int at_avx2(void **state)
{
    (void)state;
    if (arch_simd_cpu() < ARCH_SIMD_AVX2)
        return 0;
    arch_simd_limit(ARCH_SIMD_AVX2);
    attn_use_own_kernels(true);
    return 0;
}

static int at_best(void **state)
{
    (void)state;
    arch_simd_limit(arch_simd_cpu());
    return 0;
}

static void need_avx2(void)
{
    if (arch_simd_cpu() < ARCH_SIMD_AVX2)
        skip();
}

/* A float32 problem of `batch` sequences (0: one) of n queries over m_new
 * keys (a context when m_new != n), width d (8 or 16) and 2 heads of d / 2,
 * with W_o: at AVX2 each W is a whole number of vectors of 8 floats for
 * the product kernel. */
static void make_packing_problem(random_problem *rp, size_t batch, size_t n,
                                 size_t m_new, size_t d)
{
    memset(rp, 0, sizeof *rp);
    attn_problem *p = &rp->p;
    size_t sequences = batch ? batch : 1;
    p->dtype = TENSOR_FLOAT32;
    p->batch = batch;
    p->n = n, p->m = m_new;
    p->d = p->d_c = p->d_out = d;
    p->heads = 2, p->d_k = p->d_v = d / 2;
    p->x = rp->buffers[0] = random_tensor(p->dtype, sequences * n * d);
    if (m_new != n)
        p->context = rp->buffers[1] =
            random_tensor(p->dtype, sequences * m_new * d);
    p->w_q = rp->buffers[2] = random_tensor(p->dtype, d * d);
    p->w_k = rp->buffers[3] = random_tensor(p->dtype, d * d);
    p->w_v = rp->buffers[4] = random_tensor(p->dtype, d * d);
    p->w_o = rp->buffers[5] = random_tensor(p->dtype, d * d);
}

/* The copies of W one forward pass of p makes, over `workers`. */
static long packs_of(pool *workers, const attn_problem *p)
{
    attn_result r;
    atomic_store(&packs, 0);
    assert_int_equal(attn_forward(workers, p, ATTN_WANT(ATTN_OUTPUT), &r),
                     ATTN_OK);
    attn_result_free(&r);
    return atomic_load(&packs);
}

/* A lesson-sized request (5 tokens of width 8, 2 heads of 4): one row
 * block through every W, each read in place. */
static void a_lesson_sized_request_reads_w_in_place(void **state)
{
    (void)state;
    need_avx2();
    rng_state = 0x9a10;
    random_problem rp;
    make_packing_problem(&rp, 0, 5, 5, 8);
    assert_int_equal(packs_of(NULL, &rp.p), 0);
    free_random_problem(&rp);
}

/* ATTN_ROW_BLOCK (120) rows through each W: one block, read in place;
 * 121: two, each W packed once. */
static void a_w_is_packed_from_two_row_blocks_on(void **state)
{
    (void)state;
    need_avx2();
    rng_state = 0x9a11;
    random_problem one_block, two_blocks;
    make_packing_problem(&one_block, 0, 120, 120, 16);
    make_packing_problem(&two_blocks, 0, 121, 121, 16);
    assert_int_equal(packs_of(NULL, &one_block.p), 0);
    assert_int_equal(packs_of(NULL, &two_blocks.p), 4);
    free_random_problem(&one_block);
    free_random_problem(&two_blocks);
}

/* 10 queries over a context of 200 keys: W_k and W_v take two row blocks
 * and are packed, W_q and W_o take one and are read in place. */
static void each_w_is_judged_by_its_own_rows(void **state)
{
    (void)state;
    need_avx2();
    rng_state = 0x9a12;
    random_problem rp;
    make_packing_problem(&rp, 0, 10, 200, 16);
    assert_int_equal(packs_of(NULL, &rp.p), 2);
    free_random_problem(&rp);
}

/* 3 sequences of 50 rows: 150 rows of the request go through each W, which
 * is packed once for all three, alone and over a pool; one of the
 * sequences alone reads W in place. */
static void a_batch_packs_each_w_once(void **state)
{
    (void)state;
    need_avx2();
    rng_state = 0x9a13;
    pool *workers = pool_create(1, 4);
    random_problem rp;
    make_packing_problem(&rp, 3, 50, 50, 16);
    assert_int_equal(packs_of(NULL, &rp.p), 4);
    assert_int_equal(packs_of(workers, &rp.p), 4);
    attn_problem alone = rp.p;
    alone.batch = 0;
    assert_int_equal(packs_of(NULL, &alone), 0);
    free_random_problem(&rp);
    pool_destroy(workers);
}

/* The batch of 3 sequences of 50 rows (W packed) and each of its sequences
 * alone (W read in place): the same bits, stage by stage, by the fused
 * pass and by the one with whole rows of scores. */
static void packed_and_in_place_give_the_same_bits(void **state)
{
    (void)state;
    need_avx2();
    rng_state = 0x9a14;
    enum { B = 3, N = 50, M = 70 };
    random_problem rp;
    make_packing_problem(&rp, B, N, M, 16);
    unsigned wants[] = {ATTN_WANT(ATTN_Q) | ATTN_WANT(ATTN_K) |
                            ATTN_WANT(ATTN_V) | ATTN_WANT(ATTN_CONCAT),
                        want_all};
    for (size_t w = 0; w < 2; w++) {
        attn_result all;
        atomic_store(&packs, 0);
        assert_int_equal(attn_forward(NULL, &rp.p, wants[w], &all), ATTN_OK);
        assert_int_equal(atomic_load(&packs), 4);
        for (size_t b = 0; b < B; b++) {
            attn_problem one = rp.p;
            one.batch = 0;
            one.x = (const float *)rp.p.x + b * N * 16;
            one.context = (const float *)rp.p.context + b * M * 16;
            attn_result single;
            assert_int_equal(attn_forward(NULL, &one, wants[w], &single),
                             ATTN_OK);
            for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
                if (!single.stage[s])
                    continue;
                size_t bytes = stage_count(&one, s) * sizeof(float);
                if (memcmp((char *)all.stage[s] + b * bytes, single.stage[s],
                           bytes) != 0)
                    fail_msg("sequence %zu: %s differs", b, attn_stage_name(s));
            }
            attn_result_free(&single);
        }
        assert_int_equal(atomic_load(&packs), 4); /* none alone */
        attn_result_free(&all);
    }
    free_random_problem(&rp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_lesson_sized_request_reads_w_in_place),
        cmocka_unit_test(a_w_is_packed_from_two_row_blocks_on),
        cmocka_unit_test(each_w_is_judged_by_its_own_rows),
        cmocka_unit_test(a_batch_packs_each_w_once),
        cmocka_unit_test(packed_and_in_place_give_the_same_bits),
    };
    return cmocka_run_group_tests_name("W packed once per request", tests,
                                       at_avx2, at_best);
}
