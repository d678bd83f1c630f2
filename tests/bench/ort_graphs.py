"""ONNX Runtime as an anchor: the core's problem (x (n, d), W_q, W_k, W_v, W_o
(d, d), h heads, no mask) as ONNX graphs, written with Debian's python3-onnx
(opset 17), float32, the weights as initializers made exactly as bench_core
makes them (contestants.make_inputs):

    ort_graphs.py --out DIR --size N,D,H

writes DIR/plain-N-D-H.onnx (MatMul, Reshape, Transpose, Softmax: the
lessons' steps) and DIR/fused-N-D-H.onnx (the projections, then
com.microsoft.MultiHeadAttention, then W_o), each with one input x (1, N, D)
and one output (1, N, D).  tests/bench/ort_peer.mjs runs them.
"""
import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from contestants import make_inputs

OPSET = 17


def const(name, values):
    return numpy_helper.from_array(np.asarray(values), name)


def weights(n, d):
    _, ws = make_inputs(n, d, np.float32)
    return [numpy_helper.from_array(w, name)
            for w, name in zip(ws, ("w_q", "w_k", "w_v", "w_o"))]


def projections():
    return [helper.make_node("MatMul", ["x", f"w_{m}"], [m]) for m in "qkv"]


def plain_graph(n, d, h):
    """softmax(Q Kᵀ / √d_k) V per head, as MatMuls on (h, n, d_k)."""
    dk = d // h
    nodes = projections()
    for m, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]),
                    ("v", [0, 2, 1, 3])):
        nodes.append(helper.make_node("Reshape", [m, "heads"], [m + "4"]))
        nodes.append(helper.make_node("Transpose", [m + "4"], [m + "h"],
                                      perm=perm))
    nodes += [
        helper.make_node("MatMul", ["qh", "kh"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["weights"], axis=-1),
        helper.make_node("MatMul", ["weights", "vh"], ["heads_out"]),
        helper.make_node("Transpose", ["heads_out"], ["concat4"],
                         perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["concat4", "flat"], ["concat"]),
        helper.make_node("MatMul", ["concat", "w_o"], ["out"]),
    ]
    extra = [const("heads", np.array([1, n, h, dk], dtype=np.int64)),
             const("flat", np.array([1, n, d], dtype=np.int64)),
             const("scale", np.array(1 / math.sqrt(dk), dtype=np.float32))]
    return nodes, extra


def fused_graph(n, d, h):
    """The projections, then ONNX Runtime's fused MultiHeadAttention."""
    nodes = projections() + [
        helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["concat"],
                         domain="com.microsoft", num_heads=h),
        helper.make_node("MatMul", ["concat", "w_o"], ["out"]),
    ]
    return nodes, []


def write(path, n, d, h, build):
    nodes, extra = build(n, d, h)
    graph = helper.make_graph(
        nodes, os.path.basename(path),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n, d])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, n, d])],
        initializer=weights(n, d) + extra)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft",
                                                            1)])
    model.ir_version = 8
    onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", action="append", required=True,
                    help="N,D,H (repeatable)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for size in args.size:
        n, d, h = (int(v) for v in size.split(","))
        for kind, build in (("plain", plain_graph), ("fused", fused_graph)):
            write(os.path.join(args.out, f"{kind}-{n}-{d}-{h}.onnx"), n, d, h,
                  build)


if __name__ == "__main__":
    main()
