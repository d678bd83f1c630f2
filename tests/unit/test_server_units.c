/*
 * test_server_units.c - the number writer round-trips, and the decoder
 * accepts what the API allows and rejects everything else with the right
 * status, code and JSON Pointer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/json/base64.h"
#include "server/json/decode.h"
#include "server/json/encode.h"
#include "server/json/numfmt.h"
#include "server/json/oip.h"
#include "server/json/parse_json.h"
#include "server/base/block_cache.h"
#include "server/base/reply.h"
#include "tests/unit/join_parts.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numfmt ------------------------------------------------------------ */

static void short_decimals_print_as_written(void **state)
{
    (void)state;
    char out[NUMFMT_MAX];
    numfmt_double(0.1, out);
    assert_string_equal(out, "0.1");
    numfmt_double(1.0, out);
    assert_string_equal(out, "1");
    numfmt_double(-2.5e-300, out);
    assert_string_equal(out, "-2.5e-300");
    numfmt_float(0.1f, out);
    assert_string_equal(out, "0.1");
    numfmt_double(0.1 + 0.2, out);
    assert_string_equal(out, "0.30000000000000004");
    /* whole numbers past 2^53 (float: 2^24) never look like big integers */
    numfmt_double(123445678901234567890.0, out);
    assert_string_equal(out, "1.2344567890123457e+20");
    numfmt_double(9007199254740991.0, out);
    assert_string_equal(out, "9007199254740991");
    numfmt_float(3e10f, out);
    assert_string_equal(out, "3e+10");
    numfmt_float(16777215.0f, out);
    assert_string_equal(out, "16777215");
}

static void every_double_and_float_round_trips_exactly(void **state)
{
    (void)state;
    uint64_t s = 88172645463325252u;
    char out[NUMFMT_MAX];
    for (int i = 0; i < 200000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double d;
        memcpy(&d, &s, sizeof d);
        if (!isfinite(d))
            continue;
        numfmt_double(d, out);
        assert_true(strtod(out, NULL) == d);
        float f;
        uint32_t bits = (uint32_t)s;
        memcpy(&f, &bits, sizeof f);
        if (!isfinite(f))
            continue;
        numfmt_float(f, out);
        assert_true(strtof(out, NULL) == f);
        assert_true(strlen(out) <= 15);
    }
    numfmt_double(DBL_MAX, out);
    assert_true(strtod(out, NULL) == DBL_MAX);
    numfmt_double(4.9e-324, out);
    assert_true(strtod(out, NULL) == 4.9e-324);
}

/* ---- JSON strings -------------------------------------------------------- */

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

/* ---- decode ------------------------------------------------------------ */

static const request_limits limits = {.max_tokens = 64,
                                      .max_width = 64,
                                      .max_heads = 8,
                                      .max_elements = 100000,
                                      .max_request_memory = 1 << 24};

#define LESSON_W "[[1,0,0,1],[0,1,1,0]]"
#define VALID_TAIL "\"w_q\":" LESSON_W ",\"w_k\":" LESSON_W ",\"w_v\":" LESSON_W

#define LONG_NAME_16 "abcdefghijklmnop"
#define LONG_NAME                                                              \
    LONG_NAME_16 LONG_NAME_16 LONG_NAME_16 LONG_NAME_16 LONG_NAME_16           \
        LONG_NAME_16 LONG_NAME_16 LONG_NAME_16 LONG_NAME_16

typedef struct {
    const char *body;
    unsigned status;
    const char *code;
    const char *pointer;
} rejection;

