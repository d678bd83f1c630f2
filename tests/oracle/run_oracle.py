#!/usr/bin/python3
"""Oracle test: random requests, every stage compared with NumPy.

Each request draws a weight layout (2-D split by reshape, or 3-D per-head
stacks), 1-8 heads, d_v ≠ d_k, projection widths ≠ d, float64 or float32,
with or without w_o, n up to 64; a share of them adds masks (with a fully
masked query row), key padding, causal, a custom scale or cross-attention
(context, up to 600 keys, so several key blocks).  Every stage is requested
and compared with reference.attention(), except in every fifth request, which
asks for no (h, n, m) stage so that the fused online-softmax pass runs; every
seventh travels both ways in the binary encoding (base64 of little-endian
numbers):
relative error ≤ 1e-12 for float64 and ≤ 1e-5 for float32.

Requests from index PARITY_FROM on also carry biases (vectors or per-head
stacks, b_o with w_o) and travel in one of PyTorch's forms: `"layout":
"torch"` (every weight transposed, stacks per head), or the state_dict names
of nn.MultiheadAttention (in_proj_weight / in_proj_bias when the three
projections have one shape, else q_proj_weight, k_proj_weight,
v_proj_weight; out_proj_weight / out_proj_bias); the reference computes the
lesson-layout request they were made from; every fourth has grouped-query
heads (num_kv_heads dividing num_heads), every fifth positions (with gaps and
repeats), a sliding window and ALiBi (the paper's slopes or given ones).  Every third of them is a batch
of 1-8 sequences (x of rank 3), each with its own padded tail of keys
(key_padding (B, m)) and, in some, its own mask (B, n, m); the reference is
each sequence computed alone, stacked.  Another third sends NumPy's own q,
k and v of the request directly (as scaled_dot_product_attention takes
them), with its masks, causal flag and scale, and compares every stage from
the scores on.

Requests from index MODERN_FROM on add, on top of all that, what today's
models use: RoPE (either style, random base, dims up to d_k) in three of
four, the sinusoidal encoding in every third that carries x, and a KV cache
(past_k and past_v of 1-20 positions, masks and padding widened to cover
them, positions after them) in every other one, one mask per head (h, n, m),
or (B, h, n, m) in a batch, in some, and a window (with or without causal) in
some of the fused ones; their stages (x_pe, q_rope,
k_rope, k_cache, v_cache) are compared too.
"""
import argparse
import base64
import collections
import concurrent.futures
import http.client
import json
import sys
import threading

import numpy as np

from reference import attention, from_wire, relative_error
from serverproc import Server, default_server

STAGES = ["q", "k", "v", "k_cache", "v_cache", "scores", "scaled_scores", "masked_scores",
          "weights", "head_outputs", "concat", "output"]
FUSED_STAGES = ["q", "k", "v", "k_cache", "v_cache", "head_outputs",
                "concat", "output"]
TOLERANCE = {"float64": 1e-12, "float32": 1e-5}
# requests before this index are the lessons' own forms only
PARITY_FROM = 240
# requests from this index on also carry RoPE, the sinusoidal encoding and a
# KV cache
MODERN_FROM = 480
TENSORS = ("x", "context", "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v",
           "b_o", "in_proj_weight", "in_proj_bias", "q_proj_weight",
           "k_proj_weight", "v_proj_weight", "out_proj_weight",
           "out_proj_bias", "q", "k", "v", "past_k", "past_v")


def as_list(a, dtype):
    """Values exactly representable in dtype, written as Python floats."""
    return np.asarray(a, dtype=dtype).astype(np.float64).tolist()


def to_binary(values, dtype):
    """A tensor in the binary form: {"shape", "base64" of little-endian}."""
    a = np.asarray(values, dtype="<f4" if dtype == "float32" else "<f8")
    return {"shape": list(a.shape),
            "base64": base64.b64encode(a.tobytes()).decode()}


