/*
 * test_buf_chain.c - server/base/buf_chain: adopted pieces stay parts of
 * their own, and a piece that failed fails the chain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/buf_chain.h"
#include "tests/unit/join_parts.h"

#include <stdlib.h>

static void a_chain_keeps_adopted_pieces_as_parts_of_their_own(void **state)
{
    (void)state;
    buf_chain chain = {0};
    buf_puts(buf_chain_tail(&chain), "{\"a\":");
    buf piece = {0};
    buf_puts(&piece, "[1,2,3]");
    char *piece_data = piece.data;
    buf_chain_adopt(&chain, &piece);
    assert_null(piece.data); /* taken, not copied */
    assert_ptr_equal(chain.parts[1].data, piece_data);
    buf_puts(buf_chain_tail(&chain), "}");
    assert_int_equal(chain.count, 3);
    assert_int_equal(buf_chain_len(&chain), 13);
    size_t len;
    char *all = buf_chain_join(&chain, &len);
    assert_string_equal(all, "{\"a\":[1,2,3]}");
    free(all);
    /* a piece that failed to grow fails the chain; writes then go nowhere */
    buf failed = {.failed = true};
    buf_chain_adopt(&chain, &failed);
    assert_true(buf_chain_failed(&chain));
    buf_puts(buf_chain_tail(&chain), "ignored");
    assert_null(buf_chain_join(&chain, &len));
    buf_chain_free(&chain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_chain_keeps_adopted_pieces_as_parts_of_their_own),
    };
    return cmocka_run_group_tests_name("buf_chain", tests, NULL, NULL);
}