static const rejection rejections[] = {
    {"", 400, "invalid_json", ""},
    {"{\"x\": [[1,2]],", 400, "invalid_json", ""},
    {"{\"x\":[[1,2]]," VALID_TAIL "} trailing", 400, "invalid_json", ""},
    {"[1,2]", 400, "invalid_body", ""},
    {"{\"x\":[[1,2]],\"x\":[[1,2]]," VALID_TAIL "}", 400, "invalid_json", ""},
    {"{\"x\":[[1,2]],\"W_q\":1," VALID_TAIL "}", 400, "unknown_field", "/W_q"},
    {"{\"x\":[[1,2]],\"a/b~\":1," VALID_TAIL "}", 400, "unknown_field",
     "/a~1b~0"},
    {"{" VALID_TAIL "}", 400, "missing_field", "/x"},
    {"{\"x\":[[1,2]],\"w_q\":" LESSON_W ",\"w_k\":" LESSON_W "}", 400,
     "missing_field", "/w_v"},
    {"{\"x\":[[1,2],[3]]," VALID_TAIL "}", 400, "ragged_array", "/x/1"},
    {"{\"x\":[[1,2],[3,\"4\"]]," VALID_TAIL "}", 400, "wrong_type", "/x/1/1"},
    {"{\"x\":[[1,2],[3,null]]," VALID_TAIL "}", 400, "wrong_type", "/x/1/1"},
    {"{\"x\":[[1,2],[3,true]]," VALID_TAIL "}", 400, "wrong_type", "/x/1/1"},
    {"{\"x\":[[1,2],[3,[4]]]," VALID_TAIL "}", 400, "wrong_rank", "/x/1/1"},
    {"{\"x\":[[[[1,2]]]]," VALID_TAIL "}", 400, "wrong_rank", "/x/0/0/0"},
    {"{\"x\":[1,2]," VALID_TAIL "}", 400, "wrong_rank", "/x"},
    {"{\"x\":[]," VALID_TAIL "}", 400, "empty_array", "/x"},
    {"{\"x\":[[]]," VALID_TAIL "}", 400, "empty_array", "/x/0"},
    {"{\"x\":\"abc\"," VALID_TAIL "}", 400, "wrong_type", "/x"},
    {"{\"x\":[[1,2,3]]," VALID_TAIL "}", 400, "shape_mismatch", "/w_q"},
    {"{\"x\":[[1,2]],\"num_heads\":3," VALID_TAIL "}", 400, "invalid_num_heads",
     "/num_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":0," VALID_TAIL "}", 400, "invalid_num_heads",
     "/num_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":-2," VALID_TAIL "}", 400,
     "invalid_num_heads", "/num_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":1.5," VALID_TAIL "}", 400,
     "invalid_num_heads", "/num_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":\"2\"," VALID_TAIL "}", 400, "wrong_type",
     "/num_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":3,\"w_q\":[[[1],[2]],[[1],[2]]],"
     "\"w_k\":[[[1],[2]],[[1],[2]]],\"w_v\":[[[1],[2]],[[1],[2]]]}",
     400, "invalid_num_heads", "/num_heads"},
    {"{\"x\":[[1,2]],\"dtype\":\"float16\"," VALID_TAIL "}", 400,
     "invalid_dtype", "/dtype"},
    {"{\"x\":[[1,2]],\"return\":[\"output\",\"attention\"]," VALID_TAIL "}",
     400, "invalid_return", "/return/1"},
    {"{\"x\":[[1,2]],\"scale\":0," VALID_TAIL "}", 400, "invalid_scale",
     "/scale"},
    {"{\"x\":[[1,2]],\"scale\":-1," VALID_TAIL "}", 400, "invalid_scale",
     "/scale"},
    {"{\"x\":[[1e39,2]],\"dtype\":\"float32\"," VALID_TAIL "}", 400,
     "number_out_of_range", "/x/0/0"},
    /* a number beyond a double is blamed only in a body that is JSON
     * otherwise: "1.e5", "01" and "-" are not JSON numbers, though strtod()
     * reads the first two (and 1.e861 beyond a double) */
    {"{\"x\":[[1e999,1.e861]]," VALID_TAIL "}", 400, "invalid_json", ""},
    {"{\"x\":[[1e999,1.e5]]," VALID_TAIL "}", 400, "invalid_json", ""},
    {"{\"x\":[[1e999,01]]," VALID_TAIL "}", 400, "invalid_json", ""},
    {"{\"x\":[[1e999,-]]," VALID_TAIL "}", 400, "invalid_json", ""},
    {"{\"x\":[[1e999,-0.5e-3]]," VALID_TAIL "}", 400, "number_out_of_range",
     "/x/0/0"},
    {"{\"x\":[[1,2]],\"w_o\":[[1,2]]," VALID_TAIL "}", 400, "shape_mismatch",
     "/w_o"},
    {"{\"x\":[[1,2]],\"w_q\":[[1],[0]],\"w_k\":" LESSON_W ",\"w_v\":" LESSON_W
     "}",
     400, "shape_mismatch", "/w_k"},
    {"{\"x\":[[1,2]],\"causal\":1," VALID_TAIL "}", 400, "wrong_type",
     "/causal"},
    {"{\"x\":[[1,2]],\"mask\":[[true,false]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/mask"},
    {"{\"x\":[[1,2]],\"mask\":[[true]],\"key_padding\":[1]," VALID_TAIL "}",
     400, "wrong_type", "/key_padding/0"},
    {"{\"x\":[[1,2]],\"tokens\":[\"a\",\"b\"]," VALID_TAIL "}", 400,
     "shape_mismatch", "/tokens"},
    {"{\"x\":[[1,2]],\"context_tokens\":[\"a\"]," VALID_TAIL "}", 400,
     "missing_field", "/context"},
    {"{\"x\":[[1,2]],\"context\":[[1,2,3]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/w_k"},
    {"{\"x\":[[1,2]],\"num_heads\":9," VALID_TAIL "}", 413, "limit_exceeded",
     "/num_heads"},
    /* without num_heads the head count comes from the first stack, and the
     * weight that disagrees with it is blamed */
    {"{\"x\":[[1,2]],\"w_q\":[[[1],[1]],[[1],[1]]],"
     "\"w_k\":[[[1],[1]],[[1],[1]],[[1],[1]]],\"w_v\":[[1],[1]]}",
     400, "invalid_num_heads", "/w_k"},
    {"{\"x\":[[1,2]],\"w_q\":[[[1],[1]],[[1],[1]]],"
     "\"w_k\":[[[1],[1]],[[1],[1]]],\"w_v\":[[1,2,3],[1,2,3]]}",
     400, "invalid_num_heads", "/w_v"},
    /* biases, PyTorch's layout and state_dict names */
    {"{\"x\":[[1,2]],\"b_q\":[1,2,3]," VALID_TAIL "}", 400, "shape_mismatch",
     "/b_q"},
    {"{\"x\":[[1,2]],\"b_v\":[[1,2]]," VALID_TAIL "}", 400, "shape_mismatch",
     "/b_v"},
    {"{\"x\":[[1,2]],\"b_o\":[1]," VALID_TAIL "}", 400, "missing_field",
     "/w_o"},
    {"{\"x\":[[1,2]],\"layout\":\"numpy\"," VALID_TAIL "}", 400,
     "invalid_layout", "/layout"},
    {"{\"x\":[[1,2]],\"layout\":\"torch\",\"w_q\":[[1,1]],"
     "\"w_k\":[[1,1]],\"w_v\":[[1],[1]]}",
     400, "shape_mismatch", "/w_v"},
    {"{\"x\":[[1,2]],\"in_proj_weight\":[[1,2],[1,2],[1,2]]," VALID_TAIL "}",
     400, "conflicting_fields", "/in_proj_weight"},
    {"{\"x\":[[1,2]],\"in_proj_weight\":[[1,2],[1,2]]}", 400, "shape_mismatch",
     "/in_proj_weight"},
    {"{\"x\":[[1,2]],\"in_proj_weight\":[[1,2],[1,2],[1,2]],"
     "\"in_proj_bias\":[1,2]}",
     400, "shape_mismatch", "/in_proj_bias"},
    {"{\"x\":[[1,2]],\"q_proj_weight\":[[1,2]],\"w_k\":[[1],[1]]}", 400,
     "missing_field", "/w_v"},
    {"{\"x\":[[1,2]],\"w_o\":[[1]],\"out_proj_weight\":[[1]]," VALID_TAIL "}",
     400, "conflicting_fields", "/out_proj_weight"},
    /* batches: x (B, n, d) with context (B, m, d_c), key_padding (B, m),
     * mask (n, m) or (B, n, m) */
    {"{\"x\":[[[1,2]],[[3,4]]],\"context\":[[1,2]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/context"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"context\":[[[1,2]]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/context"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"key_padding\":[false]," VALID_TAIL "}", 400,
     "shape_mismatch", "/key_padding"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"key_padding\":[[false]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/key_padding"},
    /* one sequence: (n, m) or (h, n, m) */
    {"{\"x\":[[1,2]],\"mask\":[[[true]],[[true]]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/mask"},
    {"{\"x\":[[1,2]],\"mask\":[[[[true]]]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/mask"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"mask\":[[[[true]]]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/mask"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"mask\":[[[[true]],[[true]]],[[[true]],"
     "[[true]]]]," VALID_TAIL "}",
     400, "shape_mismatch", "/mask"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"mask\":[[[true]]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/mask"},
    /* q, k and v given directly: alone, together, and agreeing */
    {"{\"q\":[[[1]]],\"k\":[[[1]]],\"v\":[[[1]]],\"w_q\":[[1]]}", 400,
     "conflicting_fields", "/w_q"},
    {"{\"q\":[[[1]]],\"k\":[[[1]]]}", 400, "missing_field", "/v"},
    {"{\"q\":[[[1]]],\"k\":[[[1]],[[1]]],\"v\":[[[1]]]}", 400, "shape_mismatch",
     "/k"},
    {"{\"q\":[[[1,2]]],\"k\":[[[1]]],\"v\":[[[1]]]}", 400, "shape_mismatch",
     "/k"},
    {"{\"q\":[[[1]]],\"k\":[[[1]]],\"v\":[[[1]],[[2]]]}", 400, "shape_mismatch",
     "/v"},
    {"{\"q\":[[[1]]],\"k\":[[[1]]],\"v\":[[[1],[2]]]}", 400, "shape_mismatch",
     "/v"},
    {"{\"q\":[[[[1]]]],\"k\":[[[1]]],\"v\":[[[1]]]}", 400, "shape_mismatch",
     "/k"},
    {"{\"tokens\":[\"a\"]}", 400, "missing_field", "/x"},
    /* grouped-query heads */
    {"{\"x\":[[1,2]],\"num_heads\":2,\"num_kv_heads\":0," VALID_TAIL "}", 400,
     "invalid_num_kv_heads", "/num_kv_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":2,\"num_kv_heads\":3,"
     "\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0,1],[0,1,1]],"
     "\"w_v\":[[1,0,1],[0,1,1]]}",
     400, "invalid_num_kv_heads", "/num_kv_heads"},
    {"{\"x\":[[1,2]],\"num_heads\":2,\"num_kv_heads\":1,"
     "\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0],[0,1]],\"w_v\":[[1],[0]]}",
     400, "shape_mismatch", "/w_k"},
    {"{\"q\":[[[1]],[[1]]],\"k\":[[[1]],[[1]],[[1]]],\"v\":[[[1]],[[1]],"
     "[[1]]]}",
     400, "shape_mismatch", "/k"},
    /* positions, window, ALiBi */
    {"{\"x\":[[1,2]],\"positions\":[-1]," VALID_TAIL "}", 400,
     "invalid_positions", "/positions/0"},
    {"{\"x\":[[1,2]],\"positions\":[0.5]," VALID_TAIL "}", 400,
     "invalid_positions", "/positions/0"},
    {"{\"x\":[[1,2]],\"positions\":[1,2]," VALID_TAIL "}", 400,
     "shape_mismatch", "/positions"},
    {"{\"x\":[[1,2]],\"context_positions\":[0]," VALID_TAIL "}", 400,
     "missing_field", "/context"},
    {"{\"x\":[[1,2]],\"window\":0," VALID_TAIL "}", 400, "invalid_window",
     "/window"},
    /* heads: distinct whole numbers below num_heads (here 1) */
    {"{\"x\":[[1,2]],\"heads\":[1]," VALID_TAIL "}", 400, "invalid_heads",
     "/heads/0"},
    {"{\"x\":[[1,2]],\"heads\":[0,0]," VALID_TAIL "}", 400, "invalid_heads",
     "/heads/1"},
    {"{\"x\":[[1,2]],\"heads\":[-1]," VALID_TAIL "}", 400, "invalid_heads",
     "/heads/0"},
    {"{\"x\":[[1,2]],\"heads\":[0.5]," VALID_TAIL "}", 400, "invalid_heads",
     "/heads/0"},
    {"{\"x\":[[1,2]],\"heads\":[]," VALID_TAIL "}", 400, "empty_array",
     "/heads"},
    {"{\"x\":[[1,2]],\"heads\":0," VALID_TAIL "}", 400, "wrong_type", "/heads"},
    {"{\"x\":[[1,2]],\"alibi_slopes\":[1,2]," VALID_TAIL "}", 400,
     "shape_mismatch", "/alibi_slopes"},
    {"{\"x\":[[1,2]],\"alibi\":true,\"alibi_slopes\":[1]," VALID_TAIL "}", 400,
     "conflicting_fields", "/alibi_slopes"},
    /* labels: one list, or in a batch one list per sequence */
    {"{\"x\":[[1,2]],\"tokens\":[[\"a\"]]," VALID_TAIL "}", 400,
     "shape_mismatch", "/tokens"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"tokens\":[[\"a\"],[\"b\",\"c\"]]," VALID_TAIL
     "}",
     400, "shape_mismatch", "/tokens/1"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"tokens\":[[\"a\"],[1]]," VALID_TAIL "}", 400,
     "wrong_type", "/tokens/1/0"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"tokens\":[[\"a\"],[\"b\"],[\"c\"]]," VALID_TAIL
     "}",
     400, "shape_mismatch", "/tokens"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"tokens\":[[\"a\",\"b\"],[\"c\",\"d\"]]"
     "," VALID_TAIL "}",
     400, "shape_mismatch", "/tokens"},
