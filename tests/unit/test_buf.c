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

/* An append that exactly fills the room stays in it; the next one moves
 * the bytes out of the caller's storage, every one of them kept. */
static void
appends_fill_the_room_exactly_then_grow_keeping_every_byte(void **state)
{
    (void)state;
    char room[8];
    buf b = {.data = room, .cap = sizeof room, .borrowed = true};
    buf_puts(&b, "abcdef");
    buf_append(&b, "gXYZ", 1); /* 7 bytes and the NUL: the room, exactly */
    assert_ptr_equal(b.data, room);
    assert_string_equal(room, "abcdefg");
    buf_puts(&b, "h");
    assert_ptr_not_equal(b.data, room);
    assert_false(b.borrowed);
    assert_false(buf_failed(&b));
    assert_int_equal(b.len, 8);
    assert_string_equal(b.data, "abcdefgh");
    assert_true(buf_reserve(&b, b.cap - b.len));
    assert_true(buf_reserve(&b, b.cap - b.len + 1));
    assert_true(b.cap - b.len >= 1);
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings_in_replies_are_always_valid_utf8),
        cmocka_unit_test(
            appends_fill_the_room_exactly_then_grow_keeping_every_byte),
    };
    return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
