#!/usr/bin/python3
"""Writes the committed seed corpus of the request fuzzer (tests/fuzz/corpus).

Deterministic (fixed seed): rerunning it rewrites the same files.  Seeds are
small lesson-like requests that the server accepts, and near misses, one per
way the issue says a body can be wrong, so the fuzzer starts next to every
branch of the validator.  Usage: make_corpus.py [OUT_DIR]
"""
import json
import os
import random
import sys

rng = random.Random(20240603)


def mat(rows, cols, lo=-2.0, hi=2.0):
    return [[round(rng.uniform(lo, hi), 3) for _ in range(cols)]
            for _ in range(rows)]


def stack(h, rows, cols):
    return [mat(rows, cols) for _ in range(h)]


def base(n=3, d=4, h=1, dk=None):
    dk = dk or d // h
    return {"x": mat(n, d), "w_q": mat(d, h * dk), "w_k": mat(d, h * dk),
            "w_v": mat(d, h * dk)}


valid = {}
valid["minimal_1x1"] = {"x": [[1]], "w_q": [[1]], "w_k": [[1]], "w_v": [[1]]}
valid["lesson_self"] = base()
valid["lesson_tokens"] = dict(base(4, 4), tokens=["the", "cat", "sat", "."])
r = base(4, 6, 2)
r.update(num_heads=2, w_o=mat(6, 6))
valid["heads2_wide_wo"] = r
valid["heads3_stacks"] = {"x": mat(3, 4), "w_q": stack(3, 4, 2),
                          "w_k": stack(3, 4, 2), "w_v": stack(3, 4, 3),
                          "w_o": mat(9, 4)}
valid["causal_all_stages"] = dict(
    base(5, 4), causal=True,
    **{"return": ["q", "k", "v", "scores", "scaled_scores", "masked_scores",
                  "weights", "head_outputs", "concat", "output"]})
valid["mask_bool"] = dict(base(3, 2), mask=[[True, False, True],
                                             [False, False, False],
                                             [True, True, True]])
valid["mask_numbers"] = dict(base(2, 2), mask=[[0, -1e9], [-0.5, 0]])
valid["key_padding"] = dict(base(3, 2), key_padding=[False, False, True])
c = base(2, 3)
c.update(context=mat(4, 5), w_k=mat(5, 3), w_v=mat(5, 2),
         context_tokens=["a", "b", "c", "d"], tokens=["x", "y"])
valid["cross_attention"] = c
valid["float32_scale"] = dict(base(3, 4), dtype="float32", scale=0.25)
valid["float64_explicit"] = dict(base(2, 2), dtype="float64",
                                 **{"return": ["output"]})
valid["ints_as_numbers"] = {"x": [[1, 2], [3, 4]], "w_q": [[1, 0], [0, 1]],
                            "w_k": [[1, 0], [0, 1]], "w_v": [[2, 0], [0, 2]]}
valid["overflow_422"] = {"x": [[1e200, 1e200]], "w_q": [[1e200], [1e200]],
                         "w_k": [[1e200], [1e200]], "w_v": [[1], [1]]}
valid["float32_overflow_422"] = {"x": [[1e30]], "w_q": [[1e30]],
                                 "w_k": [[1e30]], "w_v": [[1]],
                                 "dtype": "float32"}
valid["fully_masked_row"] = dict(base(2, 2), mask=[[False, False],
                                                   [True, True]])
valid["unicode_tokens"] = dict(base(2, 2), tokens=["\u00e9t\u00e9", "\u732b"])
bad = {}
good = base(2, 2)
def variant(**kw):
    r = json.loads(json.dumps(good))
    for k, v in kw.items():
        if v is None:
            r.pop(k, None)
        else:
            r[k] = v
    return r
bad["unknown_field_W_q"] = variant(W_q=mat(2, 2))
bad["unknown_field_slash"] = variant(**{"a/b~c": 1})
bad["missing_x"] = variant(x=None)
bad["missing_w_v"] = variant(w_v=None)
bad["x_string"] = variant(x="[[1,2]]")
bad["x_null_leaf"] = variant(x=[[1, None], [2, 3]])
bad["x_bool_leaf"] = variant(x=[[1, True], [2, 3]])
bad["x_ragged"] = variant(x=[[1, 2], [3]])
bad["x_empty"] = variant(x=[])
bad["x_empty_row"] = variant(x=[[]])
bad["x_rank1"] = variant(x=[1, 2])
bad["x_rank4"] = variant(x=[[[[1, 2]], [[3, 4]]]])
bad["w_q_mismatch"] = variant(w_q=mat(3, 2))
bad["w_k_width_mismatch"] = variant(w_k=mat(2, 4))
bad["num_heads_zero"] = variant(num_heads=0)
bad["num_heads_negative"] = variant(num_heads=-2)
bad["num_heads_fraction"] = variant(num_heads=1.5)
bad["num_heads_not_dividing"] = variant(num_heads=3)
bad["num_heads_vs_stack"] = {"x": mat(2, 2), "w_q": stack(2, 2, 1),
                             "w_k": stack(2, 2, 1), "w_v": stack(2, 2, 1),
                             "num_heads": 1}