/* RoPE, the sinusoidal encoding, a KV cache (d_k = d_v = 4 here) */
#define PAST1 "[[[1,2,3,4]]]"
#define PAST2 "[[[1,2,3,4],[5,6,7,8]]]"
    {"{\"x\":[[1,2]],\"rope\":1," VALID_TAIL "}", 400, "invalid_rope", "/rope"},
    {"{\"x\":[[1,2]],\"rope\":{\"theta\":2}," VALID_TAIL "}", 400,
     "invalid_rope", "/rope/theta"},
    {"{\"x\":[[1,2]],\"rope\":{\"" LONG_NAME "\":2}," VALID_TAIL "}", 400,
     "invalid_rope", ""},
    {"{\"x\":[[1,2]],\"rope\":{\"dims\":6}," VALID_TAIL "}", 400,
     "invalid_rope", "/rope/dims"},
    {"{\"x\":[[1,2]],\"rope\":{\"dims\":3}," VALID_TAIL "}", 400,
     "invalid_rope", "/rope/dims"},
    {"{\"x\":[[1,2]],\"rope\":{\"dims\":2.5}," VALID_TAIL "}", 400,
     "invalid_rope", "/rope/dims"},
    {"{\"x\":[[1,2]],\"rope\":{\"base\":0}," VALID_TAIL "}", 400,
     "invalid_rope", "/rope/base"},
    {"{\"x\":[[1,2]],\"rope\":{\"style\":\"neox\"}," VALID_TAIL "}", 400,
     "invalid_rope", "/rope/style"},
    {"{\"x\":[[1,2,3]],\"rope\":true,\"w_q\":[[1],[1],[1]],"
     "\"w_k\":[[1],[1],[1]],\"w_v\":[[1],[1],[1]]}",
     400, "invalid_rope", "/rope"},
    {"{\"x\":[[1,2]],\"positional_encoding\":\"learned\"," VALID_TAIL "}", 400,
     "invalid_positional_encoding", "/positional_encoding"},
    {"{\"q\":[[[1]]],\"k\":[[[1]]],\"v\":[[[1]]],"
     "\"positional_encoding\":\"sinusoidal\"}",
     400, "conflicting_fields", "/positional_encoding"},
    {"{\"x\":[[1,2]],\"return\":[\"q_rope\"]," VALID_TAIL "}", 400,
     "invalid_return", "/return"},
    {"{\"x\":[[1,2]],\"return\":[\"x_pe\"]," VALID_TAIL "}", 400,
     "invalid_return", "/return"},
    {"{\"x\":[[1,2]],\"past_k\":" PAST1 "," VALID_TAIL "}", 400,
     "missing_field", "/past_v"},
    {"{\"x\":[[1,2]],\"past_k\":[[[1,2,3,4]],[[1,2,3,4]]],"
     "\"past_v\":[[[1,2,3,4]],[[1,2,3,4]]]," VALID_TAIL "}",
     400, "shape_mismatch", "/past_k"},
    {"{\"x\":[[1,2]],\"past_k\":[[[1,2,3]]],\"past_v\":" PAST1 "," VALID_TAIL
     "}",
     400, "shape_mismatch", "/past_k"},
    {"{\"x\":[[1,2]],\"past_k\":" PAST1 ",\"past_v\":" PAST2 "," VALID_TAIL "}",
     400, "shape_mismatch", "/past_v"},
    {"{\"x\":[[[1,2]]],\"past_k\":" PAST1 ",\"past_v\":" PAST1 "," VALID_TAIL
     "}",
     400, "shape_mismatch", "/past_k"},
    {"{\"x\":[[1,2]],\"past_k\":" PAST2 ",\"past_v\":" PAST2
     ",\"positions\":[1]," VALID_TAIL "}",
     400, "invalid_positions", "/positions/0"},
    {"{\"x\":[[1,2]],\"past_k\":" PAST1 ",\"past_v\":" PAST1
     ",\"key_padding\":[false]," VALID_TAIL "}",
     400, "shape_mismatch", "/key_padding"},
    /* a field name too long for a pointer: no truncated pointer */
    {"{\"x\":[[1,2]],\"" LONG_NAME "\":1," VALID_TAIL "}", 400, "unknown_field",
     ""},
    /* the binary form: {"shape": [...], "base64": little-endian numbers} */
    {"{\"x\":{\"shape\":[1,2],\"base64\":\"!!!!\"}," VALID_TAIL "}", 400,
     "invalid_base64", "/x/base64"},
    {"{\"x\":{\"shape\":[1,2],\"base64\":\"AAAAAAAAAAA=\"}," VALID_TAIL "}",
     400, "shape_mismatch", "/x/base64"},
    {"{\"x\":{\"shape\":[1,2],\"data\":\"\"}," VALID_TAIL "}", 400,
     "unknown_field", "/x/data"},
    {"{\"x\":{\"shape\":[2],\"base64\":\"\"}," VALID_TAIL "}", 400,
     "wrong_rank", "/x/shape"},
    /* a missing member is named where it belongs (found by the fuzzer: the
     * pointer of "x": {} once named a shape that was not there as wrong) */
    {"{\"x\":{}," VALID_TAIL "}", 400, "missing_field", "/x/shape"},
    {"{\"x\":{\"shape\":[1,2]}," VALID_TAIL "}", 400, "missing_field",
     "/x/base64"},
    {"{\"x\":[[1,2]],\"key_padding\":{\"shape\":[1]}," VALID_TAIL "}", 400,
     "wrong_type", "/key_padding"},
    {"{\"x\":{\"shape\":[1,2],\"base64\":\"AAAAAAAA+H8AAAAAAADwPw==\"}"
     "," VALID_TAIL "}",
     400, "number_out_of_range", "/x/base64"},
    /* float32 binary numbers are kept as float32: [1, ∞] */
    {"{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAgH8=\"},"
     "\"dtype\":\"float32\"," VALID_TAIL "}",
     400, "number_out_of_range", "/x/base64"},
    {"{\"x\":[[1,2]],\"encoding\":\"hex\"," VALID_TAIL "}", 400,
     "invalid_encoding", "/encoding"},
};

