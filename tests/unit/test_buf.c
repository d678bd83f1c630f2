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

/* Every byte a JSON string may not hold as it is gets its escape, wherever
 * it stands in a run of plain bytes: first, last, alone, doubled. */
static void strings_escape_quotes_backslashes_and_control_bytes(void **state)
{
    (void)state;
    buf b = {0};
    buf_json_string(&b, "\"a\\b\nc\td\re\x01"
                        "f\x1f\x7f~ \"\"");
    assert_string_equal(b.data, "\"\\\"a\\\\b\\nc\\td\\re\\u0001f\\u001f\x7f~ "
                                "\\\"\\\"\"");
    buf_free(&b);
    buf_json_string(&b, "");
    assert_string_equal(b.data, "\"\"");
    buf_free(&b);
}

/* A run of plain bytes longer than the caller's storage moves out of it
 * whole, in order, between two escapes. */
static void a_long_plain_run_outgrows_the_callers_storage_whole(void **state)
{
    (void)state;
    char text[1003];
    text[0] = '\t';
    for (int i = 1; i < 1001; i++)
        text[i] = (char)('a' + i % 26);
    text[1001] = '"';
    text[1002] = '\0';
    char room[16];
    buf b = {.data = room, .cap = sizeof room, .borrowed = true};
    buf_puts(&b, "x");
    buf_json_string(&b, text);
    assert_false(buf_failed(&b));
    assert_int_equal(b.len, 1 + 1 + 2 + 1000 + 2 + 1);
    assert_memory_equal(b.data, "x\"\\t", 4);
    assert_memory_equal(b.data + 4, text + 1, 1000);
    assert_string_equal(b.data + 1004, "\\\"\"");
    buf_free(&b);
}

/* Whole numbers in decimal, one digit or twenty, with no leading zero. */
static void whole_numbers_are_written_in_decimal(void **state)
{
    (void)state;
    static const struct {
        size_t value;
        const char *text;
    } cases[] = {{0, "0"},       {7, "7"},
                 {9, "9"},       {10, "10"},
                 {99, "99"},     {100, "100"},
                 {4096, "4096"}, {(size_t)-1, "18446744073709551615"}};
    buf b = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        b.len = 0;
        buf_uint(&b, cases[i].value);
        assert_false(buf_failed(&b));
        assert_string_equal(b.data, cases[i].text);
    }
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings_in_replies_are_always_valid_utf8),
        cmocka_unit_test(whole_numbers_are_written_in_decimal),
        cmocka_unit_test(strings_escape_quotes_backslashes_and_control_bytes),
        cmocka_unit_test(a_long_plain_run_outgrows_the_callers_storage_whole),
        cmocka_unit_test(
            appends_fill_the_room_exactly_then_grow_keeping_every_byte),
    };
    return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