def from_binary(obj, dtype):
    a = np.frombuffer(base64.b64decode(obj["base64"]),
                      dtype="<f4" if dtype == "float32" else "<f8")
    return a.reshape(obj["shape"]).astype(np.float64)


def binary_variant(req):
    """The same request with every numeric tensor and the reply in base64."""
    out = dict(req, encoding="base64")
    for name in TENSORS:
        if name in req:
            out[name] = to_binary(req[name], req["dtype"])
    mask = req.get("mask")
    if mask is not None and np.asarray(mask).dtype != bool:
        out["mask"] = to_binary(mask, req["dtype"])
    return out


def random_request(rng, i):
    dtype = "float32" if i % 2 else "float64"
    npdt = np.float32 if dtype == "float32" else np.float64
    heads = int(rng.integers(1, 9))
    n = int(rng.integers(1, 65))
    d = int(rng.integers(1, 33))
    if i % 40 == 39:
        # x of 200+ rows of 64+ numbers is past 64 KiB of text: the server
        # parses it row by row on its pool (server/json/parse_rows.cpp)
        n, d = int(rng.integers(200, 261)), int(rng.integers(64, 97))
    d_k = int(rng.integers(1, 9))
    d_v = int(rng.integers(1, 9))
    if d_v == d_k:
        d_v = d_k + 1
    cross = i % 5 == 3
    m = int(rng.integers(1, 65 if i % 2 else 600)) if cross else n
    d_c = int(rng.integers(1, 33)) if cross else d
    # every fifth request asks for no (h, n, m) stage: the fused pass runs
    stages = FUSED_STAGES if i % 5 == 4 else STAGES
    req = {"x": as_list(rng.normal(size=(n, d)), npdt), "dtype": dtype,
           "return": stages}
    if cross:
        req["context"] = as_list(rng.normal(size=(m, d_c)), npdt)
    stacked = i % 4 in (1, 2)
    for name, rows, width in (("w_q", d, d_k), ("w_k", d_c, d_k),
                              ("w_v", d_c, d_v)):
        shape = (heads, rows, width) if stacked else (rows, heads * width)
        req[name] = as_list(rng.normal(size=shape) / np.sqrt(rows), npdt)
    if not stacked or i % 3 == 0:
        req["num_heads"] = heads
    if i % 3 != 1:
        d_out = int(rng.integers(1, 33))
        req["w_o"] = as_list(rng.normal(size=(heads * d_v, d_out)), npdt)
    if i % 7 == 2:
        req["scale"] = float(rng.uniform(0.05, 2))
    if i % 6 == 1:
        req["causal"] = True
    if i % 8 == 5:
        mask = rng.random((n, m)) > 0.3
        mask[0, :] = False  # a query with no key left: zero weights
        req["mask"] = mask.tolist()
    elif i % 8 == 6:
        req["mask"] = as_list(rng.normal(size=(n, m)), npdt)
    if i % 9 == 4:
        req["key_padding"] = (rng.random(m) > 0.7).tolist()
    return req


def heads_of(req):
    """(query heads, key/value heads) of a lesson-layout request."""
    heads = req.get("num_heads") or (len(req["w_q"]) if np.ndim(req["w_q"]) == 3
                                     else 1)
    return heads, req.get("num_kv_heads", heads)


def grouped(rng, req):
    """The request with fewer key/value heads (grouped-query attention), when
    its head count has a divisor to group by."""
    npdt = np.float32 if req["dtype"] == "float32" else np.float64
    heads, _ = heads_of(req)
    divisors = [g for g in range(1, heads) if heads % g == 0]
    if not divisors:
        return
    kv = int(rng.choice(divisors))
    for w in ("w_k", "w_v"):
        a = np.asarray(req[w])
        per_head = a.shape[-1] if a.ndim == 3 else a.shape[-1] // heads
        shape = (kv, a.shape[-2], per_head) if a.ndim == 3 else \
            (a.shape[0], kv * per_head)
        req[w] = as_list(rng.normal(size=shape) / np.sqrt(a.shape[-2]), npdt)
    req["num_heads"], req["num_kv_heads"] = heads, kv