static void every_bad_request_gets_its_code_and_pointer(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rejections / sizeof *rejections; i++) {
        const rejection *r = &rejections[i];
        api_request req;
        codec_error err;
        bool ok =
            decode_request(r->body, strlen(r->body), &limits, NULL, &req, &err);
        const error_code_row *got = error_code_info(ok ? ERR_NONE : err.code);
        if (ok || got->status != r->status || strcmp(got->name, r->code) != 0 ||
            strcmp(err.pointer, r->pointer) != 0)
            fail_msg("body %s: got ok=%d %u %s '%s' (%s), want %u %s '%s'",
                     r->body, ok, got->status, ok ? "" : got->name, err.pointer,
                     err.detail, r->status, r->code, r->pointer);
    }
}

/* A raw NUL byte is not JSON anywhere; jansson skips one after a number
 * ("1\0,2" read as 1, 2), so the decoders refuse it before jansson reads,
 * on /v1 and in /v2's JSON header (found by the fuzzer). */
static void a_nul_byte_is_invalid_json(void **state)
{
    (void)state;
    static const char body[] = "{\"x\":[[1\0,2]],\"w_q\":[[1],[2]],"
                               "\"w_k\":[[1],[2]],\"w_v\":[[1],[2]]}";
    api_request req;
    codec_error err;
    assert_false(
        decode_request(body, sizeof body - 1, &limits, NULL, &req, &err));
    assert_int_equal(err.code, ERR_INVALID_JSON);
    assert_non_null(strstr(err.detail, "line 1, column 9: a NUL byte"));
    static const char inference[] =
        "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,2],\"datatype\":"
        "\"FP64\",\"data\":[1\0,2]}]}";
    oip_reply_plan plan;
    for (int jansson = 0; jansson < 2; jansson++) {
        size_t len = sizeof inference - 1;
        bool ok = jansson ? oip_decode_jansson(inference, len, len, &limits,
                                               &req, &plan, &err)
                          : oip_decode(inference, len, len, &limits, &req,
                                       &plan, &err);
        assert_false(ok);
        assert_int_equal(err.code, ERR_INVALID_JSON);
    }
}

