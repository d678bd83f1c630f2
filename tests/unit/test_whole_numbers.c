/*
 * test_whole_numbers.c - whole numbers are taken exactly or refused: a
 * position, or /v2 integer data, that a double cannot hold (2^53 and past)
 * is refused with the number as the client wrote it, on both parsers of
 * /v1 and /v2, in JSON and in binary data; /v2's integer datatypes (INT8
 * to INT64, UINT8 to UINT64) hold exactly their own range, and
 * whole-number inputs take only them; and a whole number must be written as
 * one: a fraction a double rounds away is refused wherever a whole number
 * belongs (whole_literals.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/error_codes.h"
#include "server/json/decode.h"
#include "server/oip/oip_codec.h"
#include "tests/unit/request_fixtures.h"

#include <stdio.h>
#include <string.h>

/* Decodes a /v1 body with the fast parser and with jansson only; both must
 * refuse it with code, pointer and a detail holding `words`. */
static void v1_refuses(const char *body, error_code code, const char *pointer,
                       const char *words)
{
    for (int jansson = 0; jansson < 2; jansson++) {
        decode_options options = {NULL, SIZE_MAX, jansson == 1};
        api_request req;
        codec_error err;
        bool ok =
            decode_request(body, strlen(body), &limits, &options, &req, &err);
        if (ok || err.code != code || strcmp(err.pointer, pointer) != 0 ||
            !strstr(err.detail, words))
            fail_msg("%s (jansson %d): ok %d, '%s' %s", body, jansson, ok,
                     err.pointer, err.detail);
    }
}

static void v1_takes(const char *body)
{
    for (int jansson = 0; jansson < 2; jansson++) {
        decode_options options = {NULL, SIZE_MAX, jansson == 1};
        api_request req;
        codec_error err;
        if (!decode_request(body, strlen(body), &limits, &options, &req, &err))
            fail_msg("%s (jansson %d): %s", body, jansson, err.detail);
        api_request_free(&req);
    }
}

static void positions_past_2_to_53_are_refused_as_written(void **state)
{
    (void)state;
    /* 2^53 + 1 reads as 2^53: refused, and quoted with its last digit */
    v1_refuses("{\"x\":[[1,2],[3,4],[5,6]],\"positions\":[0, 1, "
               "9007199254740993 ]," VALID_TAIL "}",
               ERR_INVALID_POSITIONS, "/positions/2", "got 9007199254740993");
    v1_refuses("{\"x\":[[1,2]],\"positions\":[9007199254740992]," VALID_TAIL
               "}",
               ERR_INVALID_POSITIONS, "/positions/0", "got 9007199254740992");
    v1_refuses(
        "{\"x\":[[1,2]],\"positions\":[9.007199254740993e15]," VALID_TAIL "}",
        ERR_INVALID_POSITIONS, "/positions/0", "got 9.007199254740993e15");
    v1_refuses("{\"x\":[[1,2]],\"positions\":[1e300]," VALID_TAIL "}",
               ERR_INVALID_POSITIONS, "/positions/0", "got 1e300");
    v1_refuses("{\"x\":[[1,2]],\"positions\":[2.50]," VALID_TAIL "}",
               ERR_INVALID_POSITIONS, "/positions/0", "got 2.50");
    /* the largest that is exact, and its neighbours below, are taken */
    v1_takes("{\"x\":[[1,2],[3,4]],\"positions\":[9007199254740990, "
             "9007199254740991]," VALID_TAIL "}");
}

/* A /v2 request of x, the weights and one input `extra` (JSON), then the
 * request's members `members` (JSON, after a comma, or ""), followed by
 * `binary` bytes when given. */
