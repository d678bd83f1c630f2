/*
 * test_decode.c - server/json/decode: the decoder accepts what the API
 * allows and refuses everything else with the right status, code and JSON
 * Pointer; what it accepts becomes the core's problem, in the lessons'
 * layout whatever form the weights came in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/base/error_codes.h"
#include "server/json/decode.h"
#include "server/oip/oip_codec.h"
#include "server/request/schema.h"
#include "tests/unit/rejections.h"

#include <stdio.h>
#include <string.h>

/* The answer to r's body: its status, code and pointer, and words its detail
 * must hold (NULL: any). */
static void expect_refusal(const rejection *r, const char *detail)
{
    api_request req;
    codec_error err;
    bool ok =
        decode_request(r->body, strlen(r->body), &limits, NULL, &req, &err);
    const error_code_row *got = error_code_info(ok ? ERR_NONE : err.code);
    if (ok || got->status != r->status || strcmp(got->name, r->code) != 0 ||
        strcmp(err.pointer, r->pointer) != 0 ||
        (detail && !strstr(err.detail, detail)))
        fail_msg("body %s: got ok=%d %u %s '%s' (%s), want %u %s '%s' (%s)",
                 r->body, ok, got->status, ok ? "" : got->name, err.pointer,
                 err.detail, r->status, r->code, r->pointer,
                 detail ? detail : "");
}

static void every_bad_request_gets_its_code_and_pointer(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rejections / sizeof *rejections; i++)
        expect_refusal(&rejections[i], NULL);
}

/* A refusal with a hint says it: the words the table gives. */
static void every_hinted_refusal_says_how_to_fix_it(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hinted_rejections / sizeof *hinted_rejections;
         i++)
        expect_refusal(&hinted_rejections[i].answer,
                       hinted_rejections[i].detail);
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
    const char *torch =
        "{\"x\":[[1,2]],\"num_heads\":1,\"in_proj_weight\":[[1,2],[3,4],"
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

/* state_dict() writes the output projection as "out_proj.weight" and
 * "out_proj.bias": those keys give W_o and b_o as their underscored names
 * do. */
static void state_dict_keys_with_dots_give_the_output_projection(void **state)
{
    (void)state;
    const char *dots = "{\"x\":[[1,2]],\"num_heads\":1,\"w_q\":[[1,0],[0,1]],"
                       "\"w_k\":[[1,0],[0,1]],\"w_v\":[[1,0],[0,1]],"
                       "\"out_proj.weight\":[[1,2],[3,4]],"
                       "\"out_proj.bias\":[7,8]}";
    const char *underscores =
        "{\"x\":[[1,2]],\"num_heads\":1,\"w_q\":[[1,0],[0,1]],"
        "\"w_k\":[[1,0],[0,1]],\"w_v\":[[1,0],[0,1]],"
        "\"out_proj_weight\":[[1,2],[3,4]],"
        "\"out_proj_bias\":[7,8]}";
    api_request a, b;
    codec_error err;
    assert_true(decode_request(dots, strlen(dots), &limits, NULL, &a, &err));
    assert_true(decode_request(underscores, strlen(underscores), &limits, NULL,
                               &b, &err));
    assert_non_null(a.w_o);
    assert_memory_equal(a.w_o, b.w_o, 4 * sizeof(double));
    assert_memory_equal(a.b_o, b.b_o, 2 * sizeof(double));
    api_request_free(&a);
    api_request_free(&b);
}

#define IDENTITY_WEIGHTS                                                       \
    "\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0],[0,1]],\"w_v\":[[1,0],[0,1]]"

/* The allow mask (1 = may attend) a request decodes to: false when it
 * does not decode or has none; n_allow bytes of it are copied to out. */
static bool allow_of(const char *body, uint8_t *out, size_t n_allow)
{
    api_request req;
    codec_error err;
    if (!decode_request(body, strlen(body), &limits, NULL, &req, &err))
        return false;
    bool ok = req.problem.allow != NULL;
    if (ok)
        memcpy(out, req.problem.allow, n_allow);
    api_request_free(&req);
    return ok;
}

/* attn_mask means what the mirrored function means: projecting x, as
 * nn.MultiheadAttention (true = masked out), the inverse of our mask; with
 * q, k and v, as scaled_dot_product_attention (true = may attend), ours. */
