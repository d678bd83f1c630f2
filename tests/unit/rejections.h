/*
 * rejections.h - bodies the decoder refuses, each with the status, code and
 * JSON Pointer of its answer, and words its detail must hold when the row
 * gives them (how to fix it): test_decode.c checks each answer,
 * test_parse_fast.c that the fast parser decides each as jansson does.
 */
#ifndef TESTS_REJECTIONS_H
#define TESTS_REJECTIONS_H

#include "tests/unit/request_fixtures.h"

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

/* A refusal whose detail says how to fix it: the words it must hold. */
typedef struct {
    rejection answer;
    const char *detail;
} hinted_rejection;

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
    {"{\"x\":[[1,2]],\"dtype\":\"float8\"," VALID_TAIL "}", 400,
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
    /* two wrong fields: the schema's earlier row is named, whatever the
     * body's order (num_heads before causal) */
    {"{\"causal\":1,\"x\":[[1,2]],\"num_heads\":0," VALID_TAIL "}", 400,
     "invalid_num_heads", "/num_heads"},
    {"{\"x\":[[1,2]],\"causal\":1,\"num_heads\":\"2\"," VALID_TAIL "}", 400,
     "wrong_type", "/num_heads"},
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
    {"{\"x\":[[1,2]],\"num_heads\":1,\"layout\":\"torch\",\"w_q\":[[1,1]],"
     "\"w_k\":[[1,1]],\"w_v\":[[1],[1]]}",
     400, "shape_mismatch", "/w_v"},
    {"{\"x\":[[1,2]],\"in_proj_weight\":[[1,2],[1,2],[1,2]]," VALID_TAIL "}",
     400, "conflicting_fields", "/in_proj_weight"},
    {"{\"x\":[[1,2]],\"num_heads\":1,\"in_proj_weight\":[[1,2],[1,2]]}", 400,
     "shape_mismatch", "/in_proj_weight"},
    {"{\"x\":[[1,2]],\"num_heads\":1,\"in_proj_weight\":[[1,2],[1,2],[1,2]],"
     "\"in_proj_bias\":[1,2]}",
     400, "shape_mismatch", "/in_proj_bias"},
    {"{\"x\":[[1,2]],\"q_proj_weight\":[[1,2]],\"w_k\":[[1],[1]]}", 400,
     "missing_field", "/w_v"},
    {"{\"x\":[[1,2]],\"w_o\":[[1]],\"out_proj_weight\":[[1]]," VALID_TAIL "}",
     400, "conflicting_fields", "/out_proj_weight"},
    {"{\"x\":[[1,2]],\"out_proj_weight\":[[1]],\"out_proj.weight\":[[1]]"
     "," VALID_TAIL "}",
     400, "conflicting_fields", "/out_proj.weight"},
    {"{\"x\":[[1,2]],\"b_o\":[1],\"out_proj.bias\":[1]," VALID_TAIL "}", 400,
     "conflicting_fields", "/out_proj.bias"},
    /* −∞ is taken in an additive mask only; NaN and +∞ nowhere */
    {"{\"x\":[[1,2],[3,4]],\"mask\":{\"shape\":[2,2],\"base64\":"
     "\"AAAAAAAAAAAAAAAAAADwfwAAAAAAAAAAAAAAAAAAAAA=\"}," VALID_TAIL "}",
     400, "number_out_of_range", "/mask/base64"},
    {"{\"x\":{\"shape\":[1,2],\"base64\":\"AAAAAAAA8D8AAAAAAADw/"
     "w==\"}," VALID_TAIL "}",
     400, "number_out_of_range", "/x/base64"},
    /* PyTorch's mask names beside ours; a batch's (N·h, L, S) attn_mask */
    {"{\"x\":[[1,2]],\"mask\":[[true]],\"attn_mask\":[[false]]," VALID_TAIL "}",
     400, "conflicting_fields", "/attn_mask"},
    /* need_weights names the stages as return does */
    {"{\"x\":[[1,2]],\"need_weights\":false,\"return\":[\"output\"]," VALID_TAIL
     "}",
     400, "conflicting_fields", "/need_weights"},
    {"{\"x\":[[1,2]],\"need_weights\":0," VALID_TAIL "}", 400, "wrong_type",
     "/need_weights"},
    {"{\"x\":[[1,2]],\"key_padding\":[false],\"key_padding_mask\":[false]"
     "," VALID_TAIL "}",
     400, "conflicting_fields", "/key_padding_mask"},
    {"{\"x\":[[1,2]],\"causal\":true,\"is_causal\":true," VALID_TAIL "}", 400,
     "conflicting_fields", "/is_causal"},
    {"{\"x\":[[[1,2]],[[3,4]]],\"attn_mask\":[[[true]],[[true]],[[true]]]"
     "," VALID_TAIL "}",
     400, "shape_mismatch", "/attn_mask"},
    /* with q, k and v attn_mask broadcasts: each dimension the scores' or 1 */
    {"{\"q\":[[[[1]]],[[[1]]]],\"k\":[[[[1]]],[[[1]]]],\"v\":[[[[1]]],[[[1]]]],"
     "\"attn_mask\":[[[true]],[[true]]]}",
     400, "shape_mismatch", "/attn_mask"},
    {"{\"q\":[[[1]]],\"k\":[[[1]]],\"v\":[[[1]]],"
     "\"attn_mask\":[[[[true]]]]}",
     400, "shape_mismatch", "/attn_mask"},
    {"{\"q\":[[[1]]],\"k\":[[[1],[2]]],\"v\":[[[1],[2]]],"
     "\"attn_mask\":[[true,true,true]]}",
     400, "shape_mismatch", "/attn_mask"},
    /* a float key_padding_mask: NaN and +∞ refused, as in every mask */
    {"{\"x\":[[1,2]],\"key_padding_mask\":{\"shape\":[1],\"base64\":"
     "\"AAAAAAAA8H8=\"}," VALID_TAIL "}",
     400, "number_out_of_range", "/key_padding_mask/base64"},
    {"{\"x\":[[1,2]],\"key_padding\":[0.5]," VALID_TAIL "}", 400, "wrong_type",
     "/key_padding/0"},
    /* add_bias_kv and add_zero_attn: 422, not computed */
    {"{\"x\":[[1,2]],\"bias_k\":[[[1]]]," VALID_TAIL "}", 422,
     "unsupported_option", "/bias_k"},
    {"{\"x\":[[1,2]],\"state_dict\":{\"m.bias_v\":[[[1]]]}," VALID_TAIL "}",
     422, "unsupported_option", "/state_dict/m.bias_v"},
    {"{\"x\":[[1,2]],\"add_zero_attn\":true," VALID_TAIL "}", 422,
     "unsupported_option", "/add_zero_attn"},
    /* batch_first is the module's: true or false, and not with q, k, v */
    {"{\"x\":[[1,2]],\"batch_first\":0," VALID_TAIL "}", 400, "wrong_type",
     "/batch_first"},
    {"{\"q\":[[[1]]],\"k\":[[[1]]],\"v\":[[[1]]],\"batch_first\":true}", 400,
     "conflicting_fields", "/batch_first"},
    /* state_dict: one module's keys, each once, errors at its key */
    {"{\"x\":[[1,2]],\"state_dict\":{\"a.out_proj.bias\":[1],"
     "\"b.in_proj_bias\":[[1]]}}",
     400, "conflicting_fields", "/state_dict/b.in_proj_bias"},
    {"{\"x\":[[1,2]],\"state_dict\":{\"a.linear1.weight\":[[1]]}}", 400,
     "unknown_field", "/state_dict/a.linear1.weight"},
    {"{\"x\":[[1,2]],\"state_dict\":{\"a.in_proj_bias\":[[1],[2]]}}", 400,
     "wrong_rank", "/state_dict/a.in_proj_bias/0"},
    {"{\"x\":[[1,2]],\"in_proj_bias\":[1],\"state_dict\":{\"in_proj_bias\":[1]}"
     "}",
     400, "conflicting_fields", "/state_dict/in_proj_bias"},
    {"{\"x\":[[1,2]],\"state_dict\":[1]}", 400, "wrong_type", "/state_dict"},
    {"{\"x\":[[1,2]],\"num_heads\":1,\"state_dict\":{\"m.in_proj_weight\":"
     "[[1,0],[0,1],[1,0],"
     "[0,1],[1,0],[0,1]],\"m.in_proj_bias\":[1,2]}}",
     400, "shape_mismatch", "/state_dict/m.in_proj_bias"},
    /* sequence first: context (S, N, E) holds as many sequences as x */
    {"{\"x\":[[[1,2]],[[3,4]]],\"context\":[[[1,2],[3,4],[5,6]]],"
     "\"batch_first\":false," VALID_TAIL "}",
     400, "shape_mismatch", "/context"},
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

static const hinted_rejection hinted_rejections[] = {
    /* unknown names: the one most likely meant, from the schema's names */
    {{"{\"x\":[[1,2]],\"W_q\":1," VALID_TAIL "}", 400, "unknown_field", "/W_q"},
     "did you mean \"w_q\"?"},
    {{"{\"x\":[[1,2]],\"num_head\":1," VALID_TAIL "}", 400, "unknown_field",
      "/num_head"},
     "did you mean \"num_heads\"?"},
    {{"{\"x\":[[1,2]],\"in_proj_weigth\":[[1]]," VALID_TAIL "}", 400,
      "unknown_field", "/in_proj_weigth"},
     "did you mean \"in_proj_weight\"?"},
    /* a weight whose transpose fits: the layout it was written in */
    {{"{\"x\":[[1,2]],\"w_q\":[[1,0],[0,1],[1,1]],\"w_k\":" LESSON_W
      ",\"w_v\":" LESSON_W "}",
      400, "shape_mismatch", "/w_q"},
     "its transpose fits: is it out×in, as PyTorch's nn.Linear.weight? then "
     "send \"layout\": \"torch\""},
    {{"{\"x\":[[1,2]],\"num_heads\":1,\"layout\":\"torch\","
      "\"w_q\":[[1,0,0],[0,1,0]],\"w_k\":[[1,0],[0,1]],\"w_v\":[[1,0],[0,1]]}",
      400, "shape_mismatch", "/w_q"},
     "then leave \"layout\" out"},
    {{"{\"x\":[[1,2]],\"num_heads\":1,\"q_proj_weight\":[[1,0,0],[0,1,0]],"
      "\"k_proj_weight\":[[1,0],[0,1]],\"v_proj_weight\":[[1,0],[0,1]]}",
      400, "shape_mismatch", "/q_proj_weight"},
     "PyTorch's names are out×in"},
    /* bytes that are as many numbers of the other dtype */
    {{"{\"x\":{\"shape\":[1,2],\"base64\":\"AACAPwAAAEA=\"}," VALID_TAIL "}",
      400, "shape_mismatch", "/x/base64"},
     "float32 numbers: send \"dtype\": \"float32\""},
    {{"{\"x\":{\"shape\":[1,2],\"base64\":\"AAAAAAAA8D8AAAAAAAAAQA==\"},"
      "\"dtype\":\"float32\"," VALID_TAIL "}",
      400, "shape_mismatch", "/x/base64"},
     "float64 numbers: leave \"dtype\" out"},
    {{"{\"x\":{\"shape\":[1,2],\"base64\":\"ADwAQA==\"}," VALID_TAIL "}", 400,
      "shape_mismatch", "/x/base64"},
     "16-bit numbers: send \"dtype\": \"float16\" or \"bfloat16\""},
    /* a number past a 16-bit dtype's range: the type's largest */
    {{"{\"x\":[[1,1e5]],\"dtype\":\"float16\"," VALID_TAIL "}", 400,
      "number_out_of_range", "/x/0/1"},
     "100000 does not fit in float16 (largest 65504)"},
    {{"{\"x\":[[1e39,2]],\"dtype\":\"bfloat16\"," VALID_TAIL "}", 400,
      "number_out_of_range", "/x/0/0"},
     "does not fit in bfloat16 (largest 3.38953e+38)"},
    /* NaN is no mask's −∞: where to look for it */
    {{"{\"x\":[[NaN,2]]," VALID_TAIL "}", 400, "invalid_json", ""},
     "a NaN has no place in a softmax"},
    {{"{\"x\":[[Infinity,2]]," VALID_TAIL "}", 400, "invalid_json", ""},
     "only −∞ hides a key"},
    /* a model's state_dict: the attention module "module" names, or the
     * one there is; other modules' keys are ignored */
    {{"{\"x\":[[1,2]],\"num_heads\":1,\"state_dict\":{"
      "\"layers.0.self_attn.in_proj_weight\":[[1]],"
      "\"layers.1.self_attn.in_proj_weight\":[[1]]}}",
      400, "missing_field", "/module"},
     "2 attention modules, \"layers.0.self_attn\", \"layers.1.self_attn\": "
     "name the one to compute with \"module\""},
    {{"{\"x\":[[1,2]],\"num_heads\":1,\"module\":\"layers.2.self_attn\","
      "\"state_dict\":{\"layers.0.self_attn.in_proj_weight\":[[1]],"
      "\"layers.1.self_attn.in_proj_weight\":[[1]]}}",
      400, "invalid_module", "/module"},
     "its attention modules are \"layers.0.self_attn\", "
     "\"layers.1.self_attn\""},
    {{"{\"x\":[[1,2]],\"num_heads\":1,\"module\":\"layers.1.self_attn\","
      "\"state_dict\":{\"layers.0.self_attn.in_proj_weight\":[[1]],"
      "\"layers.1.linear1.weight\":[[1]],"
      "\"layers.1.self_attn.in_proj_weight\":[[1],[2],[3],[4],[5],[6]]}}",
      400, "shape_mismatch", "/state_dict/layers.1.self_attn.in_proj_weight"},
     "in_proj_weight has 1 columns but x has 2"},
    {{"{\"x\":[[1,2]],\"module\":\"layers.1.self_attn\"," VALID_TAIL "}", 400,
      "missing_field", "/state_dict"},
     "module names an attention module of state_dict"},
    {{"{\"x\":[[1,2]],\"module\":1," VALID_TAIL "}", 400, "wrong_type",
      "/module"},
     "module is a string"},
    /* PyTorch keeps the head count outside its weights: its forms say it */
    {{"{\"x\":[[1,2]],\"in_proj_weight\":[[1,0],[0,1],[1,0],[0,1],[1,0],"
      "[0,1]]}",
      400, "missing_field", "/num_heads"},
     "outside the state_dict, in nn.MultiheadAttention(embed_dim, num_heads)"},
    {{"{\"x\":[[1,2]],\"state_dict\":{\"layers.0.self_attn.in_proj_weight\":"
      "[[1,0],[0,1],[1,0],[0,1],[1,0],[0,1]]}}",
      400, "missing_field", "/num_heads"},
     "PyTorch keeps the head count"},
    {{"{\"x\":[[1,2]],\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0],[0,1]],"
      "\"w_v\":[[1,0],[0,1]],\"out_proj.weight\":[[1,0],[0,1]]}",
      400, "missing_field", "/num_heads"},
     "out_proj.weight"},
    {{"{\"x\":[[1,2]],\"layout\":\"torch\"," VALID_TAIL "}", 400,
      "missing_field", "/num_heads"},
     "\"layout\": \"torch\""},
    /* and its batches sequence first by default, ours batch first */
    {{"{\"x\":[[[1,2]],[[3,4]]],\"num_heads\":1,\"in_proj_weight\":[[1,0],"
      "[0,1],[1,0],[0,1],[1,0],[0,1]]}",
      400, "missing_field", "/batch_first"},
     "nn.MultiheadAttention takes (L, N, E) by default"},
};

#endif