static bool v2_decode_with(const char *extra, const char *members,
                           const void *binary, size_t binary_len,
                           codec_error *err, bool jansson)
{
    char json[2048];
    int len = snprintf(
        json, sizeof json,
        "{\"inputs\":[{\"name\":\"x\",\"shape\":[3,2],\"datatype\":\"FP64\","
        "\"data\":[1,0,0,1,1,1]},"
        "{\"name\":\"w_q\",\"shape\":[2,2],\"datatype\":\"FP64\",\"data\":"
        "[1,0,0,1]},{\"name\":\"w_k\",\"shape\":[2,2],\"datatype\":\"FP64\","
        "\"data\":[1,0,0,1]},{\"name\":\"w_v\",\"shape\":[2,2],\"datatype\":"
        "\"FP64\",\"data\":[1,0,0,1]},%s]%s}",
        extra, members);
    assert_true(len > 0 && (size_t)len + binary_len < sizeof json);
    char body[2048];
    memcpy(body, json, (size_t)len);
    if (binary_len)
        memcpy(body + len, binary, binary_len);
    size_t total = (size_t)len + binary_len;
    api_request req;
    oip_reply_plan plan;
    bool ok = jansson ? oip_decode_jansson(body, total, (size_t)len, &limits,
                                           &req, &plan, err)
                      : oip_decode(body, total, (size_t)len, &limits, &req,
                                   &plan, err);
    if (ok) {
        api_request_free(&req);
        oip_reply_plan_free(&plan);
    }
    return ok;
}

static bool v2_decode(const char *extra, const void *binary, size_t binary_len,
                      codec_error *err, bool jansson)
{
    return v2_decode_with(extra, "", binary, binary_len, err, jansson);
}

static void v2_refuses(const char *extra, const void *binary, size_t len,
                       error_code code, const char *pointer, const char *words)
{
    for (int jansson = 0; jansson < 2; jansson++) {
        codec_error err;
        bool ok = v2_decode(extra, binary, len, &err, jansson);
        if (ok || err.code != code || strcmp(err.pointer, pointer) != 0 ||
            !strstr(err.detail, words))
            fail_msg("%s (jansson %d): ok %d, '%s' %s", extra, jansson, ok,
                     err.pointer, err.detail);
    }
}

static void v2_takes(const char *extra, const void *binary, size_t len)
{
    for (int jansson = 0; jansson < 2; jansson++) {
        codec_error err;
        if (!v2_decode(extra, binary, len, &err, jansson))
            fail_msg("%s (jansson %d): %s", extra, jansson, err.detail);
    }
}

#define POSITIONS(type, data)                                                  \
    "{\"name\":\"positions\",\"shape\":[3],\"datatype\":\"" type               \
    "\",\"data\":" data "}"
#define BINARY_POSITIONS(type, bytes)                                          \
    "{\"name\":\"positions\",\"shape\":[3],\"datatype\":\"" type               \
    "\",\"parameters\":{\"binary_data_size\":" bytes "}}"

static void v2_integer_data_past_2_to_53_is_refused_as_written(void **state)
{
    (void)state;
    v2_refuses(POSITIONS("INT64", "[0, 1, 9007199254740993]"), NULL, 0,
               ERR_WRONG_TYPE, "/inputs/4/data/2",
               "from -9007199254740991 to 9007199254740991, found "
               "9007199254740993");
    v2_refuses(POSITIONS("UINT64", "[0, 1, 9007199254740992]"), NULL, 0,
               ERR_WRONG_TYPE, "/inputs/4/data/2",
               "from 0 to 9007199254740991, found 9007199254740992");
    uint64_t wide[3] = {0, 1, ((uint64_t)1 << 53) + 1};
    v2_refuses(BINARY_POSITIONS("UINT64", "24"), wide, sizeof wide,
               ERR_NUMBER_OUT_OF_RANGE, "/inputs/4/parameters/binary_data_size",
               "element 2 is 9007199254740993");
    int64_t negative[3] = {0, 1, -(int64_t)((uint64_t)1 << 53)};
    v2_refuses(BINARY_POSITIONS("INT64", "24"), negative, sizeof negative,
               ERR_NUMBER_OUT_OF_RANGE, "/inputs/4/parameters/binary_data_size",
               "element 2 is -9007199254740992");
    int64_t largest[3] = {0, 1, ((int64_t)1 << 53) - 1};
    v2_takes(BINARY_POSITIONS("INT64", "24"), largest, sizeof largest);
}