/* nn.MultiheadAttention's state_dict (out×in, rows [W_q; W_k; W_v]) decodes
 * to the same core problem as the lessons' in×out weights and biases. */
static void state_dict_names_decode_to_the_lesson_layout(void **state)
{
    (void)state;
    const char *torch = "{\"x\":[[1,2]],\"in_proj_weight\":[[1,2],[3,4],"
                        "[5,6],[7,8],[9,10],[11,12]],"
                        "\"in_proj_bias\":[1,2,3,4,5,6],"
                        "\"out_proj_weight\":[[1,2],[3,4]],"
                        "\"out_proj_bias\":[7,8]}";
    const char *lesson = "{\"x\":[[1,2]],\"w_q\":[[1,3],[2,4]],"
                         "\"w_k\":[[5,7],[6,8]],\"w_v\":[[9,11],[10,12]],"
                         "\"b_q\":[1,2],\"b_k\":[3,4],\"b_v\":[5,6],"
                         "\"w_o\":[[1,3],[2,4]],\"b_o\":[7,8]}";
    api_request a, b;
    codec_error err;
    assert_true(decode_request(torch, strlen(torch), &limits, NULL, &a, &err));
    assert_true(
        decode_request(lesson, strlen(lesson), &limits, NULL, &b, &err));
    assert_int_equal(a.problem.d_k, 2);
    assert_int_equal(a.problem.d_out, 2);
    assert_memory_equal(a.w_q, b.w_q, 4 * sizeof(double));
    assert_memory_equal(a.w_k, b.w_k, 4 * sizeof(double));
    assert_memory_equal(a.w_v, b.w_v, 4 * sizeof(double));
    assert_memory_equal(a.w_o, b.w_o, 4 * sizeof(double));
    assert_memory_equal(a.b_q, b.b_q, 2 * sizeof(double));
    assert_memory_equal(a.b_k, b.b_k, 2 * sizeof(double));
    assert_memory_equal(a.b_v, b.b_v, 2 * sizeof(double));
    assert_memory_equal(a.b_o, b.b_o, 2 * sizeof(double));
    api_request_free(&a);
    api_request_free(&b);
}

