/*
 * test_parse_fast.c - server/json/parse_fast: the fast parser (simdjson,
 * and numbers parsed by rows on a pool) takes well-formed bodies only and
 * decides every body as jansson does, bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/pool.h"
#include "server/json/decode.h"
#include "server/json/parse_json.h"
#include "tests/unit/rejections.h"

#include <stdlib.h>
#include <string.h>

/* decode_request with the fast parser (whole-body simdjson, or every number
 * tensor parsed by rows on a pool when split) against jansson alone. */
static void expect_same_decision_of(const char *body, bool split, pool *workers)
{
    api_request fast, slow;
    codec_error fast_err, slow_err;
    size_t len = strlen(body);
    decode_options fast_path = {workers, split ? 0 : SIZE_MAX, false};
    decode_options jansson = {NULL, SIZE_MAX, true};
    bool fast_ok =
        decode_request(body, len, &limits, &fast_path, &fast, &fast_err);
    bool slow_ok =
        decode_request(body, len, &limits, &jansson, &slow, &slow_err);
    if (fast_ok != slow_ok)
        fail_msg("%s: %s %d, jansson %d", body, split ? "split" : "fast",
                 fast_ok, slow_ok);
    if (!fast_ok) {
        assert_int_equal(fast_err.code, slow_err.code);
        assert_string_equal(fast_err.pointer, slow_err.pointer);
        return;
    }
    const attn_problem *a = &fast.problem, *b = &slow.problem;
    size_t elem = tensor_dtype_size(a->dtype);
    assert_true(a->n == b->n && a->d == b->d && a->m == b->m &&
                a->d_k == b->d_k && a->d_v == b->d_v && a->d_out == b->d_out);
    assert_memory_equal(a->x, b->x, a->n * a->d * elem);
    assert_memory_equal(a->w_q, b->w_q, a->d * a->heads * a->d_k * elem);
    assert_memory_equal(a->w_k, b->w_k, a->d_c * a->heads * a->d_k * elem);
    assert_memory_equal(a->w_v, b->w_v, a->d_c * a->heads * a->d_v * elem);
    if (a->w_o)
        assert_memory_equal(a->w_o, b->w_o,
                            a->heads * a->d_v * a->d_out * elem);
    if (a->context)
        assert_memory_equal(a->context, b->context, a->m * a->d_c * elem);
    assert_true(a->heads == b->heads && a->scale == b->scale &&
                a->causal == b->causal && fast.want == slow.want);
    if (a->bias)
        assert_memory_equal(a->bias, b->bias, a->n * a->m * elem);
    if (a->allow)
        assert_memory_equal(a->allow, b->allow, a->n * a->m);
    assert_int_equal(fast.tokens.count, slow.tokens.count);
    for (size_t i = 0; i < fast.tokens.count; i++)
        assert_string_equal(fast.tokens.names[i], slow.tokens.names[i]);
    api_request_free(&fast);
    api_request_free(&slow);
}

static void expect_same_decision(const char *body)
{
    expect_same_decision_of(body, false, NULL);
    expect_same_decision_of(body, true, NULL);
    pool *workers = pool_create(2, 4);
    expect_same_decision_of(body, true, workers);
    pool_destroy(workers);
}