def add_positional(rng, req, i):
    """Positions with gaps (some repeated), a sliding window, ALiBi."""
    n = np.shape(req["x"])[0]
    if i % 2 == 0:
        steps = rng.integers(0, 3, size=n)  # 0: a repeated position
        req["positions"] = (int(rng.integers(0, 50)) +
                            np.cumsum(steps)).tolist()
    if "context" in req and i % 3 == 0:
        m = np.shape(req["context"])[0]
        req["context_positions"] = np.sort(
            rng.integers(0, 2 * m + 1, size=m)).tolist()
    if i % 3 != 1:
        req["window"] = int(rng.integers(1, 12))
    heads, _ = heads_of(req)
    if i % 4 == 0:
        req["alibi"] = True
    elif i % 4 == 1:
        req["alibi_slopes"] = rng.uniform(0.01, 1, size=heads).tolist()


def head_widths(req):
    """(d_k, d_v) of a lesson-layout request."""
    heads, kv_heads = heads_of(req)
    w_q, w_v = np.asarray(req["w_q"]), np.asarray(req["w_v"])
    d_k = w_q.shape[2] if w_q.ndim == 3 else w_q.shape[1] // heads
    d_v = w_v.shape[2] if w_v.ndim == 3 else w_v.shape[1] // kv_heads
    return d_k, d_v


