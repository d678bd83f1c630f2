/*
 * test_attend_kernels.c - the register-blocked kernels of core/attend_kernels.h
 * against plain dot products: every count of rows, keys and columns around
 * the kernels' panel and tile sizes, both element types, nothing written
 * outside the output; at every level that has kernels (AVX-512 and AVX2,
 * each the level in use in turn, as far as this CPU runs them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/test_random.h"

#include "core/arch.h"
#include "core/attend_kernels.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Fills what a kernel must not touch. */
#define CANARY 12345.0

#define REAL double
#define SFX(name) name##_f64
#define attend_key_tile_SFX attend_key_tile_f64
#define attend_keys_padded_SFX attend_keys_padded_f64
#define attend_pack_keys_SFX attend_pack_keys_f64
#define attend_scores_SFX attend_scores_f64
#define attend_product_SFX attend_product_f64
#define attend_product_fits_SFX attend_product_fits_f64
#define attend_product_strip_SFX attend_product_strip_f64
#define attend_pack_product_SFX attend_pack_product_f64
#define attend_product_packed_SFX attend_product_packed_f64
#define EPSILON DBL_EPSILON
#include "tests/unit/test_attend_kernels_impl.inc"
#undef REAL
#undef SFX
#undef attend_key_tile_SFX
#undef attend_keys_padded_SFX
#undef attend_pack_keys_SFX
#undef attend_scores_SFX
#undef attend_product_SFX
#undef attend_product_fits_SFX
#undef attend_product_strip_SFX
#undef attend_pack_product_SFX
#undef attend_product_packed_SFX
#undef EPSILON

#define REAL float
#define SFX(name) name##_f32
#define attend_key_tile_SFX attend_key_tile_f32
#define attend_keys_padded_SFX attend_keys_padded_f32
#define attend_pack_keys_SFX attend_pack_keys_f32
#define attend_scores_SFX attend_scores_f32
#define attend_product_SFX attend_product_f32
#define attend_product_fits_SFX attend_product_fits_f32
#define attend_product_strip_SFX attend_product_strip_f32
#define attend_pack_product_SFX attend_pack_product_f32
#define attend_product_packed_SFX attend_product_packed_f32
#define EPSILON FLT_EPSILON
#include "tests/unit/test_attend_kernels_impl.inc"

/* Runs check() at each level with kernels this CPU runs, from the best
 * down; false (and the test skips) when there is none. */
static bool at_each_kernel_level(void (*check)(void))
{
    bool any = false;
    for (int level = (int)arch_simd_cpu(); level >= ARCH_SIMD_AVX2; level--) {
        arch_simd_limit((arch_simd)level);
        if (!attend_kernels_usable())
            continue;
        print_message("   level %s\n", arch_simd_name((arch_simd)level));
        check();
        any = true;
    }
    arch_simd_limit(ARCH_SIMD_AVX512);
    return any;
}

static void packed_keys_hold_every_element_at_its_place(void **state)
{
    (void)state;
    /* packing works anywhere: at the level in use, and at each kernel level */
    packed_keys_hold_every_element_at_its_place_f64();
    packed_keys_hold_every_element_at_its_place_f32();
    at_each_kernel_level(packed_keys_hold_every_element_at_its_place_f64);
    at_each_kernel_level(packed_keys_hold_every_element_at_its_place_f32);
}

static void scores_match_dot_products_for_every_tail(void **state)
{
    (void)state;
    if (!at_each_kernel_level(scores_match_dot_products_for_every_tail_f64))
        skip(); /* no AVX2: the forward pass uses OpenBLAS */
    at_each_kernel_level(scores_match_dot_products_for_every_tail_f32);
}

static void scores_row_max_finds_the_largest_score_anywhere(void **state)
{
    (void)state;
    if (!at_each_kernel_level(
            scores_row_max_finds_the_largest_score_anywhere_f64))
        skip(); /* no AVX2: the forward pass uses OpenBLAS */
    at_each_kernel_level(scores_row_max_finds_the_largest_score_anywhere_f32);
}

static void product_matches_sums_for_every_width(void **state)
{
    (void)state;
    if (!at_each_kernel_level(product_matches_sums_for_every_width_f64))
        skip(); /* no AVX2: the forward pass uses OpenBLAS */
    at_each_kernel_level(product_matches_sums_for_every_width_f32);
}

static void packed_product_matches_the_product_in_place(void **state)
{
    (void)state;
    if (!at_each_kernel_level(packed_product_matches_the_product_in_place_f64))
        skip(); /* no AVX2: the forward pass uses OpenBLAS */
    at_each_kernel_level(packed_product_matches_the_product_in_place_f32);
}

static void product_fits_whole_vectors_only(void **state)
{
    (void)state;
    at_each_kernel_level(product_fits_whole_vectors_only_f64);
    at_each_kernel_level(product_fits_whole_vectors_only_f32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(packed_keys_hold_every_element_at_its_place),
        cmocka_unit_test(scores_match_dot_products_for_every_tail),
        cmocka_unit_test(scores_row_max_finds_the_largest_score_anywhere),
        cmocka_unit_test(product_matches_sums_for_every_width),
        cmocka_unit_test(packed_product_matches_the_product_in_place),
        cmocka_unit_test(product_fits_whole_vectors_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
