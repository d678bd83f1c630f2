/*
 * test_numfmt.c - server/json/numfmt: a number prints as its shortest
 * decimal that reads back to the same double or float.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/json/numfmt.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void short_decimals_print_as_written(void **state)
{
    (void)state;
    char out[NUMFMT_MAX];
    numfmt_double(0.1, out);
    assert_string_equal(out, "0.1");
    numfmt_double(1.0, out);
    assert_string_equal(out, "1");
    numfmt_double(-2.5e-300, out);
    assert_string_equal(out, "-2.5e-300");
    numfmt_float(0.1f, out);
    assert_string_equal(out, "0.1");
    numfmt_double(0.1 + 0.2, out);
    assert_string_equal(out, "0.30000000000000004");
    /* whole numbers past 2^53 (float: 2^24) never look like big integers */
    numfmt_double(123445678901234567890.0, out);
    assert_string_equal(out, "1.2344567890123457e+20");
    numfmt_double(9007199254740991.0, out);
    assert_string_equal(out, "9007199254740991");
    numfmt_float(3e10f, out);
    assert_string_equal(out, "3e+10");
    numfmt_float(16777215.0f, out);
    assert_string_equal(out, "16777215");
}

static void every_double_and_float_round_trips_exactly(void **state)
{
    (void)state;
    uint64_t s = 88172645463325252u;
    char out[NUMFMT_MAX];
    for (int i = 0; i < 200000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double d;
        memcpy(&d, &s, sizeof d);
        if (!isfinite(d))
            continue;
        numfmt_double(d, out);
        assert_true(strtod(out, NULL) == d);
        float f;
        uint32_t bits = (uint32_t)s;
        memcpy(&f, &bits, sizeof f);
        if (!isfinite(f))
            continue;
        numfmt_float(f, out);
        assert_true(strtof(out, NULL) == f);
        assert_true(strlen(out) <= 15);
    }
    numfmt_double(DBL_MAX, out);
    assert_true(strtod(out, NULL) == DBL_MAX);
    numfmt_double(4.9e-324, out);
    assert_true(strtod(out, NULL) == 4.9e-324);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_decimals_print_as_written),
        cmocka_unit_test(every_double_and_float_round_trips_exactly),
    };
    return cmocka_run_group_tests_name("numfmt", tests, NULL, NULL);
}
