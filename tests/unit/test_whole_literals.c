/*
 * test_whole_literals.c - the module that reads a JSON text's number
 * literals again (literal_walk.h, whole_literals.h): which literals are
 * whole as written, which a double rounds to a whole number although they
 * are not, the pointer of each literal, and the check that refuses such a
 * literal only where a whole number belongs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/json/literal_walk.h"
#include "server/json/whole_literals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_whole(const char *s)
{
    return whole_literal_is_whole(s, strlen(s));
}
static bool rounds(const char *s) { return whole_literal_rounds(s, strlen(s)); }

static void whole_as_written_is_read_from_the_digits(void **state)
{
    (void)state;
    const char *whole[] = {"0",
                           "-0",
                           "7",
                           "2.0",
                           "2.000",
                           "1e3",
                           "1E+3",
                           "12.5e1",
                           "0.0e0",
                           "0e-999",
                           "-3.0",
                           "1.5e1",
                           "9007199254740993",
                           "123456789012345678901234567890.0"};
    const char *not_whole[] = {"2.5",
                               "1e-1",
                               "12.5",
                               "0.1",
                               "-0.5",
                               "125e-2",
                               "1.00000000000000001",
                               "4503599627370496.5",
                               "1e-400"};
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
        if (!is_whole(whole[i]))
            fail_msg("%s should be whole as written", whole[i]);
    for (size_t i = 0; i < sizeof not_whole / sizeof *not_whole; i++)
        if (is_whole(not_whole[i]))
            fail_msg("%s should not be whole as written", not_whole[i]);
    assert_false(is_whole("true"));
    assert_false(is_whole("null"));
}

static void a_fraction_a_double_rounds_away_is_found(void **state)
{
    (void)state;
    /* not whole, but their doubles are */
    const char *rounded[] = {"1.00000000000000001",
                             "0.99999999999999999",
                             "4503599627370496.5",
                             "-2.00000000000000001",
                             "1e-400",
                             "100000000000000000.1",
                             "9007199254740991.5"};
    /* whole as written, or not whole as a double either */
    const char *kept[] = {"1",
                          "2.0",
                          "1e3",
                          "2.5",
                          "0.30000000000000004",
                          "2251799813685247.5",
                          "1.0000000000000002",
                          "1e-300",
                          "true"};
    for (size_t i = 0; i < sizeof rounded / sizeof *rounded; i++)
        if (!rounds(rounded[i]))
            fail_msg("%s is rounded to a whole number", rounded[i]);
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        if (rounds(kept[i]))
            fail_msg("%s is not rounded to a whole number", kept[i]);
    /* too long to convert again: taken as rounding when its fraction
     * begins near a whole number */
    char longer[200] = "0.";
    memset(longer + 2, '9', 150);
    assert_true(rounds(longer));
    memset(longer + 2, '5', 150);
    assert_false(rounds(longer));
}

/* The rule read from the digits agrees with converting every literal:
 * random literals of 1 to 17 integer digits and 1 to 20 fraction digits,
 * half of them with a fraction of 0s or 9s and one last digit. */
static void the_digit_rule_agrees_with_strtod(void **state)
{
    (void)state;
    unsigned seed = 12345;
    size_t rounded = 0;
    for (int trial = 0; trial < 200000; trial++) {
        char s[64];
        size_t n = 0;
        seed = seed * 1103515245u + 12345u;
        int integer = 1 + (int)(seed >> 16) % 17;
        int fraction = 1 + (int)(seed >> 8) % 20;
        bool near = seed & 1;
        char run = seed & 2 ? '9' : '0';
        if (seed & 4)
            s[n++] = '-';
        for (int i = 0; i < integer; i++) {
            seed = seed * 1103515245u + 12345u;
            s[n++] = (char)('0' + (i == 0 ? 1 + (seed >> 16) % 9
                                          : (seed >> 16) % 10));
        }
        s[n++] = '.';
        for (int i = 0; i < fraction; i++) {
            seed = seed * 1103515245u + 12345u;
            s[n++] = near && i < fraction - 1 ? run
                                              : (char)('0' + (seed >> 16) % 10);
        }
        s[n] = '\0';
        double value = strtod(s, NULL);
        bool expected = value == floor(value) && !is_whole(s);
        if (rounds(s) != expected)
            fail_msg("%s: the digits say %d, strtod %.17g", s, rounds(s),
                     value);
        rounded += expected;
    }
    assert_true(rounded > 1000); /* the rounding cases were met */
}

