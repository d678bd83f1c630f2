/*
 * test_problem.c - the table of error codes and the error replies built from
 * it: a code names its one status, title and Retry-After, in either error
 * shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/error_codes.h"
#include "server/base/problem.h"
#include "server/base/reply.h"

#include <stdbool.h>
#include <string.h>

/* block_alloc() wrapped (tests/unit/suite.mk): while `starved`, a buffer
 * gets no memory, as when the process has run out. */
void *__real_block_alloc(size_t size);
static bool starved;

void *__wrap_block_alloc(size_t size)
{
    return starved ? NULL : __real_block_alloc(size);
}

static void every_code_has_a_name_a_status_and_a_title(void **state)
{
    (void)state;
    for (int c = ERR_NONE + 1; c < ERR_CODE_COUNT; c++) {
        const error_code_row *row = error_code_info((error_code)c);
        assert_non_null(row->name);
        assert_non_null(row->title);
        assert_true(row->status >= 400 && row->status <= 599);
        /* a retry cures only the 503s: the server was busy or leaving */
        assert_int_equal(row->retry_after != 0, row->status == 503);
        for (int other = ERR_NONE + 1; other < c; other++)
            assert_string_not_equal(row->name, error_codes[other].name);
    }
}

static void a_reply_takes_status_and_title_from_the_table(void **state)
{
    (void)state;
    reply r = {0};
    problem_reply(&r, ERR_SHAPE_MISMATCH, "/x/1", "%d rows", 3);
    static const char want[] =
        "{\"type\":\"urn:attention:problem:shape_mismatch\",\"title\":\"Bad "
        "Request\",\"status\":400,\"code\":\"shape_mismatch\",\"detail\":\"3 "
        "rows\",\"pointer\":\"/x/1\"}\n";
    assert_int_equal(r.status, 400);
    assert_string_equal(r.content_type, "application/problem+json");
    assert_int_equal(r.body_len, sizeof want - 1);
    assert_memory_equal(r.body, want, sizeof want - 1);
    assert_int_equal(r.retry_after, 0);
    reply_clear(&r);
}

static void a_503_code_is_sent_with_retry_after(void **state)
{
    (void)state;
    reply r = {0};
    problem_reply(&r, ERR_OVERLOADED, NULL, "busy");
    static const char want[] =
        "{\"type\":\"urn:attention:problem:overloaded\",\"title\":\"Service "
        "Unavailable\",\"status\":503,\"code\":\"overloaded\",\"detail\":"
        "\"busy\"}\n";
    assert_int_equal(r.status, 503);
    assert_int_equal(r.retry_after, ERROR_RETRY_AFTER_SECONDS);
    assert_int_equal(r.body_len, sizeof want - 1);
    assert_memory_equal(r.body, want, sizeof want - 1);
    reply_clear(&r);
}

static void the_oip_shape_carries_the_same_code_and_status(void **state)
{
    (void)state;
    reply r = {.error_shape = REPLY_ERRORS_OIP};
    problem_reply(&r, ERR_LIMIT_EXCEEDED, "/inputs/0", "too big");
    static const char want[] =
        "{\"error\":\"too big\",\"code\":"
        "\"limit_exceeded\",\"pointer\":\"/inputs/0\"}\n";
    assert_int_equal(r.status, 413);
    assert_string_equal(r.content_type, "application/json");
    assert_int_equal(r.body_len, sizeof want - 1);
    assert_memory_equal(r.body, want, sizeof want - 1);
    reply_clear(&r);
}

/* Without memory for the error body, the reply is out_of_memory as the
 * table gives it: the same body problem_reply() writes for that code. */
static void without_memory_the_reply_is_the_tables_out_of_memory(void **state)
{
    (void)state;
    static const char detail[] =
        "the server ran out of memory building this reply";
    for (int oip = 0; oip < 2; oip++) {
        reply_error_shape shape = oip ? REPLY_ERRORS_OIP : REPLY_ERRORS_PROBLEM;
        reply want = {.error_shape = shape}, got = {.error_shape = shape};
        problem_reply(&want, ERR_OUT_OF_MEMORY, NULL, "%s", detail);
        starved = true;
        problem_reply(&got, ERR_SHAPE_MISMATCH, "/x", "3 rows");
        starved = false;
        const error_code_row *row = error_code_info(ERR_OUT_OF_MEMORY);
        assert_int_equal(got.status, row->status);
        assert_int_equal(got.retry_after, row->retry_after);
        assert_string_equal(got.content_type, want.content_type);
        assert_int_equal(got.body_len, want.body_len);
        assert_memory_equal(got.body, want.body, want.body_len);
        reply_clear(&want);
        reply_clear(&got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_code_has_a_name_a_status_and_a_title),
        cmocka_unit_test(a_reply_takes_status_and_title_from_the_table),
        cmocka_unit_test(a_503_code_is_sent_with_retry_after),
        cmocka_unit_test(the_oip_shape_carries_the_same_code_and_status),
        cmocka_unit_test(without_memory_the_reply_is_the_tables_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