static void v2_unsigned_and_small_integers_hold_their_own_range(void **state)
{
    (void)state;
    v2_takes(POSITIONS("UINT8", "[0, 1, 255]"), NULL, 0);
    v2_takes(POSITIONS("UINT16", "[0, 1, 65535]"), NULL, 0);
    v2_takes(POSITIONS("UINT32", "[0, 1, 4294967295]"), NULL, 0);
    v2_takes(POSITIONS("INT8", "[0, 1, 127]"), NULL, 0);
    v2_takes(POSITIONS("INT16", "[0, 1, 32767]"), NULL, 0);
    v2_refuses(POSITIONS("UINT8", "[0, 1, 256]"), NULL, 0, ERR_WRONG_TYPE,
               "/inputs/4/data/2",
               "UINT8: expected a whole number from 0 "
               "to 255, found 256");
    v2_refuses(POSITIONS("UINT32", "[0, -1, 2]"), NULL, 0, ERR_WRONG_TYPE,
               "/inputs/4/data/1", "from 0 to 4294967295, found -1");
    v2_refuses(POSITIONS("INT8", "[0, 1, 128]"), NULL, 0, ERR_WRONG_TYPE,
               "/inputs/4/data/2", "from -128 to 127, found 128");
    v2_refuses(POSITIONS("INT16", "[0, 1, -32769]"), NULL, 0, ERR_WRONG_TYPE,
               "/inputs/4/data/2", "from -32768 to 32767, found -32769");
    /* binary: little-endian, each of its own width */
    uint8_t bytes[3] = {0, 1, 255};
    v2_takes(BINARY_POSITIONS("UINT8", "3"), bytes, sizeof bytes);
    uint16_t halves[3] = {0, 1, 65535};
    v2_takes(BINARY_POSITIONS("UINT16", "6"), halves, sizeof halves);
    uint32_t words[3] = {0, 1, 4294967295u};
    v2_takes(BINARY_POSITIONS("UINT32", "12"), words, sizeof words);
    int8_t signed_bytes[3] = {0, 1, -1}; /* refused by positions: < 0 */
    v2_refuses(BINARY_POSITIONS("INT8", "3"), signed_bytes, sizeof signed_bytes,
               ERR_INVALID_POSITIONS, "/inputs/4", "got -1");
}

static void whole_number_inputs_take_integer_datatypes_only(void **state)
{
    (void)state;
    v2_refuses(POSITIONS("FP64", "[0, 1, 2]"), NULL, 0, ERR_INVALID_DATATYPE,
               "/inputs/4/datatype",
               "input positions: datatype FP64 is not taken; positions takes "
               "INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8");
    v2_refuses(POSITIONS("FP32", "[0, 1, 2]"), NULL, 0, ERR_INVALID_DATATYPE,
               "/inputs/4/datatype", "datatype FP32 is not taken");
    v2_refuses("{\"name\":\"mask\",\"shape\":[3,3],\"datatype\":"
               "\"UINT8\",\"data\":[0,0,0,0,0,0,0,0,0]}",
               NULL, 0, ERR_INVALID_DATATYPE, "/inputs/4/datatype",
               "mask takes BOOL, FP64, FP32, FP16 or BF16");
}

/* "…, and X is not one, though a double rounds it to Y" */
#define ROUNDED(sent, read)                                                    \
    sent " is not one, though a double rounds it to " read

/* A fraction a double rounds away (more digits than it keeps, or a number
 * below its smallest) is refused wherever a whole number belongs, quoted as
 * sent; a whole number written with a point or an exponent is taken. */
static void v1_whole_fields_refuse_a_fraction_a_double_rounds_away(void **s)
{
    (void)s;
    v1_refuses("{\"x\":[[1,2],[3,4]],\"positions\":[0, "
               "1.00000000000000001]," VALID_TAIL "}",
               ERR_INVALID_POSITIONS, "/positions/1",
               ROUNDED("1.00000000000000001", "1"));
    v1_refuses(
        "{\"x\":[[1,2],[3,4]],\"positions\":[4503599627370496.5, 0]," VALID_TAIL
        "}",
        ERR_INVALID_POSITIONS, "/positions/0",
        ROUNDED("4503599627370496.5", "4503599627370496"));
    v1_refuses("{\"x\":[[1,2],[3,4]],\"positions\":[1e-400, 1]," VALID_TAIL "}",
               ERR_INVALID_POSITIONS, "/positions/0", ROUNDED("1e-400", "0"));
    v1_refuses("{\"x\":[[1,2]],\"num_heads\":2,\"heads\":["
               "0.99999999999999999]," VALID_TAIL "}",
               ERR_INVALID_HEADS, "/heads/0",
               ROUNDED("0.99999999999999999", "1"));
    v1_refuses("{\"x\":[[1,2]],\"num_heads\":2.00000000000000001," VALID_TAIL
               "}",
               ERR_INVALID_NUM_HEADS, "/num_heads",
               ROUNDED("2.00000000000000001", "2"));
    v1_refuses(
        "{\"x\":[[1,2]],\"rope\":{\"dims\":2.00000000000000001}," VALID_TAIL
        "}",
        ERR_INVALID_ROPE, "/rope/dims", ROUNDED("2.00000000000000001", "2"));
    /* a binary tensor's shape: (1, 2) float64, 16 zero bytes */
    v1_refuses("{\"x\":{\"shape\":[1.00000000000000001,2],\"base64\":"
               "\"AAAAAAAAAAAAAAAAAAAAAA==\"}," VALID_TAIL "}",
               ERR_WRONG_TYPE, "/x/shape/0",
               ROUNDED("1.00000000000000001", "1"));
    /* whole numbers however written, and any number where any may stand */
    v1_takes("{\"x\":[[0.99999999999999999,1e-400],[3,4]],\"positions\":"
             "[0.0, 1e0],\"num_heads\":2.0,\"heads\":[10e-1],\"rope\":"
             "{\"dims\":2.0}," VALID_TAIL "}");
}

