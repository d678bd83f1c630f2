"""Client: keep-alive connections to the service, one per thread that uses
it, and the calls a NumPy or PyTorch user makes (attention, mha, sdpa,
trace)."""
import http.client
import json
import threading
import urllib.parse

import numpy as np

from . import torch_names, wire
from .fields import split
from .result import Result

INFER_PATH = "/v2/models/attention/infer"
MODEL_PATH = "/v2/models/attention"


class Client:
    """Client("http://127.0.0.1:8080", api_key=None, timeout=None).

    api_key is sent as `Authorization: Bearer <key>` (the server's
    --api-key-file); timeout is in seconds for each request (None: wait).
    One Client may be shared by threads: each thread has a connection of
    its own (http.client's connections are not safe to share), opened on
    its first call; close() closes them all."""

    def __init__(self, url, api_key=None, timeout=None):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")
        self._scheme, self._netloc = parts.scheme, parts.netloc
        self._prefix = parts.path.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"} \
            if api_key else {}
        self._timeout = timeout
        self._local = threading.local()  # .conn: this thread's connection
        self._open = set()  # every thread's, for close()
        self._lock = threading.Lock()
        self._tensor_names = None

    # ---- HTTP ------------------------------------------------------------

    def _connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            kind = http.client.HTTPSConnection if self._scheme == "https" \
                else http.client.HTTPConnection
            conn = self._local.conn = kind(self._netloc,
                                           timeout=self._timeout)
            with self._lock:
                self._open.add(conn)
        return conn

    def _drop_connection(self):
        """Closes this thread's connection (the next call opens another)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                self._open.discard(conn)

    def _exchange(self, method, path, body=None, headers=None):
        """(status, response, body) of one exchange.  A server that refuses
        a body from its headers (413 from Content-Length) answers and closes
        before reading it all: that answer is read after the failed send.  A
        connection the server closed while idle is opened again once (a
        computation has no side effect, so sending it again is safe)."""
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request(method, self._prefix + path, body=body,
                             headers=dict(self._headers, **(headers or {})))
            except (BrokenPipeError, ConnectionResetError):
                pass  # an early answer, or a closed idle connection
            try:
                resp = conn.getresponse()
                return resp.status, resp, resp.read()
            except TimeoutError:
                self._drop_connection()
                raise
            except (http.client.HTTPException, OSError):
                self._drop_connection()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        """Closes every thread's connection."""
        with self._lock:
            conns, self._open = self._open, set()
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def tensor_names(self):
        """The server's tensor fields, from its model metadata (read once):
        every other field travels as a parameter."""
        if self._tensor_names is None:
            status, _, body = self._exchange("GET", MODEL_PATH)
            if status != 200:
                raise wire.error_of(status, body, [])
            self._tensor_names = {i["name"] for i in json.loads(body)["inputs"]}
        return self._tensor_names

    # ---- the calls -------------------------------------------------------

    def attention(self, stages=None, **fields):
        """POST one request: fields are /v1's (docs/api.md), arrays as NumPy
        arrays, torch tensors or lists (state_dict a module's or a whole
        model's state_dict(), module the attention module's prefix when it
        holds several); stages (or `return`) the stages to return, by
        default the server's (as /v1's: output and weights; need_weights
        false, /v1's and nn.MultiheadAttention's, the output alone, which
        /v2 asks by naming it the one output; not with stages, ValueError).
        → Result."""
        if "state_dict" in fields:  # /v2 takes its tensors as inputs
            fields = torch_names.state_dict_fields(fields)
        stages = stages or fields.get("return")
        stages = list(stages) if stages else None
        if "need_weights" in fields:
            if not isinstance(fields["need_weights"], (bool, np.bool_)):
                raise TypeError("need_weights must be true or false")
            if stages is not None:
                raise ValueError("need_weights is nn.MultiheadAttention's "
                                 "choice of the stages returned, which "
                                 "stages (or return) names: send one of "
                                 "them")
            if not fields["need_weights"]:
                stages = ["output"]
        dtype = fields.get("dtype", "float64")
        if dtype not in wire.FLOAT_TYPES:
            raise ValueError(f"dtype {dtype!r}: float64, float32, float16 "
                             f"or bfloat16")
        tensors, parameters = split(fields, self.tensor_names())
        body, header_length = wire.frame(tensors, parameters, stages, dtype)
        status, resp, data = self._exchange(
            "POST", INFER_PATH, body,
            {"Inference-Header-Content-Length": str(header_length)})
        if status != 200:
            raise wire.error_of(status, data, list(tensors))
        length = resp.getheader("Inference-Header-Content-Length")
        meta, arrays = wire.unframe(data, int(length) if length else None)
        parameters = dict(meta.get("parameters", {}), dtype=dtype)
        return Result(arrays, parameters, fields, self.url)

    def mha(self, module, query, key=None, value=None, key_padding_mask=None,
            attn_mask=None, need_weights=True, average_attn_weights=True,
            is_causal=False):
        """What module(query, key, value, ...) returns, an
        nn.MultiheadAttention's (output, weights or None) as torch tensors
        of its dtype and shapes, computed by the server from the module's
        state_dict and options."""
        fields, stages, finish = torch_names.mha_request(
            module, query, key, value, key_padding_mask, attn_mask,
            need_weights, average_attn_weights, is_causal)
        return finish(self.attention(stages=stages, **fields))

    def sdpa(self, q, k, v, attn_mask=None, is_causal=False, scale=None):
        """scaled_dot_product_attention(q, k, v, attn_mask, is_causal=...,
        scale=...) by its definition: torch tensors in, a torch tensor out
        (NumPy arrays in, a NumPy array out)."""
        fields, stages, finish = torch_names.sdpa_request(
            q, k, v, attn_mask, is_causal, scale)
        return finish(self.attention(stages=stages, **fields))

    def trace(self, model, *inputs, rtol=None, **kwargs):
        """Runs model(*inputs, **kwargs) once, sends every
        nn.MultiheadAttention's call to the server and checks its output
        against the module's.  → Trace (attention_client.trace)."""
        from .trace import trace
        return trace(self, model, inputs, kwargs, rtol)