bad["num_heads_huge"] = variant(num_heads=1e300)
bad["dtype_unknown"] = variant(dtype="float8")
bad["dtype_number"] = variant(dtype=32)
bad["return_unknown"] = variant(**{"return": ["outputs"]})
bad["return_not_list"] = variant(**{"return": "output"})
bad["scale_zero"] = variant(scale=0)
bad["scale_negative"] = variant(scale=-1)
bad["scale_string"] = variant(scale="1")
bad["float32_overflow_input"] = variant(dtype="float32", x=[[1e39, 0], [0, 0]])
bad["causal_string"] = variant(causal="yes")
bad["mask_shape"] = variant(mask=[[True]])
bad["mask_mixed"] = variant(mask=[[True, 1], [0, False]])
bad["key_padding_len"] = variant(key_padding=[True])
bad["tokens_count"] = variant(tokens=["a"])
bad["tokens_not_strings"] = variant(tokens=[1, 2])
bad["context_tokens_without_context"] = variant(context_tokens=["a", "b"])
bad["w_o_rows"] = variant(w_o=mat(3, 2))
bad["w_o_rank3"] = variant(w_o=[[[1]]])
bad["deep_nesting"] = variant(x=[[[[[[[[1]]]]]]]])
bad["huge_dims_claim"] = variant(x=[[0] * 60])
# found by the fuzzer: the pointer named /x/shape, which was not there
bad["binary_without_shape"] = variant(x={})
bad["binary_without_base64"] = variant(x={"shape": [3, 4]})
# rows the row splitter (server/json/parse_rows.cpp) must hand back or read
bad["row_with_string"] = variant(x=[[1, "]", 2, 3]] * 3)
bad["row_with_array"] = variant(x=[[1, [2], 3, 4]] * 3)

raw = {
    "empty": b"",
    "not_object": b"[1,2,3]",
    "string_body": b"\"x\"",
    "trailing_garbage": json.dumps(good).encode() + b" }",
    "truncated": json.dumps(good).encode()[:-7],
    "duplicate_key": b'{"x":[[1]],"x":[[2]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]]}',
    "invalid_utf8": b'{"x":[[1]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]],"tokens":["\xff\xfe"]}',
    "nan_literal": b'{"x":[[NaN]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]]}',
    "infinity_literal": b'{"x":[[Infinity]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]]}',
    "big_exponent": b'{"x":[[1e400]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]]}',
    "deep_array_2000": b"[" * 2000 + b"]" * 2000,
    "deep_object_x": b'{"x":' + b"[" * 300 + b"1" + b"]" * 300 + b"}",
    "nul_in_key": b'{"x\\u0000":1}',
    "nul_byte_raw": b'{"x":[[1]],\x00"w_q":[[1]]}',
    "bom": b"\xef\xbb\xbf" + json.dumps(good).encode(),
    "negative_zero": b'{"x":[[-0.0]],"w_q":[[-0]],"w_k":[[1]],"w_v":[[1]]}',
    "big_integer": b'{"x":[[123456789012345678901234567890]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]]}',
    "rows_with_whitespace": b'{"x":[ [ 1 ,2\n]\t,[3, 4 ]],"w_q":[[1],[2]],"w_k":[[1],[2]],"w_v":[[1],[2]]}',
    "rows_bad_numbers": b'{"x":[[1.,2],[01,-]],"w_q":[[1],[2]],"w_k":[[1],[2]],"w_v":[[1],[2]]}',
    "num_heads_big_int": b'{"x":[[1,2]],"w_q":[[1,2],[3,4]],"w_k":[[1,2],[3,4]],"w_v":[[1,2],[3,4]],"num_heads":18446744073709551617}',
}


# biases, PyTorch's layout and state_dict names (drawn after the seeds
# above, so that those stay as they are)
r = base(3, 4, 2)
r.update(num_heads=2, b_q=[0.5] * 4, b_k=[[1, -1], [2, -2]], b_v=[0.25] * 4,
         w_o=mat(4, 3), b_o=[1, 2, 3])