static void malformed_json_names_line_and_column(void **state)
{
    (void)state;
    const char *body = "{\n  \"x\": [[1, 2]],\n  oops\n}";
    api_request req;
    codec_error err;
    assert_false(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    assert_non_null(strstr(err.detail, "line 3"));
    assert_non_null(strstr(err.detail, "column"));
}

static void binary_tensors_decode_to_the_same_numbers(void **state)
{
    (void)state;
    /* [[1, 2]] as two little-endian float64 */
    const char *body = "{\"x\":{\"shape\":[1,2],\"base64\":"
                       "\"AAAAAAAA8D8AAAAAAAAAQA==\"}," VALID_TAIL "}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    const double *x = req.problem.x;
    assert_true(x[0] == 1.0 && x[1] == 2.0);
    assert_false(req.binary);
    api_request_free(&req);
}

static void per_head_stacks_become_the_wide_layout(void **state)
{
    (void)state;
    /* two heads of d_k = 1 over d = 2: stack[h][row][0] */
    const char *stacked = "{\"x\":[[1,2]],\"w_q\":[[[1],[2]],[[3],[4]]],"
                          "\"w_k\":[[[1],[2]],[[3],[4]]],"
                          "\"w_v\":[[[5],[6]],[[7],[8]]]}";
    api_request req;
    codec_error err;
    assert_true(
        decode_request(stacked, strlen(stacked), &limits, NULL, &req, &err));
    assert_int_equal(req.problem.heads, 2);
    assert_int_equal(req.problem.d_k, 1);
    const double *wide = req.problem.w_v; /* (d = 2, h·d_v = 2) */
    assert_true(wide[0] == 5 && wide[1] == 7 && wide[2] == 6 && wide[3] == 8);
    api_request_free(&req);
}

static void defaults_are_one_head_float64_and_output_plus_weights(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,2]]," VALID_TAIL "}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    assert_int_equal(req.problem.heads, 1);
    assert_int_equal(req.problem.dtype, TENSOR_FLOAT64);
    assert_int_equal(req.want,
                     ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS));
    assert_true(req.scale == 0.5);
    api_request_free(&req);
}