static void attn_mask_takes_the_sense_of_the_mirrored_function(void **state)
{
    (void)state;
    uint8_t ours[4], module[4], function[4];
    const char *ours_body = "{\"x\":[[1,0],[0,1]]," IDENTITY_WEIGHTS
                            ",\"mask\":[[true,false],[true,true]]}";
    const char *module_body = "{\"x\":[[1,0],[0,1]]," IDENTITY_WEIGHTS
                              ",\"attn_mask\":[[false,true],[false,false]]}";
    const char *function_body = "{\"q\":[[[1,0],[0,1]]],\"k\":[[[1,0],[0,1]]],"
                                "\"v\":[[[1,0],[0,1]]],"
                                "\"attn_mask\":[[true,false],[true,true]]}";
    assert_true(allow_of(ours_body, ours, 4));
    assert_true(allow_of(module_body, module, 4));
    assert_true(allow_of(function_body, function, 4));
    assert_memory_equal(ours, module, 4);
    assert_memory_equal(ours, function, 4);
}

/* In a batch, nn.MultiheadAttention's 3-D attn_mask is (N·h, L, S): the
 * (N, h, L, S) mask, inverted. */
static void
a_batch_attn_mask_of_n_times_h_planes_is_per_sequence_and_head(void **state)
{
    (void)state;
    uint8_t ours[4], module[4];
    const char *ours_body =
        "{\"x\":[[[1,0]],[[0,1]]],\"num_heads\":2," IDENTITY_WEIGHTS
        ",\"mask\":[[[[true]],[[false]]],"
        "[[[false]],[[true]]]]}";
    const char *module_body =
        "{\"x\":[[[1,0]],[[0,1]]],\"num_heads\":2," IDENTITY_WEIGHTS
        ",\"attn_mask\":[[[false]],"
        "[[true]],[[true]],[[false]]]}";
    assert_true(allow_of(ours_body, ours, 4));
    assert_true(allow_of(module_body, module, 4));
    assert_memory_equal(ours, module, 4);
}

/* An additive mask's −∞ (base64 carries it) hides its key: an allow mask
 * beside the numbers, which are 0 there. */
static void minus_infinity_in_an_additive_mask_hides_its_key(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,0],[0,1]]," IDENTITY_WEIGHTS
                       ",\"mask\":{\"shape\":[2,2],\"base64\":"
                       "\"AAAAAAAAAAAAAAAAAADw/wAAAAAAAAAAAAAAAAAAAAA=\"}}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    const uint8_t allow[4] = {1, 0, 1, 1};
    const double bias[4] = {0, 0, 0, 0};
    assert_non_null(req.problem.allow);
    assert_memory_equal(req.problem.allow, allow, 4);
    assert_memory_equal(req.problem.bias, bias, sizeof bias);
    api_request_free(&req);
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

/* need_weights false: output alone, as the module returns no weights;
 * true: the default stages. */
static void need_weights_false_returns_output_alone(void **state)
{
    (void)state;
    const char *without =
        "{\"x\":[[1,2]],\"need_weights\":false," VALID_TAIL "}";
    const char *with = "{\"x\":[[1,2]],\"need_weights\":true," VALID_TAIL "}";
    api_request req;
    codec_error err;
    assert_true(
        decode_request(without, strlen(without), &limits, NULL, &req, &err));
    assert_int_equal(req.want, ATTN_WANT(ATTN_OUTPUT));
    api_request_free(&req);
    assert_true(decode_request(with, strlen(with), &limits, NULL, &req, &err));
    assert_int_equal(req.want,
                     ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS));
    api_request_free(&req);
}

/* Every list of single values a request may hold, with a body that holds
 * it with an item repeated (its item 1 equal to its item 0) and is valid
 * otherwise; NULL for a field refused whatever it holds. */
