/*
 * test_parse_rows.cpp - the row splitter (server/json/parse_rows.cpp) on its
 * own: which tensors it takes, the envelope it leaves, the numbers it reads.
 * (Whether a split body decodes exactly as jansson decodes it is checked in
 * test_parse_fast.c and by the fuzzer.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { /* cmocka.h declares its functions without C linkage */
#include <cmocka.h>
}

#include "server/json/parse_rows.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

/* Bytes simdjson wants after the envelope (any value works for the test). */
constexpr size_t PADDING = 4;

static bool split(const std::string &body, size_t min_bytes, pool *workers,
                  size_t *budget, raw_request *raw, std::string *envelope)
{
    std::memset(raw, 0, sizeof *raw);
    return parse_rows_split(body.data(), body.size(), min_bytes, workers,
                            budget, raw, envelope, PADDING);
}

static void number_tensors_leave_a_zero_in_the_envelope(void **state)
{
    (void)state;
    std::string body = "{\"x\": [[1, -2.5], [3e2,0]] ,\"num_heads\":2,"
                       "\"w_q\":[[[1],[2]],[[3],[4]]],\"mask\":[[true]]}";
    raw_request raw;
    std::string envelope;
    size_t budget = 100;
    assert_true(split(body, 0, nullptr, &budget, &raw, &envelope));
    assert_string_equal(envelope.c_str(),
                        "{\"x\": 0 ,\"num_heads\":2,\"w_q\":0,"
                        "\"mask\":[[true]]}    ");
    assert_int_equal(budget, 100 - 4 - 4);
    const schema_tensor &x = raw.fields.tensor[API_X];
    assert_true(x.present && !x.is_bool && x.rank == 2);
    assert_int_equal(x.dims[0], 2);
    assert_int_equal(x.dims[1], 2);
    const double want_x[] = {1, -2.5, 300, 0};
    assert_memory_equal(x.data, want_x, sizeof want_x);
    const schema_tensor &w = raw.fields.tensor[API_W_Q];
    assert_true(w.present && w.rank == 3);
    assert_int_equal(w.dims[0], 2);
    assert_int_equal(w.dims[1], 2);
    assert_int_equal(w.dims[2], 1);
    assert_false(raw.fields.tensor[API_MASK].present); /* booleans: not split */
    raw_request_free(&raw);
}

static void only_tensors_of_min_bytes_are_split(void **state)
{
    (void)state;
    std::string body = "{\"x\":[[1,2]],\"w_k\":[[1,2,3,4,5,6,7,8,9,10]]}";
    raw_request raw;
    std::string envelope;
    size_t budget = 100;
    assert_true(split(body, 20, nullptr, &budget, &raw, &envelope));
    assert_false(raw.fields.tensor[API_X].present);
    assert_true(raw.fields.tensor[API_W_K].present);
    assert_string_equal(envelope.c_str(), "{\"x\":[[1,2]],\"w_k\":0}    ");
    raw_request_free(&raw);
    /* nothing that large: nothing to do, the caller parses the body */
    budget = 100;
    assert_false(split(body, 1000, nullptr, &budget, &raw, &envelope));
}

static void anything_unusual_is_handed_back_untouched(void **state)
{
    (void)state;
    const char *const bodies[] = {
        "{\"x\":[[1,\"2\"]]}",            /* a string in a row */
        "{\"x\":[[1,[2]]]}",              /* an array in a row */
        "{\"x\":[[1,2],[3]]}",            /* ragged */
        "{\"x\":[[1,2]],\"x\":[[3,4]]}",  /* twice */
        "{\"x\":[[01]]}",                 /* not a JSON number */
        "{\"x\":[[1e400]]}",              /* beyond double: jansson words it */
        "{\"x\":[[1,2]]",                 /* unterminated */
        "[[1,2]]",                        /* not an object */
        "{\"x\":[[1,2]],\"tokens\":\"a}", /* unterminated string */
    };
    for (const char *text : bodies) {
        raw_request raw;
        std::string envelope;
        size_t budget = 100;
        if (split(text, 0, nullptr, &budget, &raw, &envelope))
            fail_msg("split %s", text);
        assert_int_equal(budget, 100);
        for (const schema_tensor &t : raw.fields.tensor)
            assert_false(t.present);
    }
    /* more numbers than the budget allows */
    raw_request raw;
    std::string envelope;
    size_t budget = 3;
    assert_false(
        split("{\"x\":[[1,2],[3,4]]}", 0, nullptr, &budget, &raw, &envelope));
}

static void many_rows_on_a_pool_read_exactly_what_strtod_reads(void **state)
{
    (void)state;
    const size_t rows = 700, width = 97;
    std::string body = "{\"w_v\":[";
    char number[40];
    for (size_t r = 0; r < rows; r++) {
        body += r ? ",[" : "[";
        for (size_t c = 0; c < width; c++) {
            double v = std::sin(double(r * width + c)) * std::pow(10.0, c % 9);
            std::snprintf(number, sizeof number, "%s%.17g", c ? "," : "", v);
            body += number;
        }
        body += "]";
    }
    body += "]}";
    pool *workers = pool_create(2, 4);
    raw_request raw;
    std::string envelope;
    size_t budget = rows * width;
    assert_true(split(body, 0, workers, &budget, &raw, &envelope));
    pool_destroy(workers);
    assert_int_equal(budget, 0);
    const schema_tensor &t = raw.fields.tensor[API_W_V];
    assert_int_equal(t.dims[0], rows);
    assert_int_equal(t.dims[1], width);
    const double *values = static_cast<const double *>(t.data);
    const char *p = std::strchr(body.c_str(), '[') + 2;
    for (size_t i = 0; i < rows * width; i++) {
        char *end;
        double want = std::strtod(p, &end);
        assert_memory_equal(&values[i], &want, sizeof want);
        p = end + std::strspn(end, ",[]");
    }
    raw_request_free(&raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(number_tensors_leave_a_zero_in_the_envelope),
        cmocka_unit_test(only_tensors_of_min_bytes_are_split),
        cmocka_unit_test(anything_unusual_is_handed_back_untouched),
        cmocka_unit_test(many_rows_on_a_pool_read_exactly_what_strtod_reads),
    };
    return cmocka_run_group_tests_name("parse_rows", tests, NULL, NULL);
}
