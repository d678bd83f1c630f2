/*
 * test_base64.c - server/json/base64: every length round-trips, and what
 * is not RFC 4648's standard alphabet with its padding is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/json/base64.h"

#include <string.h>

static void base64_round_trips_every_length_and_refuses_the_rest(void **state)
{
    (void)state;
    unsigned char bytes[300], back[300];
    char text[400];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 151 + 7); /* every byte value */
    for (size_t len = 0; len <= sizeof bytes; len++) {
        base64_encode(bytes, len, text);
        size_t got = 0;
        assert_true(base64_decode(text, base64_encoded_size(len), back, &got));
        assert_int_equal(got, len);
        assert_memory_equal(back, bytes, len);
    }
    size_t got;
    assert_true(base64_decode("QUJD", 4, back, &got) && got == 3 &&
                memcmp(back, "ABC", 3) == 0);
    assert_true(base64_decode("QUI=", 4, back, &got) && got == 2);
    assert_true(base64_decode("QQ==", 4, back, &got) && got == 1);
    const char *refused[] = {
        "QUJ",         /* not a multiple of 4 */
        "QQ==QUJD",    /* padding before the end */
        "Q===",        /* three padding characters */
        "QU=D",        /* padding, then a character */
        "QUJD QUJD",   /* a space */
        "QUJD-_JD",    /* the URL alphabet */
        "QUJD\x80UJD", /* a byte beyond ASCII */
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        assert_false(base64_decode(refused[i], strlen(refused[i]), back, &got));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(base64_round_trips_every_length_and_refuses_the_rest),
    };
    return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