#define TORCH_W "[[1,0],[0,1],[1,0],[0,1],[1,0],[0,1]]"
#define TORCH "\"x\":[[1,2],[3,4]],\"num_heads\":1,\"in_proj_weight\":" TORCH_W
static const struct {
    api_field field;
    const char *body;
} repeated_items[] = {
    {API_KEY_PADDING,
     "{\"x\":[[1,2],[3,4]],\"key_padding\":[true,true]," VALID_TAIL "}"},
    {API_RETURN,
     "{\"x\":[[1,2]],\"return\":[\"output\",\"output\"]," VALID_TAIL "}"},
    {API_TOKENS,
     "{\"x\":[[1,2],[3,4]],\"tokens\":[\"a\",\"a\"]," VALID_TAIL "}"},
    {API_CONTEXT_TOKENS, "{\"x\":[[1,2]],\"context\":[[1,2],[3,4]],"
                         "\"context_tokens\":[\"a\",\"a\"]," VALID_TAIL "}"},
    {API_B_Q, "{\"x\":[[1,2]],\"b_q\":[0,0,0,0]," VALID_TAIL "}"},
    {API_B_K, "{\"x\":[[1,2]],\"b_k\":[0,0,0,0]," VALID_TAIL "}"},
    {API_B_V, "{\"x\":[[1,2]],\"b_v\":[0,0,0,0]," VALID_TAIL "}"},
    {API_B_O, "{\"x\":[[1,2]],\"w_o\":[[1,0],[0,1],[1,0],[0,1]],"
              "\"b_o\":[0,0]," VALID_TAIL "}"},
    {API_IN_PROJ_BIAS, "{" TORCH ",\"in_proj_bias\":[0,0,0,0,0,0]}"},
    {API_OUT_PROJ_BIAS, "{" TORCH ",\"out_proj_weight\":[[1,0],[0,1]],"
                        "\"out_proj_bias\":[0,0]}"},
    {API_OUT_PROJ_DOT_BIAS, "{" TORCH ",\"out_proj.weight\":[[1,0],[0,1]],"
                            "\"out_proj.bias\":[0,0]}"},
    {API_POSITIONS, "{\"x\":[[1,2],[3,4]],\"positions\":[0,0]," VALID_TAIL "}"},
    {API_CONTEXT_POSITIONS, "{\"x\":[[1,2]],\"context\":[[1,2],[3,4]],"
                            "\"context_positions\":[0,0]," VALID_TAIL "}"},
    {API_ALIBI_SLOPES,
     "{\"x\":[[1,2]],\"num_heads\":2,\"alibi_slopes\":[0.5,0.5]," VALID_TAIL
     "}"},
    {API_HEADS,
     "{\"x\":[[1,2]],\"num_heads\":2,\"heads\":[0,0]," VALID_TAIL "}"},
    {API_KEY_PADDING_MASK, "{" TORCH ",\"key_padding_mask\":[false,false]}"},
    /* add_bias_kv's, refused whatever they hold (unsupported_option) */
    {API_BIAS_K, NULL},
    {API_BIAS_V, NULL},
};

/* A list whose row says its items differ (openapi.yaml's uniqueItems) is
 * refused with the row's code when one repeats, at the repeat; any other
 * list takes a repeated item.  So the contract and the rules agree. */
static void only_distinct_rows_refuse_a_repeated_item(void **state)
{
    (void)state;
    size_t count = sizeof repeated_items / sizeof *repeated_items;
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        const schema_field *row = &api_schema[f];
        bool list = row->kind == SCHEMA_STAGES || row->kind == SCHEMA_LABELS ||
                    (row->kind == SCHEMA_TENSOR && row->min_rank == 1);
        size_t i = 0;
        while (i < count && repeated_items[i].field != (api_field)f)
            i++;
        if (list && i == count)
            fail_msg("%s is a list: give it a body in repeated_items",
                     row->name);
        const char *body = i < count ? repeated_items[i].body : NULL;
        if (!body)
            continue;
        api_request req;
        codec_error err;
        bool ok = decode_request(body, strlen(body), &limits, NULL, &req, &err);
        char want[CODEC_POINTER_MAX + 2];
        snprintf(want, sizeof want, "/%s/1", row->name);
        if (row->distinct && (ok || err.code != row->invalid_code ||
                              strcmp(err.pointer, want) != 0))
            fail_msg("%s: a repeated item got ok=%d %s at '%s', want %s at %s",
                     row->name, ok, ok ? "" : error_code_info(err.code)->name,
                     ok ? "" : err.pointer,
                     error_code_info(row->invalid_code)->name, want);
        if (!row->distinct && !ok)
            fail_msg("%s: a repeated item refused, %s at '%s': %s", row->name,
                     error_code_info(err.code)->name, err.pointer, err.detail);
        if (ok)
            api_request_free(&req);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_bad_request_gets_its_code_and_pointer),
        cmocka_unit_test(every_hinted_refusal_says_how_to_fix_it),
        cmocka_unit_test(need_weights_false_returns_output_alone),
        cmocka_unit_test(only_distinct_rows_refuse_a_repeated_item),
        cmocka_unit_test(a_nul_byte_is_invalid_json),
        cmocka_unit_test(malformed_json_names_line_and_column),
        cmocka_unit_test(state_dict_names_decode_to_the_lesson_layout),
        cmocka_unit_test(state_dict_keys_with_dots_give_the_output_projection),
        cmocka_unit_test(attn_mask_takes_the_sense_of_the_mirrored_function),
        cmocka_unit_test(minus_infinity_in_an_additive_mask_hides_its_key),
        cmocka_unit_test(
            a_batch_attn_mask_of_n_times_h_planes_is_per_sequence_and_head),
        cmocka_unit_test(per_head_stacks_become_the_wide_layout),
        cmocka_unit_test(binary_tensors_decode_to_the_same_numbers),
        cmocka_unit_test(defaults_are_one_head_float64_and_output_plus_weights),
    };
    return cmocka_run_group_tests_name("decode", tests, NULL, NULL);
}