typedef struct {
    char pointers[8][CODEC_POINTER_MAX];
    char literals[8][32];
    size_t count;
} seen_literals;

static bool note_literal(void *ctx, const literal_path *path, const char *text,
                         size_t at, size_t n)
{
    seen_literals *seen = ctx;
    assert_true(seen->count < 8);
    literal_pointer(path, seen->pointers[seen->count]);
    snprintf(seen->literals[seen->count], 32, "%.*s", (int)n, text + at);
    seen->count++;
    return true;
}

static void each_literal_is_found_with_its_pointer(void **state)
{
    (void)state;
    const char *text = "{\"a\": [1, [2.5, true]], \"b\\\"c\": {\"d\": null},"
                       " \"e/f\": \"[3, 4]\", \"g\": -1e-5}";
    seen_literals seen = {0};
    literal_walk(text, strlen(text), note_literal, &seen);
    const char *pointers[] = {"/a/0", "/a/1/0", "/a/1/1", "/b\"c/d", "/g"};
    const char *literals[] = {"1", "2.5", "true", "null", "-1e-5"};
    assert_int_equal(seen.count, 5); /* "[3, 4]" is a string */
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(seen.pointers[i], pointers[i]);
        assert_string_equal(seen.literals[i], literals[i]);
    }
}

/* A protocol where only "/n" and the elements of "/p" must be whole. */
static error_code toy_slot(void *ctx, const char *pointer)
{
    (void)ctx;
    return strcmp(pointer, "/n") == 0 || strncmp(pointer, "/p/", 3) == 0
               ? ERR_INVALID_POSITIONS
               : ERR_NONE;
}

static void the_check_refuses_only_where_a_whole_number_belongs(void **state)
{
    (void)state;
    codec_error err = {0};
    const char *fine = "{\"x\": [0.99999999999999999, 1e-400], \"n\": 2.0,"
                       " \"p\": [0, 1e0, 20e-1]}";
    assert_true(whole_literals_check(fine, strlen(fine), toy_slot, NULL, &err));
    const char *bad = "{\"x\": [1], \"p\": [0, 1, 2.00000000000000001]}";
    assert_false(whole_literals_check(bad, strlen(bad), toy_slot, NULL, &err));
    assert_int_equal(err.code, ERR_INVALID_POSITIONS);
    assert_string_equal(err.pointer, "/p/2");
    assert_string_equal(err.detail,
                        "a whole number belongs here, and 2.00000000000000001 "
                        "is not one, though a double rounds it to 2");
    const char *tiny = "{\"n\": 1e-400}";
    assert_false(
        whole_literals_check(tiny, strlen(tiny), toy_slot, NULL, &err));
    assert_string_equal(err.pointer, "/n");
    assert_non_null(strstr(err.detail, "1e-400 is not one, though a double "
                                       "rounds it to 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_as_written_is_read_from_the_digits),
        cmocka_unit_test(a_fraction_a_double_rounds_away_is_found),
        cmocka_unit_test(the_digit_rule_agrees_with_strtod),
        cmocka_unit_test(each_literal_is_found_with_its_pointer),
        cmocka_unit_test(the_check_refuses_only_where_a_whole_number_belongs),
    };
    return cmocka_run_group_tests_name("whole_literals", tests, NULL, NULL);
}
