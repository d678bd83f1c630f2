/*
 * filter.c - linked into every unit test program: CMOCKA_TEST_FILTER, a
 * cmocka pattern ('*' and '?' as in a shell), runs only the tests whose names
 * match it.  Newer cmocka reads that variable itself; Debian 12's 1.1.5 only
 * has cmocka_set_test_filter(), so it is called here, before main() runs its
 * group, and no test program's main() needs to know.
 *   CMOCKA_TEST_FILTER='*softmax*' make test-unit
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

__attribute__((constructor)) static void apply_test_filter(void)
{
    const char *pattern = getenv("CMOCKA_TEST_FILTER");
    if (pattern && *pattern)
        cmocka_set_test_filter(pattern);
}