static void encoded_tensors_nest_by_shape(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,2],[3,4]],\"num_heads\":2,"
                       "\"return\":[\"q\",\"masked_scores\"],\"causal\":true,"
                       "\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0],[0,1]],"
                       "\"w_v\":[[1,0],[0,1]]}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    attn_result result;
    assert_int_equal(attn_forward(NULL, &req.problem, req.want, &result),
                     ATTN_OK);
    buf_chain chain = {0};
    encode_response(&req, &result, NULL, &chain);
    assert_int_equal(chain.count, 1); /* small: written in one part */
    buf out = chain.parts[0];
    /* q per head: head 0 is column 0 of x, head 1 column 1 */
    assert_non_null(strstr(out.data, "\"q\":[[[1],[3]],[[2],[4]]]"));
    /* masked entries are null; scale 1/√1 leaves the scores as they are */
    assert_non_null(strstr(
        out.data, "\"masked_scores\":[[[1,null],[3,9]],[[4,null],[8,16]]]"));
    assert_non_null(strstr(out.data, "\"weights\":[2,2,2]"));
    assert_null(strstr(out.data, "\"weights\":[["));
    buf_chain_free(&chain);
    attn_result_free(&result);
    api_request_free(&req);
}

static void large_tensors_encode_the_same_on_several_threads(void **state)
{
    (void)state;
    /* (1, 512, 512) weights: past the size where encoding is shared out */
    api_request req = {.want = ATTN_WANT(ATTN_WEIGHTS)};
    req.problem = (attn_problem){.dtype = TENSOR_FLOAT64,
                                 .n = 512,
                                 .m = 512,
                                 .d = 1,
                                 .d_c = 1,
                                 .heads = 1,
                                 .d_k = 1,
                                 .d_v = 1};
    double *weights = malloc(512 * 512 * sizeof *weights);
    for (size_t i = 0; i < 512 * 512; i++)
        weights[i] = sin((double)i) / 3.0;
    attn_result result = {0};
    result.stage[ATTN_WEIGHTS] = weights;
    buf_chain serial_parts = {0}, parallel_parts = {0};
    encode_response(&req, &result, NULL, &serial_parts);
    pool *workers = pool_create(3, 4);
    encode_response(&req, &result, workers, &parallel_parts);
    pool_destroy(workers);
    /* the pieces are parts of their own, not copied into one buffer */
    assert_int_equal(serial_parts.count, 1);
    assert_true(parallel_parts.count > 32);
    size_t serial_len, parallel_len;
    char *serial = buf_chain_join(&serial_parts, &serial_len);
    char *parallel = buf_chain_join(&parallel_parts, &parallel_len);
    assert_int_equal(buf_chain_len(&parallel_parts), parallel_len);
    assert_int_equal(serial_len, parallel_len);
    assert_memory_equal(serial, parallel, serial_len);
    assert_non_null(strstr(serial, "\"weights\":[[[0,0.28"));
    assert_memory_equal(serial + serial_len - 5, "]]]}\n", 5);
    free(serial);
    free(parallel);
    buf_chain_free(&serial_parts);
    buf_chain_free(&parallel_parts);
    free(weights);
}

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

/* ---- the fast parser agrees with jansson ------------------------------- */

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
}

/* ---- base64 ------------------------------------------------------------ */

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

/* ---- block_cache ------------------------------------------------------ */

/* The block cache is per thread, so each test runs on a thread of its own
 * (its kept blocks start empty and are freed when it ends: a leak here
 * fails the ASan and valgrind runs).  cmocka's asserts belong to the test's
 * own thread: a thread function returns the first check that failed, or
 * NULL, and the test asserts that. */
#define THREAD_CHECK(cond)                                                     \
    do {                                                                       \
        if (!(cond))                                                           \
            return (void *)#cond;                                              \
    } while (0)

/* fn(arg) on a new thread: what it returned, or why it could not run. */
static const char *on_a_new_thread(void *(*fn)(void *), void *arg)
{
    pthread_t thread;
    void *failed = NULL;
    if (pthread_create(&thread, NULL, fn, arg) != 0 ||
        pthread_join(thread, &failed) != 0)
        return "the thread did not run";
    return failed;
}

static void expect_thread_passes(void *(*fn)(void *))
{
    const char *failed = on_a_new_thread(fn, NULL);
    if (failed)
        fail_msg("on its thread: %s", failed);
}

