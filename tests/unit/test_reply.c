/*
 * test_reply.c - server/base/reply: a reply in parts joins into one body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/reply.h"
#include "tests/unit/join_parts.h"

#include <stdlib.h>
#include <string.h>

static void a_reply_in_parts_joins_into_one_body(void **state)
{
    (void)state;
    reply r = {0};
    reply_part *parts = malloc(2 * sizeof *parts);
    parts[0] = (reply_part){strdup("{\"x\":"), 5};
    parts[1] = (reply_part){strdup("1}"), 2};
    reply_set_parts(&r, 200, "application/json", parts, 2);
    assert_int_equal(r.body_len, 7);
    assert_true(reply_join(&r));
    assert_null(r.parts);
    assert_string_equal(r.body, "{\"x\":1}");
    reply_clear(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_reply_in_parts_joins_into_one_body),
    };
    return cmocka_run_group_tests_name("reply", tests, NULL, NULL);
}