def add_modern(rng, req, i):
    """RoPE, the sinusoidal encoding and a KV cache (see the docstring)."""
    npdt = np.float32 if req["dtype"] == "float32" else np.float64
    _, kv_heads = heads_of(req)
    d_k, d_v = head_widths(req)
    extra = []
    if i % 4 != 3 and d_k >= 2:
        spec = {}
        if i % 2:
            spec["style"] = "interleaved"
        if d_k % 2 or i % 3 == 0:
            spec["dims"] = 2 * int(rng.integers(1, d_k // 2 + 1))
        if i % 5 < 2:
            spec["base"] = float(rng.choice([500.0, rng.uniform(2, 1e5)]))
        req["rope"] = spec if spec or i % 7 else True
        extra += ["q_rope", "k_rope"]
    if i % 5 == 4 and i % 3 == 0:  # a window in the fused pass, which
        req["window"] = int(rng.integers(1, 40))  # skips the keys it hides
        req["causal"] = i % 2 == 0
    if i % 3 != 1:  # given q, k and v come without x to encode
        req["positional_encoding"] = "sinusoidal"
        extra.append("x_pe")
    if i % 2 == 0:
        past = int(rng.integers(1, 21))
        req["past_k"] = as_list(rng.normal(size=(kv_heads, past, d_k)), npdt)
        req["past_v"] = as_list(rng.normal(size=(kv_heads, past, d_v)), npdt)
        for name in ("positions", "context_positions"):
            if name in req:
                req[name] = [p + past for p in req[name]]
        if "mask" in req:
            mask = np.asarray(req["mask"])
            cols = rng.random((mask.shape[0], past)) > 0.3 \
                if mask.dtype == bool else rng.normal(size=(mask.shape[0], past))
            wide = np.concatenate([cols, mask], axis=1)
            req["mask"] = wide.tolist() if mask.dtype == bool \
                else as_list(wide, npdt)
        if "key_padding" in req:
            req["key_padding"] = (rng.random(past) > 0.7).tolist() + \
                req["key_padding"]
    if "mask" in req and i % 4 in (1, 2):  # one mask per head: (h, n, m)
        heads, _ = heads_of(req)
        mask = np.asarray(req["mask"])
        masks = np.stack([rng.permutation(mask.ravel()).reshape(mask.shape)
                          for _ in range(heads)])
        req["mask"] = masks.tolist() if masks.dtype == bool \
            else as_list(masks, npdt)
    req["return"] = req["return"] + extra


def some_heads(req, i):
    """(heads, h, h_kv) for every fifth request: some of its query heads,
    last first (no random draw, so the other requests stay as they were);
    None for the others."""
    h, h_kv = heads_of(req)
    if i % 5 != 3:
        return None
    return list(range(h - 1, -1, -2)), h, h_kv


def heads_cut(want, heads, h, h_kv, batched):
    """The reference's stages as a reply naming `heads` holds them: plane j
    of a stage of h heads is heads[j]'s, of a stage of h_kv heads
    heads[j]'s key/value head."""
    axis = 1 if batched else 0
    cut = {}
    for stage, a in want.items():
        a = np.asarray(a)
        if a.ndim - axis != 3:
            cut[stage] = a
            continue
        planes = heads if a.shape[axis] == h else [k * h_kv // h for k in heads]
        cut[stage] = np.take(a, planes, axis=axis)
    return cut


def add_biases(rng, req, i):
    """Biases on the lesson-layout request: vectors, or per-head stacks."""
    npdt = np.float32 if req["dtype"] == "float32" else np.float64
    heads, kv_heads = heads_of(req)
    for name, w, count in (("b_q", "w_q", heads), ("b_k", "w_k", kv_heads),
                           ("b_v", "w_v", kv_heads)):
        if i % 5 == 0 and name != "b_q":
            continue  # some requests bias only some projections
        width = np.asarray(req[w]).shape[-1] * (
            count if np.ndim(req[w]) == 3 else 1)
        b = rng.normal(size=width)
        req[name] = as_list(b.reshape(count, -1) if i % 3 == 0 else b, npdt)
    if "w_o" in req and i % 4 != 1:
        req["b_o"] = as_list(rng.normal(size=np.shape(req["w_o"])[1]), npdt)


def batch_of(rng, req, i):
    """(the request made a batch, each of its sequences as a request)."""
    npdt = np.float32 if req["dtype"] == "float32" else np.float64
    batch = int(rng.integers(1, 9))
    n, d = np.shape(req["x"])
    xs = rng.normal(size=(batch, n, d))
    out = dict(req, x=as_list(xs, npdt))
    m = n
    if "context" in req:
        m, d_c = np.shape(req["context"])
        out["context"] = as_list(rng.normal(size=(batch, m, d_c)), npdt)
    if "past_k" in req:  # a cache per sequence, before its keys
        for name in ("past_k", "past_v"):
            shape = (batch,) + np.shape(req[name])
            out[name] = as_list(rng.normal(size=shape), npdt)
        m += np.shape(req["past_k"])[1]
    # sequences padded to different lengths: each hides its own tail
    lengths = rng.integers(1, m + 1, size=batch)
    padding = np.arange(m)[None, :] >= lengths[:, None]
    out["key_padding"] = padding.tolist()
    # one mask per sequence on some; a per-head mask (h, n, m) always
    # becomes one per sequence and head (B, h, n, m): a batch's rank-3 mask
    # is (B, n, m)
    if "mask" in req and (i % 2 == 0 or np.ndim(req["mask"]) == 3):
        mask = np.asarray(req["mask"])
        masks = np.stack([rng.permutation(mask.ravel()).reshape(mask.shape)
                          for _ in range(batch)])
        out["mask"] = masks.tolist() if masks.dtype == bool \
            else as_list(masks, npdt)
    sequences = []
    for b in range(batch):
        one = dict(out, x=out["x"][b], key_padding=out["key_padding"][b])
        for name in ("context", "past_k", "past_v"):
            if name in out:
                one[name] = out[name][b]
        if "mask" in out and np.ndim(out["mask"]) > np.ndim(req["mask"]):
            one["mask"] = out["mask"][b]  # (B, n, m) or (B, h, n, m)
        sequences.append(one)
    return out, sequences


def reference_of(sequences):
    """Every stage of a batch: each sequence alone, stacked."""
    each = [attention(one) for one in sequences]
    return {stage: np.stack([e[stage] for e in each]) for stage in each[0]}


GIVEN_KEEP = ("dtype", "scale", "causal", "mask", "key_padding", "num_heads",
              "tokens", "positions", "context_positions", "window", "alibi",
              "alibi_slopes", "rope", "past_k", "past_v")


def given_form(req):
    """(q, k, v given directly in place of x and the weights, the lesson
    request whose stages from the scores on they must reproduce)."""
    plain = {k: v for k, v in req.items() if k not in ("w_o", "b_o")}
    stages = attention(plain)
    out = {k: req[k] for k in GIVEN_KEEP if k in req}
    out.update(q=stages["q"].tolist(), k=stages["k"].tolist(),
               v=stages["v"].tolist(),
               **{"return": [s for s in req["return"]
                             if s not in ("q", "k", "v")]})
    return out, plain


def torch_form(req, i):
    """The same request as a PyTorch user writes it (see the docstring)."""
    out = dict(req)
    flat = all(np.ndim(req[w]) == 2 for w in ("w_q", "w_k", "w_v"))
    if not flat or i % 3 == 0:
        out["layout"] = "torch"
        for w in ("w_q", "w_k", "w_v", "w_o"):
            if w in req:
                a = np.asarray(req[w])
                out[w] = np.swapaxes(a, -1, -2).tolist()
        return out
    ts = {w: np.asarray(req[w]).T for w in ("w_q", "w_k", "w_v")}
    for w in ("w_q", "w_k", "w_v"):
        del out[w]
    same = ts["w_q"].shape == ts["w_k"].shape == ts["w_v"].shape
    if same and i % 2 == 0:
        out["in_proj_weight"] = np.concatenate(
            [ts["w_q"], ts["w_k"], ts["w_v"]]).tolist()
        if all(b in req and np.ndim(req[b]) == 1
               for b in ("b_q", "b_k", "b_v")):
            out["in_proj_bias"] = (req["b_q"] + req["b_k"] + req["b_v"])
            for b in ("b_q", "b_k", "b_v"):
                del out[b]
    else:
        out["q_proj_weight"] = ts["w_q"].tolist()
        out["k_proj_weight"] = ts["w_k"].tolist()
        out["v_proj_weight"] = ts["w_v"].tolist()
    if "w_o" in req:
        out["out_proj_weight"] = np.asarray(req["w_o"]).T.tolist()
        del out["w_o"]
        if "b_o" in req:
            out["out_proj_bias"] = out.pop("b_o")
    return out


def drawn_requests(rng, drawn, args):
    """Yields (i, sent, req, sequences, chosen) of every request to send:
    all drawn in order (the random numbers of each depend on those before),
    those of other indices than --case or off --stride not yielded."""
    for i in range(drawn):
        req = sent = random_request(rng, i)
        sequences = chosen = None
        if i >= PARITY_FROM:
            if i % 4 == 1:
                grouped(rng, req)
            add_biases(rng, req, i)
            if i % 5 == 2:
                add_positional(rng, req, i)
            if i >= MODERN_FROM:
                add_modern(rng, req, i)
            if i % 3 == 0:
                req, sequences = batch_of(rng, req, i)
            chosen = some_heads(req, i) if i >= MODERN_FROM else None
            if i % 3 == 1:
                sent, req = given_form(req)
            else:
                sent = torch_form(req, i)
            if chosen:
                sent = dict(sent, heads=chosen[0])
        if (args.case is not None and i != args.case) or \
                (args.case is None and i % args.stride):
            continue
        yield i, sent, req, sequences, chosen


def check(i, sent, req, sequences, chosen, reply, worst):
    """Compares one reply with the reference; 1 if it fails, else 0."""
    binary, (status, body) = reply
    if status != 200:
        print(f"request {i}: status {status}: {body}")
        return 1
    want = reference_of(sequences) if sequences else attention(req)
    if i >= MODERN_FROM and chosen:
        want = heads_cut(want, *chosen, batched=bool(sequences))
    bad = 0
    for stage in sent["return"]:
        got = (from_binary(body[stage], req["dtype"]) if binary
               else from_wire(body[stage]))
        err = relative_error(got, want[stage])
        if list(np.shape(got)) != body["shapes"][stage]:
            err = np.inf
        worst[req["dtype"]] = max(worst[req["dtype"]], err)
        if err > TOLERANCE[req["dtype"]]:
            print(f"request {i} ({req['dtype']}): {stage} relative "
                  f"error {err:.3g}")
            bad = 1
    return bad


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--requests", type=int, default=240)
    parser.add_argument("--seed", type=int, default=2026)
    # one request alone, as a failure names it ("request 517: ..."): those
    # before it are drawn, to reach its random numbers, and not sent
    parser.add_argument("--case", type=int)
    # every stride-th request only (the others drawn, not sent): a sample
    # of every form at a fraction of the time
    parser.add_argument("--stride", type=int, default=1)
    # requests in flight at once, each on a connection of its own, while
    # this process draws the next and computes the reference of the last:
    # an emulated server (tests/arch) then computes on every core
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    failures, worst = 0, {"float64": 0.0, "float32": 0.0}
    drawn = args.requests if args.case is None else args.case + 1
    sent_count = (len(range(0, args.requests, args.stride))
                  if args.case is None else 1)
    with Server(args.server, "--threads", "2") as server, \
            Senders(server, args.jobs) as senders:
        # replies are checked in the order drawn, the next ones in flight
        pending = collections.deque()
        for drawn_one in drawn_requests(rng, drawn, args):
            # every seventh request travels in the binary encoding
            binary = drawn_one[0] % 7 == 6
            sent = drawn_one[1]
            pending.append((drawn_one, senders.post(
                binary, binary_variant(sent) if binary else sent)))
            while len(pending) > args.jobs:
                one, reply = pending.popleft()
                failures += check(*one, reply.result(), worst)
        while pending:
            one, reply = pending.popleft()
            failures += check(*one, reply.result(), worst)
    print(f"oracle: {sent_count} requests, worst relative error "
          f"float64 {worst['float64']:.3g}, float32 {worst['float32']:.3g}")
    print(f"{sent_count - failures} passed, {failures} failed")
    return 1 if failures else 0


class Senders:
    """POSTs on `jobs` threads, each with a keep-alive connection of its
    own (the server's is the first); post() returns a future of (binary,
    (status, body))."""

    def __init__(self, server, jobs):
        self.server, self.local = server, threading.local()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        self.conns, self.lock = [], threading.Lock()

    def _connect(self):
        conn = self.local.conn = http.client.HTTPConnection(
            "127.0.0.1", self.server.port, timeout=self.server.conn.timeout)
        with self.lock:
            self.conns.append(conn)
        return conn

    def _post(self, binary, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn = getattr(self.local, "conn", None) or self._connect()
        for retry in (True, False):
            try:
                conn.request("POST", "/v1/attention", body=data,
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                return binary, (resp.status, json.loads(resp.read()))
            except (BrokenPipeError, ConnectionResetError,
                    http.client.RemoteDisconnected):
                # a connection left idle past the server's --idle-timeout
                # is closed by it: once more on a new one
                conn.close()
                if not retry:
                    raise
                conn = self._connect()

    def post(self, binary, body):
        return self.pool.submit(self._post, binary, body)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.pool.shutdown(cancel_futures=True)
        for conn in self.conns:
            conn.close()


if __name__ == "__main__":
    sys.exit(main())