valid["biases"] = r
valid["layout_torch_stacks"] = {"x": mat(3, 4), "layout": "torch",
                                "w_q": stack(2, 2, 4), "w_k": stack(2, 2, 4),
                                "w_v": stack(2, 3, 4), "w_o": mat(3, 6)}
valid["state_dict_in_proj"] = {"x": mat(3, 4), "num_heads": 2,
                               "in_proj_weight": mat(12, 4),
                               "in_proj_bias": [0.1] * 12,
                               "out_proj_weight": mat(4, 4),
                               "out_proj_bias": [0.2] * 4}
valid["state_dict_kdim"] = {"x": mat(3, 4), "context": mat(5, 3),
                            "q_proj_weight": mat(4, 4),
                            "k_proj_weight": mat(4, 3),
                            "v_proj_weight": mat(4, 3), "num_heads": 2}
valid["batch_padded"] = dict(base(3, 4), x=[mat(3, 4) for _ in range(2)],
                             key_padding=[[False] * 3, [False, False, True]],
                             mask=[[[True] * 3] * 3, [[True, False, True]] * 3])
valid["batch_cross"] = dict(base(2, 4), x=[mat(2, 4) for _ in range(3)],
                            context=[mat(4, 4) for _ in range(3)])
valid["given_qkv"] = {"q": stack(2, 3, 2), "k": stack(2, 4, 2),
                      "v": stack(2, 4, 3), "causal": True}
valid["given_qkv_batch"] = {"q": [stack(1, 2, 2)] * 2, "k": [stack(1, 3, 2)] * 2,
                            "v": [stack(1, 3, 2)] * 2,
                            "key_padding": [[False, False, True]] * 2}
bad["given_qkv_with_x"] = dict(valid["given_qkv"], x=mat(3, 2))
bad["given_qkv_heads"] = dict(valid["given_qkv"], k=stack(3, 4, 2))
r = base(3, 4, 4, 1)
r.update(num_heads=4, num_kv_heads=2, w_k=mat(4, 2), w_v=mat(4, 2),
         b_k=[0.5, -0.5])
valid["grouped_heads"] = r
valid["multi_query_stacks"] = {"x": mat(3, 4), "num_kv_heads": 1,
                               "w_q": stack(2, 4, 2), "w_k": stack(1, 4, 2),
                               "w_v": stack(1, 4, 3)}
bad["kv_heads_not_dividing"] = dict(r, num_kv_heads=3)
valid["positions_window_alibi"] = dict(base(4, 4, 2), num_heads=2,
                                      positions=[3, 4, 4, 9], window=3,
                                      alibi=True, causal=True)
valid["alibi_slopes_cross"] = dict(base(2, 4), context=mat(3, 4),
                                   context_positions=[0, 2, 5],
                                   alibi_slopes=[0.5])
bad["positions_negative"] = variant(positions=[-1, 0])
bad["window_zero"] = variant(window=0)
bad["alibi_slopes_count"] = variant(alibi_slopes=[1, 2, 3])
bad["batch_context_count"] = variant(x=[mat(2, 2)] * 2, context=[mat(2, 2)])
bad["batch_padding_rank"] = variant(x=[mat(2, 2)] * 2, key_padding=[True, False])
bad["b_q_length"] = variant(b_q=[1, 2, 3])
bad["b_k_stack_shape"] = variant(b_k=[[1], [2]])
bad["b_o_without_w_o"] = variant(b_o=[1, 2])
bad["layout_unknown"] = variant(layout="numpy")
bad["in_proj_with_w_q"] = variant(in_proj_weight=mat(6, 2))
bad["in_proj_not_three_blocks"] = variant(w_q=None, w_k=None, w_v=None,
                                          in_proj_weight=mat(4, 2))
bad["in_proj_bias_length"] = variant(w_q=None, w_k=None, w_v=None,
                                     in_proj_weight=mat(6, 2),
                                     in_proj_bias=[1, 2])
bad["out_proj_with_w_o"] = variant(w_o=mat(2, 2), out_proj_weight=mat(2, 2))
# RoPE, the sinusoidal encoding, a KV cache (drawn after the seeds above)
valid["rope_half"] = dict(base(3, 4, 2), num_heads=2, rope=True,
                          positional_encoding="sinusoidal")
valid["rope_interleaved_dims"] = dict(base(3, 4, 4), num_heads=1,
                                      rope={"base": 500, "dims": 2,
                                            "style": "interleaved"})