static void v2_whole_values_refuse_a_fraction_a_double_rounds_away(void **s)
{
    (void)s;
    v2_refuses(POSITIONS("INT64", "[0, 1, 2.00000000000000001]"), NULL, 0,
               ERR_WRONG_TYPE, "/inputs/4/data/2",
               ROUNDED("2.00000000000000001", "2"));
    v2_refuses("{\"name\":\"positions\",\"shape\":[3.00000000000000001],"
               "\"datatype\":\"INT64\",\"data\":[0,1,2]}",
               NULL, 0, ERR_WRONG_TYPE, "/inputs/4/shape/0",
               ROUNDED("3.00000000000000001", "3"));
    int64_t positions[3] = {0, 1, 2};
    v2_refuses(BINARY_POSITIONS("INT64", "24.000000000000001"), positions,
               sizeof positions, ERR_WRONG_TYPE,
               "/inputs/4/parameters/binary_data_size",
               ROUNDED("24.000000000000001", "24"));
    v2_takes(POSITIONS("INT64", "[0.0, 1e0, 20e-1]"), NULL, 0);
    const struct {
        const char *members, *pointer;
        error_code code;
    } parameters[] = {
        {",\"parameters\":{\"num_heads\":1.00000000000000001}",
         "/parameters/num_heads", ERR_INVALID_NUM_HEADS},
        {",\"parameters\":{\"rope\":{\"dims\":2.00000000000000001}}",
         "/parameters/rope/dims", ERR_INVALID_ROPE},
        {",\"parameters\":{\"timeout\":1000000.00000000001}",
         "/parameters/timeout", ERR_WRONG_TYPE},
    };
    for (size_t i = 0; i < sizeof parameters / sizeof *parameters; i++)
        for (int jansson = 0; jansson < 2; jansson++) {
            codec_error err;
            bool ok =
                v2_decode_with(POSITIONS("INT64", "[0, 1, 2]"),
                               parameters[i].members, NULL, 0, &err, jansson);
            if (ok || err.code != parameters[i].code ||
                strcmp(err.pointer, parameters[i].pointer) != 0 ||
                !strstr(err.detail, "though a double rounds it to"))
                fail_msg("%s (jansson %d): ok %d, '%s' %s",
                         parameters[i].members, jansson, ok, err.pointer,
                         err.detail);
        }
    codec_error err;
    for (int jansson = 0; jansson < 2; jansson++)
        if (!v2_decode_with(POSITIONS("INT64", "[0, 1, 2]"),
                            ",\"parameters\":{\"num_heads\":1.0,"
                            "\"timeout\":1e6}",
                            NULL, 0, &err, jansson))
            fail_msg("whole parameters as reals (jansson %d): %s", jansson,
                     err.detail);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(positions_past_2_to_53_are_refused_as_written),
        cmocka_unit_test(v2_integer_data_past_2_to_53_is_refused_as_written),
        cmocka_unit_test(v2_unsigned_and_small_integers_hold_their_own_range),
        cmocka_unit_test(whole_number_inputs_take_integer_datatypes_only),
        cmocka_unit_test(
            v1_whole_fields_refuse_a_fraction_a_double_rounds_away),
        cmocka_unit_test(
            v2_whole_values_refuse_a_fraction_a_double_rounds_away),
    };
    return cmocka_run_group_tests_name("whole_numbers", tests, NULL, NULL);
}