static void *keep_and_take_back(void *arg)
{
    (void)arg;
    char *block = block_alloc(4096);
    THREAD_CHECK(block != NULL && block_cache_kept() == 0);
    block_free(block);
    THREAD_CHECK(block_cache_kept() == 1);
    /* a request for more than any kept block goes to malloc */
    free(block_alloc(8192));
    THREAD_CHECK(block_cache_kept() == 1);
    /* far below BLOCK_CACHE_MIN_BYTES too (glibc's own cache serves it),
     * and such a block, or one above BLOCK_CACHE_MAX_BYTES, is not kept */
    char *small = block_alloc(BLOCK_CACHE_MIN_BYTES / 8);
    unsigned kept_beside_small = block_cache_kept();
    block_free(small);
    block_free(block_alloc(2 * BLOCK_CACHE_MAX_BYTES));
    THREAD_CHECK(kept_beside_small == 1 && block_cache_kept() == 1);
    char *again = block_alloc(3000);
    THREAD_CHECK(again == block && block_cache_kept() == 0);
    block_free(again); /* kept until the thread ends */
    return NULL;
}

static void *take_from_an_empty_thread(void *arg)
{
    (void)arg;
    THREAD_CHECK(block_cache_kept() == 0);
    return NULL;
}

static void *keep_one_for_another_thread(void *arg)
{
    (void)arg;
    char *block = block_alloc(4096);
    block_free(block);
    const char *failed = on_a_new_thread(take_from_an_empty_thread, NULL);
    if (failed)
        return (void *)failed;
    THREAD_CHECK(block_cache_kept() == 1);
    char *again = block_alloc(4096);
    bool kept = again == block;
    free(again);
    THREAD_CHECK(kept);
    return NULL;
}

static void *keep_at_most_the_slots(void *arg)
{
    (void)arg;
    char *freed[BLOCK_CACHE_SLOTS + 1];
    for (size_t i = 0; i <= BLOCK_CACHE_SLOTS; i++)
        freed[i] = block_alloc(2048);
    for (size_t i = 0; i <= BLOCK_CACHE_SLOTS; i++)
        block_free(freed[i]); /* the last one finds every slot taken */
    THREAD_CHECK(block_cache_kept() == BLOCK_CACHE_SLOTS);
    char *taken[BLOCK_CACHE_SLOTS];
    bool among_first = true;
    for (size_t i = 0; i < BLOCK_CACHE_SLOTS; i++) {
        taken[i] = block_alloc(2048);
        bool found = false;
        for (size_t j = 0; j < BLOCK_CACHE_SLOTS; j++)
            found |= taken[i] == freed[j];
        among_first &= found;
    }
    for (size_t i = 0; i < BLOCK_CACHE_SLOTS; i++)
        free(taken[i]);
    THREAD_CHECK(among_first && block_cache_kept() == 0);
    return NULL;
}

static void a_thread_hands_a_freed_block_out_again(void **state)
{
    (void)state;
    expect_thread_passes(keep_and_take_back);
}

static void a_block_kept_by_one_thread_is_not_another_threads(void **state)
{
    (void)state;
    expect_thread_passes(keep_one_for_another_thread);
}

static void a_thread_keeps_at_most_its_slots(void **state)
{
    (void)state;
    expect_thread_passes(keep_at_most_the_slots);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_decimals_print_as_written),
        cmocka_unit_test(every_double_and_float_round_trips_exactly),
        cmocka_unit_test(strings_in_replies_are_always_valid_utf8),
        cmocka_unit_test(every_bad_request_gets_its_code_and_pointer),
        cmocka_unit_test(a_nul_byte_is_invalid_json),
        cmocka_unit_test(malformed_json_names_line_and_column),
        cmocka_unit_test(state_dict_names_decode_to_the_lesson_layout),
        cmocka_unit_test(per_head_stacks_become_the_wide_layout),
        cmocka_unit_test(binary_tensors_decode_to_the_same_numbers),
        cmocka_unit_test(defaults_are_one_head_float64_and_output_plus_weights),
        cmocka_unit_test(encoded_tensors_nest_by_shape),
        cmocka_unit_test(large_tensors_encode_the_same_on_several_threads),
        cmocka_unit_test(a_chain_keeps_adopted_pieces_as_parts_of_their_own),
        cmocka_unit_test(a_reply_in_parts_joins_into_one_body),
        cmocka_unit_test(fast_parser_takes_well_formed_bodies_and_nothing_else),
        cmocka_unit_test(fast_parser_matches_jansson_bit_for_bit),
        cmocka_unit_test(base64_round_trips_every_length_and_refuses_the_rest),
        cmocka_unit_test(a_thread_hands_a_freed_block_out_again),
        cmocka_unit_test(a_block_kept_by_one_thread_is_not_another_threads),
        cmocka_unit_test(a_thread_keeps_at_most_its_slots),
    };
    return cmocka_run_group_tests_name("server units", tests, NULL, NULL);
}
