/*
 * test_half.c - server/json/half: float16 and bfloat16 round to nearest
 * with ties to even from any double, over every one of their 65 536 bit
 * patterns: each value comes back to its own bits, each midpoint between
 * neighbours goes to the even one and a hair either side of it to the
 * nearer; subnormals, the largest finite value, infinities and NaN.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/json/half.h"

#include <float.h>
#include <math.h>

static const half_kind kinds[] = {HALF_FLOAT16, HALF_BFLOAT16};
/* the bits of +∞ of each kind */
static const uint16_t infinity_bits[] = {0x7c00, 0x7f80};

static void every_value_comes_back_to_its_bits(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++)
        for (uint32_t b = 0; b <= 0xffff; b++) {
            float v = half_value(kinds[k], (uint16_t)b);
            if (isnan(v)) {
                assert_true(isnan(
                    half_value(kinds[k], half_round(kinds[k], (double)v))));
                continue;
            }
            assert_int_equal(half_round(kinds[k], (double)v), b);
        }
}

/* Between each pair of neighbours of one sign, lo = bits p and hi = p + 1:
 * the midpoint rounds to the even one, a hair below it to lo, a hair above
 * to hi (for the largest finite value, hi is the infinity past it). */
static void midpoints_go_to_the_even_neighbour(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        half_kind kind = kinds[k];
        for (uint32_t p = 0; p < infinity_bits[k]; p++) {
            double lo = half_value(kind, (uint16_t)p);
            double hi = p + 1 < infinity_bits[k]
                            ? half_value(kind, (uint16_t)(p + 1))
                            : lo + (lo - half_value(kind, (uint16_t)(p - 1)));
            double mid = (lo + hi) / 2; /* exact: a few bits of a double */
            uint32_t even = p % 2 ? p + 1 : p;
            assert_int_equal(half_round(kind, mid), even);
            assert_int_equal(half_round(kind, nextafter(mid, 0)), p);
            assert_int_equal(half_round(kind, nextafter(mid, INFINITY)), p + 1);
            assert_int_equal(half_round(kind, -mid), even | 0x8000);
        }
    }
}

static void known_values(void **state)
{
    (void)state;
    assert_int_equal(half_round(HALF_FLOAT16, 1.0), 0x3c00);
    assert_int_equal(half_round(HALF_FLOAT16, -2.0), 0xc000);
    assert_int_equal(half_round(HALF_FLOAT16, 65504.0), 0x7bff);
    assert_true(half_max(HALF_FLOAT16) == 65504.0);
    assert_int_equal(half_round(HALF_FLOAT16, 65519.99), 0x7bff);
    assert_int_equal(half_round(HALF_FLOAT16, 65520.0), 0x7c00);
    assert_int_equal(half_round(HALF_FLOAT16, 1e300), 0x7c00);
    assert_int_equal(half_round(HALF_FLOAT16, ldexp(1, -24)), 0x0001);
    assert_int_equal(half_round(HALF_FLOAT16, ldexp(1, -25)), 0x0000);
    assert_int_equal(half_round(HALF_FLOAT16, ldexp(3, -26)), 0x0001);
    assert_int_equal(half_round(HALF_FLOAT16, ldexp(1, -14)), 0x0400);
    assert_int_equal(half_round(HALF_FLOAT16, 1e-300), 0x0000);
    assert_int_equal(half_round(HALF_FLOAT16, -0.0), 0x8000);
    assert_int_equal(half_round(HALF_FLOAT16, -INFINITY), 0xfc00);
    assert_true(isnan(half_value(HALF_FLOAT16, half_round(HALF_FLOAT16, NAN))));
    assert_int_equal(half_round(HALF_BFLOAT16, 1.0), 0x3f80);
    assert_int_equal(half_round(HALF_BFLOAT16, 1 + ldexp(1, -8)), 0x3f80);
    assert_int_equal(half_round(HALF_BFLOAT16, 1 + ldexp(3, -8)), 0x3f82);
    assert_int_equal(half_round(HALF_BFLOAT16, (double)FLT_MAX), 0x7f80);
    assert_int_equal(half_round(HALF_BFLOAT16, ldexp(1, -133)), 0x0001);
    assert_true(half_max(HALF_BFLOAT16) == ldexp(255, 120));
    /* a double just past a tie of float16 that float32 would make the tie
     * itself: rounded once, it goes up */
    double v = 1 + ldexp(1, -11) + ldexp(1, -40);
    assert_int_equal(half_round(HALF_FLOAT16, v), 0x3c01);
    assert_int_equal(half_round(HALF_FLOAT16, (double)(float)v), 0x3c00);
}

static void arrays_are_little_endian_at_any_alignment(void **state)
{
    (void)state;
    unsigned char bytes[1 + 3 * HALF_SIZE] = {0,    0x00, 0x3c, 0x00,
                                              0xc0, 0x01, 0x00};
    float got[3];
    half_to_floats(HALF_FLOAT16, bytes + 1, 3, got);
    assert_true(got[0] == 1.0f && got[1] == -2.0f && got[2] == ldexpf(1, -24));
    unsigned char back[1 + 3 * HALF_SIZE] = {0};
    half_from_floats(HALF_FLOAT16, got, 3, back + 1);
    assert_memory_equal(back + 1, bytes + 1, 3 * HALF_SIZE);
    const float wide[2] = {1.0f, -0.5f};
    half_from_floats(HALF_BFLOAT16, wide, 2, back + 1);
    const unsigned char want[] = {0x80, 0x3f, 0x00, 0xbf};
    assert_memory_equal(back + 1, want, sizeof want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_value_comes_back_to_its_bits),
        cmocka_unit_test(midpoints_go_to_the_even_neighbour),
        cmocka_unit_test(known_values),
        cmocka_unit_test(arrays_are_little_endian_at_any_alignment),
    };
    return cmocka_run_group_tests_name("half", tests, NULL, NULL);
}