static void fast_parser_takes_well_formed_bodies_and_nothing_else(void **state)
{
    (void)state;
    raw_request raw;
    const char *good = "{\"x\":[[1,2]],\"tokens\":[\"a\"]," VALID_TAIL "}";
    assert_true(parse_json_fast(good, strlen(good), 100, NULL, SIZE_MAX, &raw));
    assert_int_equal(raw.fields.tensor[API_W_Q].rank, 2);
    assert_true(json_is_array(json_object_get(raw.envelope, "tokens")));
    raw_request_free(&raw);
    /* the binary form too, its numbers in the dtype that follows it */
    const char *binary =
        "{\"x\":{\"shape\":[1,2],\"base64\":"
        "\"AACAPwAAAEA=\"},\"dtype\":\"float32\"," VALID_TAIL "}";
    assert_true(
        parse_json_fast(binary, strlen(binary), 100, NULL, SIZE_MAX, &raw));
    const schema_tensor *x = &raw.fields.tensor[API_X];
    assert_true(x->present && x->is_float32 && x->rank == 2 &&
                x->dims[0] == 1 && x->dims[1] == 2);
    assert_true(((const float *)x->data)[0] == 1.0f &&
                ((const float *)x->data)[1] == 2.0f);
    raw_request_free(&raw);
    const char *refused[] = {
        "{\"x\":[[1,2]],\"x\":[[1,2]]}", /* duplicate */
        "{\"x\":[[1,2],[3]]}",           /* ragged */
        "{\"X\":[[1,2]]}",               /* unknown */
        "{\"x\":[[-0,2]]}",              /* -0: the tape loses the sign */
        "{\"x\":[[1,2]]}",               /* over the element budget */
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        assert_false(parse_json_fast(refused[i], strlen(refused[i]),
                                     i == 4 ? 1 : 100, NULL, SIZE_MAX, &raw));
}

/* raw_request_free clears its fields and envelope without one more memset
 * of the whole request: what it leaves must still read as empty. */
static void a_freed_request_holds_nothing(void **state)
{
    (void)state;
    raw_request raw;
    const char *good = "{\"x\":[[1,2]],\"tokens\":[\"a\"]," VALID_TAIL "}";
    assert_true(parse_json_fast(good, strlen(good), 100, NULL, SIZE_MAX, &raw));
    raw.whole_unsure = true;
    raw_request_free(&raw);
    static const api_fields empty;
    assert_memory_equal(&raw.fields, &empty, sizeof empty);
    assert_null(raw.envelope);
    assert_false(raw.whole_unsure);
}

static void fast_parser_matches_jansson_bit_for_bit(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "{\"x\":[[1,2]]," VALID_TAIL "}",
        "{\"x\":[[-0,0.0]]," VALID_TAIL "}",
        "{\"x\":[[-0.0,1e-400]]," VALID_TAIL "}",
        "{\"x\":[[4.9e-324,2.2250738585072011e-308]]," VALID_TAIL "}",
        "{\"x\":[[123456789012345678901234567890,1E5]]," VALID_TAIL "}",
        "{\"x\":[[0.1,0.30000000000000004]]," VALID_TAIL "}",
        "{\"x\":[[9007199254740993,-9007199254740993]]," VALID_TAIL "}",
        "{\"x\":[[1.7976931348623157e308,1]]," VALID_TAIL "}",
        "{\"x\":[[1e309,1]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":[[3.4028235e38,3.4028236e38]],\"dtype\":\"float32\"," VALID_TAIL
        "}",
        /* the binary form: float64, float32 with its dtype after it, a
         * shape written as reals, a per-head stack, and what refuses */
        "{\"x\":{\"shape\":[1,2],\"base64\":\"AAAAAAAA8D8AAAAAAAAAQA==\"}"
        "," VALID_TAIL "}",
        "{\"x\":{\"base64\":\"AACAPwAAAEA=\",\"shape\":[1,2]},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1.0,2e0],\"base64\":\"AAAAAAAA8D8AAAAAAAAAQA==\"}"
        "," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"w_q\":{\"shape\":[1,2,2],\"base64\":"
        "\"AAAAAAAA8D8AAAAAAAAAAAAAAAAAAAAAAAAAAAAA8D8=\"},"
        "\"w_k\":[[[1,0],[0,1]]],\"w_v\":[[[1,0],[0,1]]]}",
        "{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAwH8=\"},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAAEA=\"}," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAAE!=\"},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAAEA=\",\"shape\":[1,2]},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAAEA=\",\"x\":1},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,0],\"base64\":\"\"},\"dtype\":"
        "\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,1.5],\"base64\":\"AACAPwAAAEA=\"},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,true],\"base64\":\"AACAPwAAAEA=\"},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[2],\"base64\":\"AACAPwAAAEA=\"},"
        "\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,2],\"base64\":7},\"dtype\":"
        "\"float32\"," VALID_TAIL "}",
        "{\"x\":{\"shape\":[1,2]},\"dtype\":\"float32\"," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"key_padding\":{\"shape\":[1],\"base64\":\"AA==\"}"
        "," VALID_TAIL "}",
        " \n{ \"\\u0078\" : [ [ 1 , 2 ] ] , " VALID_TAIL " } \n",
        "{\"x\":[[1,2]]," VALID_TAIL "}x",
        "{\"x\":[[1,2]],\"x\":[[1,2]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"tokens\":[\"a\\u0000b\"]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"tokens\":[\"\\ud800\"]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"tokens\":[\"caf\u00e9 \\u00e9\"]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"num_heads\":-0," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"num_heads\":2.0,\"scale\":1e-300," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"mask\":[[true]],\"causal\":false," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"mask\":[[-1e300]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"mask\":[[true]],\"key_padding\":[false]," VALID_TAIL
        "}",
        "{\"x\":[[1,2],[3]]," VALID_TAIL "}",
        "{\"x\":[[1,2],[3,[4]]]," VALID_TAIL "}",
        "{\"x\":[[[1,2]]]," VALID_TAIL "}",
        "{\"x\":[[01,2]]," VALID_TAIL "}",
        "{\"x\":[[1.,2]]," VALID_TAIL "}",
        "{\"x\":[[NaN,2]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"w_q\":[[[1,0],[0,1]],[[1,0],[0,1]]],"
        "\"w_k\":[[1,0,0,1],[0,1,1,0]],\"w_v\":[[1,0,0,1],[0,1,1,0]]}",
        "\xef\xbb\xbf{\"x\":[[1,2]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"tokens\":[\"\xff\"]," VALID_TAIL "}",
        "[]",
        "",
        /* what the row splitter (parse_rows.cpp) must take or hand back */
        "{\"x\":[[1,\"2\"]]," VALID_TAIL "}",
        "{\"x\":[[1,\"]\"]]," VALID_TAIL "}",
        "{\"x\":[[1,2,]]," VALID_TAIL "}",
        "{\"x\":[[1,2],]," VALID_TAIL "}",
        "{\"x\":[[1,2] [3,4]]," VALID_TAIL "}",
        "{\"x\":[[]]," VALID_TAIL "}",
        "{\"x\":[[1 2]]," VALID_TAIL "}",
        "{\"x\":[[+1,2]]," VALID_TAIL "}",
        "{\"x\":[[.5,2]]," VALID_TAIL "}",
        "{\"x\":[[1e,2]]," VALID_TAIL "}",
        "{\"x\":[[1e+,2]]," VALID_TAIL "}",
        "{\"x\":[[-,2]]," VALID_TAIL "}",
        "{\"x\":[[1.e5,2]]," VALID_TAIL "}",
        "{\"x\":[[-01,2]]," VALID_TAIL "}",
        "{\"x\":[[0x10,2]]," VALID_TAIL "}",
        "{\"x\":[[1.5.3,2]]," VALID_TAIL "}",
        "{\"x\":[[inf,2]]," VALID_TAIL "}",
        "{\"x\":[[-inf,2]]," VALID_TAIL "}",
        "{\"x\":[[1E+05,-0.0e-0]]," VALID_TAIL "}",
        "{\"x\":[[1e-400,2]]," VALID_TAIL "}",
        "{\"x\":[[1,2]," VALID_TAIL "}",
        "{\"x\":[[1,2]]," VALID_TAIL,
        "{\"x\":[[1,2\n\t]\r,[ 3 ,4 ]]," VALID_TAIL "}",
        "{\"x\":[[1,2],[3,4]],\"w_q\":[[[1],[0]],[[0],[1]]],"
        "\"w_k\":[[[1],[0]],[[0],[1]]],\"w_v\":[[[1],[0]],[[0],[1]]]}",
        "{\"x\":[[1,2],[3,4]],\"w_q\":[[[1],[0]],[[0]]],"
        "\"w_k\":[[[1],[0]],[[0],[1]]],\"w_v\":[[[1],[0]],[[0],[1]]]}",
        "{\"x\":[[[[1]]]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"\\u0078\":[[1,2]]," VALID_TAIL "}",
        "{\"\\u0078\":[[1,2]],\"x\":[[1,2]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"mask\":[[1,-1e300]],\"tokens\":[\"[x]\"]," VALID_TAIL
        "}",
        "{\"x\":[[1,2]],\"mask\":[[1,true]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"tokens\":[\"\\\"\"],\"mask\":[[0]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"context\":[[1,2],[3,4]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"w_o\":[[1,2],[3,4]]," VALID_TAIL "}",
        "{\"x\":[[1,2]],\"tokens\":\"unterminated," VALID_TAIL "}",
        "{\"x\":[[1,2]]\"y\":1}",
        "{\"x\":[[1,2]]}",
        "{\"x\"[[1,2]]}",
        "{}",
        "{\"x\":[[1,2]],\"dtype\":\"float32\",\"w_q\":[[3.4028236e38],[0]],"
        "\"w_k\":[[1],[0]],\"w_v\":[[1],[0]]}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++)
        expect_same_decision(bodies[i]);
    for (size_t i = 0; i < sizeof rejections / sizeof *rejections; i++)
        expect_same_decision(rejections[i].body);
    for (size_t i = 0; i < sizeof hinted_rejections / sizeof *hinted_rejections;
         i++)
        expect_same_decision(hinted_rejections[i].answer.body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_parser_takes_well_formed_bodies_and_nothing_else),
        cmocka_unit_test(a_freed_request_holds_nothing),
        cmocka_unit_test(fast_parser_matches_jansson_bit_for_bit),
    };
    return cmocka_run_group_tests_name("parse_fast", tests, NULL, NULL);
}