valid["kv_cache_step"] = dict(base(1, 4, 2), num_heads=2, num_kv_heads=1,
                              w_k=mat(4, 2), w_v=mat(4, 2), rope=True,
                              past_k=stack(1, 3, 2), past_v=stack(1, 3, 2),
                              positions=[5])
valid["kv_cache_batch_given"] = {"q": [stack(2, 1, 2)] * 2,
                                 "k": [stack(2, 1, 2)] * 2,
                                 "v": [stack(2, 1, 3)] * 2,
                                 "past_k": [stack(2, 4, 2)] * 2,
                                 "past_v": [stack(2, 4, 3)] * 2,
                                 "key_padding": [[False] * 5] * 2,
                                 "rope": {}}
bad["rope_dims_odd"] = dict(base(3, 4), rope={"dims": 3})
bad["rope_unknown_member"] = variant(rope={"theta": 2})
bad["rope_dims_too_wide"] = variant(rope={"dims": 64})
bad["encoding_unknown"] = variant(positional_encoding="learned")
bad["past_v_missing"] = variant(past_k=stack(1, 2, 2))
bad["past_k_heads"] = variant(past_k=stack(3, 2, 2), past_v=stack(3, 2, 2))
bad["positions_before_cache"] = variant(past_k=stack(1, 2, 2),
                                        past_v=stack(1, 2, 2), positions=[1, 2])
bad["x_pe_without_encoding"] = variant(**{"return": ["x_pe"]})
valid["mask_per_head"] = dict(base(3, 4, 2), num_heads=2,
                              mask=[[[True, False, True]] * 3,
                                    [[True, True, False]] * 3])
valid["mask_batch_per_head"] = dict(base(2, 2), x=[mat(2, 2)] * 2,
                                    mask=[[[[0, -1], [0.5, 0]]]] * 2)
bad["mask_heads_count"] = variant(mask=[[[True] * 2] * 2] * 3)
valid["tokens_per_sequence"] = dict(base(2, 2), x=[mat(2, 2)] * 2,
                                    tokens=[["a", "b"], ["c", "<pad>"]])
bad["tokens_ragged"] = dict(base(2, 2), x=[mat(2, 2)] * 2,
                            tokens=[["a", "b"], ["c"]])
valid["heads_some"] = dict(base(3, 4, 2), num_heads=2, heads=[1],
                            **{"return": ["k", "weights", "output"]})
valid["heads_batch_gqa"] = {"x": [mat(2, 4)] * 2, "num_kv_heads": 2,
                            "w_q": stack(4, 4, 1), "w_k": stack(2, 4, 1),
                            "w_v": stack(2, 4, 1), "heads": [3, 0],
                            "return": ["v", "weights"]}
bad["heads_twice"] = variant(heads=[0, 0])
bad["heads_beyond"] = variant(heads=[7])
# numbers beyond a double (which JSON's writers here cannot write) and
# beyond a float: number_out_of_range at the number, whatever the dtype
SMALL = b'"w_q":[[1],[2]],"w_k":[[1],[2]],"w_v":[[1],[2]]'
raw["float64_beyond_double"] = b'{"x":[[1,2],[3,1e309]],' + SMALL + b'}'
raw["float32_beyond_double"] = (b'{"dtype":"float32","x":[[1,2],[-1e309,4]],'
                                + SMALL + b'}')
raw["scale_beyond_double"] = b'{"x":[[1,2],[3,4]],' + SMALL + b',"scale":1e999}'
raw["float32_scale_beyond_float"] = (b'{"dtype":"float32","x":[[1,2],[3,4]],'
                                     + SMALL + b',"scale":1e39}')
# beyond a double beside a number JSON does not allow ("1." before the
# exponent, which strtod() reads): invalid_json, no pointer (found by the
# fuzzer)
raw["beyond_double_beside_bad_number"] = (b'{"x":[[1e309,1.e861]],' + SMALL
                                          + b'}')
# a NUL byte after a number, which jansson skips (found by the fuzzer)
raw["nul_after_number"] = (b'{"x":[[1\x00,2],[3,4]],' + SMALL
                           + b',"scale":1e999}')

# the binary form, which both parsers read (server/json/parse_fast.cpp and
# parse_json.c): float64, float32 with its dtype after it, refusals
B64_ONE_TWO_F64 = "AAAAAAAA8D8AAAAAAAAAQA=="  # 1.0, 2.0 as <f8
B64_ONE_TWO_F32 = "AACAPwAAAEA="  # 1.0, 2.0 as <f4
valid["binary_float64"] = {"x": {"shape": [1, 2], "base64": B64_ONE_TWO_F64},
                           "w_q": [[1], [2]], "w_k": [[1], [2]],
                           "w_v": [[1], [2]]}
