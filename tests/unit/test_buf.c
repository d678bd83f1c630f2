/*
 * test_buf.c - server/base/buf: a string written into a reply is valid
 * JSON and valid UTF-8, whatever bytes it came from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/buf.h"

static void strings_in_replies_are_always_valid_utf8(void **state)
{
    (void)state;
    buf b = {0};
    /* a cut sequence (what jansson quotes from a bad escape), a stray
     * continuation byte, an overlong slash, a surrogate; then good text */
    buf_json_string(&b, "near '\\u00e\xc7' \x8b \xc0\xaf \xed\xa0\x80 "
                        "caf\xc3\xa9 \xf0\x9f\x98\x80");
    assert_string_equal(b.data,
                        "\"near '\\\\u00e\\ufffd' \\ufffd \\ufffd\\ufffd "
                        "\\ufffd\\ufffd\\ufffd caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings_in_replies_are_always_valid_utf8),
    };
    return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
