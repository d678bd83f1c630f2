/*
 * test_attend_kernels.c - the register-blocked kernels of core/attend_kernels.h
 * against plain dot products: every count of rows, keys and columns around
 * the kernels' panel and tile sizes, both element types, nothing written
 * outside the output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/test_random.h"

#include "core/attend_kernels.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

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
#undef EPSILON

#define REAL float
#define SFX(name) name##_f32
#define attend_key_tile_SFX attend_key_tile_f32
#define attend_keys_padded_SFX attend_keys_padded_f32
#define attend_pack_keys_SFX attend_pack_keys_f32
#define attend_scores_SFX attend_scores_f32
#define attend_product_SFX attend_product_f32
#define attend_product_fits_SFX attend_product_fits_f32
#define EPSILON FLT_EPSILON
#include "tests/unit/test_attend_kernels_impl.inc"

static void packed_keys_hold_every_element_at_its_place(void **state)
{
    (void)state;
    packed_keys_hold_every_element_at_its_place_f64();
    packed_keys_hold_every_element_at_its_place_f32();
}

static void scores_match_dot_products_for_every_tail(void **state)
{
    (void)state;
    if (!attend_kernels_usable())
        skip(); /* no AVX-512: the forward pass uses OpenBLAS */
    scores_match_dot_products_for_every_tail_f64();
    scores_match_dot_products_for_every_tail_f32();
}

static void scores_row_max_finds_the_largest_score_anywhere(void **state)
{
    (void)state;
    if (!attend_kernels_usable())
        skip(); /* no AVX-512: the forward pass uses OpenBLAS */
    scores_row_max_finds_the_largest_score_anywhere_f64();
    scores_row_max_finds_the_largest_score_anywhere_f32();
}

static void product_matches_sums_for_every_width(void **state)
{
    (void)state;
    if (!attend_kernels_usable())
        skip(); /* no AVX-512: the forward pass uses OpenBLAS */
    product_matches_sums_for_every_width_f64();
    product_matches_sums_for_every_width_f32();
}

static void product_fits_whole_vectors_only(void **state)
{
    (void)state;
    product_fits_whole_vectors_only_f64();
    product_fits_whole_vectors_only_f32();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(packed_keys_hold_every_element_at_its_place),
        cmocka_unit_test(scores_match_dot_products_for_every_tail),
        cmocka_unit_test(scores_row_max_finds_the_largest_score_anywhere),
        cmocka_unit_test(product_matches_sums_for_every_width),
        cmocka_unit_test(product_fits_whole_vectors_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