valid["binary_float32_dtype_after"] = {
    "x": {"base64": B64_ONE_TWO_F32, "shape": [1, 2]}, "w_q": [[1], [2]],
    "w_k": [[1], [2]], "w_v": [[1], [2]], "dtype": "float32"}
bad["binary_length"] = variant(x={"shape": [3, 4], "base64": B64_ONE_TWO_F64})
bad["binary_alphabet"] = variant(x={"shape": [1, 2],
                                    "base64": B64_ONE_TWO_F64[:-3] + "-=="})

# PyTorch's forms (drawn after the seeds above): a sequence-first batch, a
# model's state_dict under its prefix, the masks under PyTorch's names (a
# float key_padding_mask, an SDPA mask that broadcasts), the options the
# server refuses (422) and Python's -Infinity (400)
MINUS_INF_ZERO_F64 = "AAAAAAAA8P8AAAAAAAAAAA=="  # -inf, 0.0 as <f8
valid["batch_first_false"] = dict(base(3, 4), x=[mat(2, 4)] * 3,
                                  context=[mat(2, 4)] * 4, batch_first=False,
                                  **{"return": ["output", "concat"]})
valid["state_dict_prefixed"] = {
    "x": mat(3, 4), "num_heads": 2,
    "state_dict": {"encoder.layers.0.self_attn.in_proj_weight": mat(12, 4),
                   "encoder.layers.0.self_attn.in_proj_bias": [0.1] * 12,
                   "encoder.layers.0.self_attn.out_proj.weight": mat(4, 4),
                   "encoder.layers.0.self_attn.out_proj.bias": [0.2] * 4}}
valid["torch_masks_float_padding"] = dict(
    base(2, 4), x=[mat(2, 4)] * 2, attn_mask=[[True, False], [False, False]],
    key_padding_mask=[[0.5, -1], [0, 0]], is_causal=True,
    average_attn_weights=True)
valid["float_padding_minus_infinity"] = dict(
    base(2, 2), key_padding_mask={"shape": [2], "base64": MINUS_INF_ZERO_F64})
valid["sdpa_mask_broadcast"] = {"q": [stack(2, 3, 2)] * 2,
                                "k": [stack(2, 4, 2)] * 2,
                                "v": [stack(2, 4, 3)] * 2,
                                "attn_mask": [[[0.5, -1, 0, 2]]]}
bad["state_dict_two_prefixes"] = variant(
    w_q=None, w_k=None, w_v=None,
    state_dict={"a.in_proj_weight": mat(6, 2), "b.in_proj_bias": [0] * 6})
bad["state_dict_unknown_key"] = variant(state_dict={"m.linear1.weight":
                                                    mat(2, 2)})
bad["batch_first_with_qkv"] = dict(valid["given_qkv"], batch_first=False)
bad["sdpa_mask_not_broadcasting"] = dict(valid["sdpa_mask_broadcast"],
                                         attn_mask=[[0, 1, 2]])
bad["bias_k_422"] = variant(bias_k=[[[1, 2]]])
bad["add_zero_attn_422"] = variant(add_zero_attn=True)
raw["python_minus_infinity"] = (b'{"x":[[1,2],[3,4]],' + SMALL
                                + b',"mask":[[0,-Infinity],[0,0]]}')

# a fraction a double rounds away, where a whole number belongs (refused)
# and where any number may stand (taken)
raw["position_rounded_to_whole"] = (b'{"x":[[1,2],[3,4]],' + SMALL
                                    + b',"positions":[0,1.00000000000000001]}')
raw["num_heads_rounded_to_whole"] = (b'{"x":[[1,2],[3,4]],"w_q":[[1,0],[0,1]],'
                                     b'"w_k":[[1,0],[0,1]],"w_v":[[1,0],[0,1]],'
                                     b'"num_heads":1.00000000000000001}')
raw["x_rounded_to_whole"] = (b'{"x":[[0.99999999999999999,1e-400],[3,4]],'
                             + SMALL + b',"positions":[0.0,1e0]}')


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    count = 0
    for prefix, group in (("ok", valid), ("bad", bad)):
        for name, doc in group.items():
            with open(os.path.join(out, f"{prefix}_{name}.json"), "wb") as f:
                f.write(json.dumps(doc, separators=(",", ":")).encode())
            count += 1
    for name, data in raw.items():
        with open(os.path.join(out, f"raw_{name}.json"), "wb") as f:
            f.write(data)
        count += 1
    print(f"wrote {count} seeds to {out}")


if __name__ == "__main__":
    main()
