"""The Python client against the server and Debian's PyTorch 1.13, in float64
to 1e-12 (float32 to 1e-5).  Run by run_python.py with the venv the client
was installed into (make test-python).

PyTorch 1.13 has no scaled_dot_product_attention: sdpa_definition() writes
its definition in torch ops, as PyTorch 2's documentation gives it."""
import base64
import json
import math
import os
import re
import struct
import sys
import tempfile
import unittest
import urllib.request
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from serverproc import Server, default_server  # noqa: E402

import attention_client  # noqa: E402
from attention_client import AttentionError, Client  # noqa: E402

F64 = torch.float64
TOLERANCE = 1e-12
SERVER = None


def setUpModule():
    global SERVER
    SERVER = Server(os.path.abspath(default_server()), "--threads", "2")


def tearDownModule():
    SERVER.stop()
    SERVER.proc.stdout.close()


def url():
    return f"http://127.0.0.1:{SERVER.port}"


def rel_error(got, want):
    got = np.asarray(got.detach() if torch.is_tensor(got) else got, float)
    want = np.asarray(want.detach() if torch.is_tensor(want) else want, float)
    return np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)


def module(e=8, h=2, seed=0, dtype=F64, **options):
    """nn.MultiheadAttention with random weights and biases (PyTorch starts
    its biases at zero), in eval mode."""
    torch.manual_seed(seed)
    m = torch.nn.MultiheadAttention(e, h, dtype=dtype, **options).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    return m


def randn(*shape, seed=1, dtype=F64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed),
                       dtype=dtype)


def sdpa_definition(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """torch.nn.functional.scaled_dot_product_attention, by its definition."""
    L, S = q.size(-2), k.size(-2)
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        bias = bias.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(~attn_mask, float("-inf"))
        else:
            bias = bias + attn_mask
    weights = torch.softmax(q @ k.transpose(-2, -1) * scale + bias, dim=-1)
    return weights @ v


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(url())

    def tearDown(self):
        self.client.close()

    def assert_mha(self, m, *args, tolerance=TOLERANCE, **kwargs):
        """client.mha(...) returns what m(...) returns."""
        got_out, got_w = self.client.mha(m, *args, **kwargs)
        kwargs.pop("is_causal", None)
        # with gradients: PyTorch's own path in torch ops (1.13's fused
        # path, taken without them, fails on a module without biases)
        want_out, want_w = m(*args, **kwargs)
        self.assertEqual(got_out.dtype, want_out.dtype)
        self.assertEqual(got_out.shape, want_out.shape)
        self.assertLess(rel_error(got_out, want_out), tolerance)
        if want_w is None:
            self.assertIsNone(got_w)
        else:
            self.assertEqual(got_w.dtype, want_w.dtype)
            self.assertEqual(got_w.shape, want_w.shape)
            self.assertLess(rel_error(got_w, want_w), tolerance)
        return got_out, got_w

    def raised(self, call, **fields):
        with self.assertRaises(AttentionError) as caught:
            call(**fields)
        return caught.exception


class TestInstall(ClientTest):
    def test_the_package_comes_from_the_venv_not_the_sources(self):
        self.assertIn(os.path.join("site-packages", "attention_client"),
                      attention_client.__file__)


class TestAttention(ClientTest):
    BODY = {"x": [[1, 0], [0, 1], [1, 1]], "w_q": [[1, 0], [0, 1]],
            "w_k": [[1, 0], [0, 1]], "w_v": [[2, 0], [0, 1]], "causal": True,
            "tokens": ["the", "cat", "sat"]}

    def test_stages_are_the_numbers_of_v1_as_numpy_arrays(self):
        result = self.client.attention(
            stages=["masked_scores", "weights", "output"], **self.BODY)
        status, reply = SERVER.post(dict(
            self.BODY, **{"return": ["weights", "output"]}))
        self.assertEqual(status, 200)
        self.assertTrue(np.array_equal(result["weights"], reply["weights"]))
        self.assertTrue(np.array_equal(result["output"], reply["output"]))
        self.assertEqual(result["masked_scores"][0, 0, 1], -np.inf)
        self.assertEqual(result.shapes, {"masked_scores": (1, 3, 3),
                                         "weights": (1, 3, 3),
                                         "output": (3, 2)})
        self.assertEqual(result.parameters, {
            "num_heads": 1, "head_dim": 2, "value_dim": 2,
            "scale": 0.7071067811865475, "causal": True,
            "dtype": "float64"})
        self.assertEqual(result.tokens, ["the", "cat", "sat"])

    def test_default_stages_are_output_and_weights(self):
        result = self.client.attention(**self.BODY)
        self.assertEqual(sorted(result), ["output", "weights"])

    def test_without_stages_the_server_picks_them(self):
        """The default stages are the server's (its schema row of return),
        not a list the client types again: no outputs are named, and every
        output comes back in binary."""
        body, length = attention_client.wire.frame(
            {}, {"causal": True}, None, "float64")
        self.assertEqual(json.loads(body[:length]), {
            "inputs": [],
            "parameters": {"causal": True, "binary_data_output": True}})

    def test_need_weights_is_v1s_on_the_v2_route(self):
        """need_weights=False returns /v1's output alone (asked of /v2 as
        its one output, which /v2 takes instead of the field); true, the
        default stages; beside stages, or not a boolean, refused as /v1
        refuses it."""
        status, reply = SERVER.post(dict(self.BODY, need_weights=False))
        self.assertEqual(status, 200)
        self.assertNotIn("weights", reply)
        result = self.client.attention(need_weights=False, **self.BODY)
        self.assertEqual(list(result), ["output"])
        self.assertTrue(np.array_equal(result["output"], reply["output"]))
        self.assertEqual(result.parameters,
                         {k: reply[k] for k in result.parameters})
        # its /v1 body gives the same reply
        self.assertEqual(SERVER.post(result.request), (status, reply))
        result = self.client.attention(need_weights=True, **self.BODY)
        self.assertEqual(sorted(result), ["output", "weights"])
        with self.assertRaisesRegex(ValueError, "send one of them"):
            self.client.attention(need_weights=False, stages=["output"],
                                  **self.BODY)
        with self.assertRaisesRegex(TypeError, "true or false"):
            self.client.attention(need_weights=0, **self.BODY)

    def test_float32_tensors_and_a_return_field(self):
        result = self.client.attention(
            dtype="float32", heads=[0], **{"return": ["q"]},
            **dict(self.BODY, x=np.array(self.BODY["x"], np.float32)))
        self.assertEqual(result["q"].dtype, np.float32)
        self.assertEqual(result.parameters["dtype"], "float32")
        self.assertEqual(result["q"].tolist(), [[[1, 0], [0, 1], [1, 1]]])

    def test_positions_travel_as_whole_numbers(self):
        """The server takes positions in integer datatypes only: a float32
        request's positions give /v1's answer, a fraction is refused here."""
        body = dict(self.BODY, positions=[0, 2, 9], rope=True)
        result = self.client.attention(dtype="float32", **dict(
            body, positions=np.array([0.0, 2.0, 9.0], np.float32)))
        status, reply = SERVER.post(dict(body, dtype="float32"))
        self.assertEqual(status, 200)
        self.assertTrue(np.array_equal(
            result["output"], np.array(reply["output"], np.float32)))
        with self.assertRaisesRegex(ValueError, "positions holds whole"):
            self.client.attention(**dict(body, positions=[0, 1.5, 2]))


class TestMha(ClientTest):
    def test_self_attention_batch_first_averaged_weights(self):
        m = module(batch_first=True)
        x = randn(3, 5, 8)
        self.assert_mha(m, x, x, x)

    def test_self_attention_per_head_weights(self):
        m = module(batch_first=True)
        x = randn(3, 5, 8)
        _, w = self.assert_mha(m, x, x, x, average_attn_weights=False)
        self.assertEqual(tuple(w.shape), (3, 2, 5, 5))

    def test_sequence_first_inputs_and_outputs(self):
        m = module(batch_first=False)
        x = randn(5, 3, 8)
        self.assert_mha(m, x, x, x, average_attn_weights=False)
        self.assert_mha(m, x, x, x)
        k, v = randn(7, 3, 8, seed=2), randn(7, 3, 8, seed=3)
        self.assert_mha(m, x, k, v, average_attn_weights=False)

    def test_one_unbatched_sequence(self):
        m = module()
        x = randn(5, 8)
        self.assert_mha(m, x, x, x)
        self.assert_mha(m, x, x, x, average_attn_weights=False)

    def test_key_and_value_default_to_the_query(self):
        m = module(batch_first=True)
        x = randn(2, 4, 8)
        out, _ = self.client.mha(m, x)
        with torch.no_grad():
            self.assertLess(rel_error(out, m(x, x, x)[0]), TOLERANCE)

    def test_cross_attention_key_is_value(self):
        m = module(batch_first=True)
        x, memory = randn(2, 4, 8), randn(2, 7, 8, seed=2)
        self.assert_mha(m, x, memory, memory, average_attn_weights=False)

    def test_cross_attention_key_and_value_apart(self):
        m = module(batch_first=True)
        x, k, v = randn(2, 4, 8), randn(2, 7, 8, seed=2), \
            randn(2, 7, 8, seed=3)
        self.assert_mha(m, x, k, v, average_attn_weights=False)

    def test_kdim_and_vdim(self):
        m = module(kdim=5, vdim=3, batch_first=True)
        x, k, v = randn(2, 4, 8), randn(2, 6, 5, seed=2), \
            randn(2, 6, 3, seed=3)
        self.assert_mha(m, x, k, v, average_attn_weights=False)
        m = module(kdim=5, vdim=5)
        kv = randn(6, 2, 5, seed=2)
        self.assert_mha(m, randn(4, 2, 8), kv, kv)

    def test_without_biases(self):
        m = module(bias=False, batch_first=True)
        x = randn(2, 4, 8)
        self.assert_mha(m, x, x, x)

    def test_need_weights_false_returns_none(self):
        m = module(batch_first=True)
        x = randn(2, 4, 8)
        self.assert_mha(m, x, x, x, need_weights=False)

    def test_float32_module(self):
        m = module(dtype=torch.float32, batch_first=True)
        x = randn(2, 4, 8, dtype=torch.float32)
        self.assert_mha(m, x, x, x, tolerance=1e-5)


class TestMhaMasks(ClientTest):
    """Each mask in nn.MultiheadAttention's own sense."""

    def setUp(self):
        super().setUp()
        self.m = module(e=8, h=2, batch_first=True)
        self.x = randn(3, 5, 8)
        self.memory = randn(3, 6, 8, seed=4)
        rng = np.random.default_rng(7)
        self.hidden = torch.tensor(rng.random((5, 6)) > 0.6)  # true = hidden
        self.hidden[:, 0] = False  # every query keeps a key
        self.per_head = torch.tensor(rng.random((3 * 2, 5, 6)) > 0.6)
        self.per_head[:, :, 1] = False
        self.padding = torch.tensor([[False] * 6, [False] * 4 + [True] * 2,
                                     [False, True] * 3])

    def cross(self, **kwargs):
        return self.assert_mha(self.m, self.x, self.memory, self.memory,
                               average_attn_weights=False, **kwargs)

    def test_boolean_attn_mask_true_is_masked_out(self):
        _, w = self.cross(attn_mask=self.hidden)
        self.assertTrue((w[:, :, self.hidden] == 0).all())

    def test_boolean_attn_mask_per_sequence_and_head(self):
        self.cross(attn_mask=self.per_head)

    def test_float_attn_mask_is_added(self):
        self.cross(attn_mask=randn(5, 6, seed=5))
        self.cross(attn_mask=randn(6, 5, 6, seed=5))

    def test_float_attn_mask_with_minus_infinity(self):
        causal = torch.nn.Transformer.generate_square_subsequent_mask(5) \
            .to(F64)
        self.assert_mha(self.m, self.x, self.x, self.x, attn_mask=causal)
        mixed = randn(5, 6, seed=6).masked_fill(self.hidden, float("-inf"))
        self.cross(attn_mask=mixed)

    def test_boolean_key_padding_mask_true_is_padding(self):
        _, w = self.cross(key_padding_mask=self.padding)
        self.assertTrue((w[1, :, :, 4:] == 0).all())

    def test_key_padding_with_attn_masks(self):
        self.cross(key_padding_mask=self.padding, attn_mask=self.hidden)
        self.cross(key_padding_mask=self.padding,
                   attn_mask=randn(5, 6, seed=5))

    def test_float_key_padding_mask_is_added_to_each_key(self):
        # PyTorch 1.13 takes boolean padding only; PyTorch 2 adds a float
        # one to every query's score of that key: an attn_mask doing so
        additive = randn(3, 6, seed=8)
        additive[1, 4:] = float("-inf")
        got, _ = self.client.mha(self.m, self.x, self.memory, self.memory,
                                 key_padding_mask=additive)
        as_attn = additive[:, None, None, :].expand(3, 2, 5, 6) \
            .reshape(6, 5, 6)
        with torch.no_grad():
            want, _ = self.m(self.x, self.memory, self.memory,
                             attn_mask=as_attn)
        self.assertLess(rel_error(got, want), TOLERANCE)

    def test_float_key_padding_mask_with_an_attn_mask(self):
        # added to the module's attn_mask, a boolean one as −∞ (PyTorch 2)
        additive = randn(3, 6, seed=9)
        additive[2, 5] = float("-inf")
        for attn_mask in (randn(5, 6, seed=5), self.hidden):
            got, got_w = self.client.mha(
                self.m, self.x, self.memory, self.memory,
                key_padding_mask=additive, attn_mask=attn_mask,
                average_attn_weights=False)
            base = attn_mask if attn_mask.dtype != torch.bool else \
                torch.zeros(5, 6, dtype=F64).masked_fill(attn_mask,
                                                        float("-inf"))
            as_attn = (base + additive[:, None, None, :]) \
                .expand(3, 2, 5, 6).reshape(6, 5, 6)
            with torch.no_grad():
                want, want_w = self.m(self.x, self.memory, self.memory,
                                      attn_mask=as_attn,
                                      average_attn_weights=False)
            self.assertLess(rel_error(got, want), TOLERANCE)
            self.assertLess(rel_error(got_w, want_w), TOLERANCE)

    def test_is_causal_is_the_causal_mask(self):
        # PyTorch 1.13's module has no is_causal: its causal attn_mask
        causal = torch.ones(5, 5, dtype=torch.bool).triu(diagonal=1)
        got, got_w = self.client.mha(self.m, self.x, is_causal=True)
        with torch.no_grad():
            want, want_w = self.m(self.x, self.x, self.x, attn_mask=causal)
        self.assertLess(rel_error(got, want), TOLERANCE)
        self.assertLess(rel_error(got_w, want_w), TOLERANCE)


class TestSdpa(ClientTest):
    def assert_sdpa(self, q, k, v, **kwargs):
        got = self.client.sdpa(q, k, v, **kwargs)
        want = sdpa_definition(q, k, v, **kwargs)
        self.assertEqual(got.shape, want.shape)
        self.assertEqual(got.dtype, want.dtype)
        self.assertLess(rel_error(got, want), TOLERANCE)

    def setUp(self):
        super().setUp()
        self.q, self.k = randn(2, 3, 4, 5), randn(2, 3, 6, 5, seed=2)
        self.v = randn(2, 3, 6, 7, seed=3)

    def test_batch_and_heads(self):
        self.assert_sdpa(self.q, self.k, self.v)

    def test_other_leading_dimensions(self):
        self.assert_sdpa(self.q[0], self.k[0], self.v[0])
        self.assert_sdpa(self.q[0, 0], self.k[0, 0], self.v[0, 0])
        self.assert_sdpa(self.q[None], self.k[None], self.v[None])

    def test_boolean_mask_true_may_attend(self):
        keep = torch.tensor(np.random.default_rng(1).random((4, 6)) > 0.4)
        keep[:, 0] = True
        self.assert_sdpa(self.q, self.k, self.v, attn_mask=keep)

    def test_float_mask_broadcast_with_minus_infinity(self):
        added = randn(2, 1, 4, 6, seed=4)
        added[:, :, 1:, 3] = float("-inf")
        self.assert_sdpa(self.q, self.k, self.v, attn_mask=added)

    def test_masks_broadcast_over_queries_keys_and_heads(self):
        rng = np.random.default_rng(3)
        keys = torch.tensor(rng.random((1, 6)) > 0.3)
        keys[0, 0] = True
        self.assert_sdpa(self.q, self.k, self.v, attn_mask=keys)
        self.assert_sdpa(self.q, self.k, self.v, attn_mask=randn(4, 1, seed=5))
        self.assert_sdpa(self.q, self.k, self.v,
                         attn_mask=randn(3, 4, 6, seed=6))
        self.assert_sdpa(self.q, self.k, self.v,
                         attn_mask=randn(2, 1, 1, 6, seed=7))

    def test_causal_and_scale(self):
        self.assert_sdpa(self.q, self.k, self.v, is_causal=True)
        self.assert_sdpa(self.q, self.k, self.v, scale=0.3)

    def test_numpy_in_numpy_out(self):
        got = self.client.sdpa(self.q.numpy(), self.k.numpy(), self.v.numpy())
        self.assertIsInstance(got, np.ndarray)
        self.assertLess(rel_error(got, sdpa_definition(self.q, self.k,
                                                       self.v)), TOLERANCE)


class TestThreads(unittest.TestCase):
    """One Client shared by 8 threads, 100 calls each, against a server
    that closes a connection idle for a second: every call answered, and
    right (each thread's x differs)."""

    def test_eight_threads_share_one_client(self):
        import threading
        import time
        server = Server(os.path.abspath(default_server()), "--threads", "2",
                        "--idle-timeout", "1")
        client = Client(f"http://127.0.0.1:{server.port}")
        errors, done = [], []

        def work(t):
            try:
                x = np.array([[float(t), 1.0], [0.0, 1.0]])
                for i in range(100):
                    if i == 50:
                        time.sleep(1.5)  # the server closes it meanwhile
                    out = client.attention(x=x, w_q=np.eye(2), w_k=np.eye(2),
                                           w_v=np.eye(2), stages=["q"])
                    if not np.array_equal(out["q"][0], x):
                        raise AssertionError(f"thread {t} got {out['q']}")
                done.append(t)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"thread {t}: {type(e).__name__}: {e}")

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        client.close()
        server.stop()
        server.proc.stdout.close()
        self.assertEqual(errors, [])
        self.assertEqual(sorted(done), list(range(8)))


class TestStateDict(ClientTest):
    def setUp(self):
        super().setUp()
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(
            16, 4, dim_feedforward=32, dropout=0.0, batch_first=True,
            dtype=F64)
        self.model = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
        self.x = randn(5, 16)
        attn = self.model.layers[1].self_attn
        self.want = attn(self.x, self.x, self.x)[0]

    def test_a_whole_models_state_dict_with_the_module_named(self):
        got = self.client.attention(
            x=self.x, num_heads=4, state_dict=self.model.state_dict(),
            module="layers.1.self_attn")
        self.assertLess(rel_error(got["output"], self.want), TOLERANCE)

    def test_the_server_takes_a_whole_models_state_dict_too(self):
        body = {"x": self.x.tolist(), "num_heads": 4, "return": ["output"],
                "module": "layers.1.self_attn",
                "state_dict": {k: v.tolist() for k, v in
                               self.model.state_dict().items()}}
        status, reply = SERVER.post(body)
        self.assertEqual(status, 200, reply)
        self.assertLess(rel_error(reply["output"], self.want), TOLERANCE)
        del body["module"]
        status, reply = SERVER.post(body)
        self.assertEqual((status, reply["code"], reply["pointer"]),
                         (400, "missing_field", "/module"))
        self.assertIn('"layers.0.self_attn", "layers.1.self_attn"',
                      reply["detail"])

    def test_several_attention_modules_and_no_module_are_refused(self):
        with self.assertRaises(ValueError) as caught:
            self.client.attention(x=self.x, num_heads=4,
                                  state_dict=self.model.state_dict())
        self.assertIn('"layers.0.self_attn", "layers.1.self_attn"',
                      str(caught.exception))


class TestErrors(ClientTest):
    def test_a_mismatch_names_its_field(self):
        e = self.raised(self.client.attention, x=[[1, 0]], w_q=np.eye(3),
                        w_k=np.eye(2), w_v=np.eye(2))
        self.assertEqual((e.status, e.code, e.pointer),
                         (400, "shape_mismatch", "/w_q"))
        self.assertEqual(e.detail, "w_q has 3 rows but x has 2 columns: "
                                   "x @ W needs them equal")

    def test_add_bias_kv_and_add_zero_attn_are_422(self):
        x = randn(2, 4, 8)
        for options in ({"add_bias_kv": True}, {"add_zero_attn": True}):
            m = module(batch_first=True, **options)
            e = self.raised(self.client.mha, module=m, query=x)
            self.assertEqual((e.status, e.code), (422, "unsupported_option"))
            self.assertIn("q, k and v", e.detail)

    def test_a_state_dict_without_num_heads_is_refused(self):
        m = module(e=8, h=4)
        e = self.raised(self.client.attention, x=randn(3, 8), **m.state_dict())
        self.assertEqual((e.status, e.code, e.pointer),
                         (400, "missing_field", "/num_heads"))
        self.assertIn("nn.MultiheadAttention(embed_dim, num_heads)", e.detail)

    def test_mha_sends_the_head_count_and_batch_order(self):
        for batch_first in (True, False):
            m = module(e=8, h=4, batch_first=batch_first)
            x = randn(3, 2, 8)
            fields, _, _ = attention_client.torch_names.mha_request(
                m, x, x, x, None, None, True, True, False)
            self.assertEqual((fields["num_heads"], fields["batch_first"]),
                             (4, batch_first))
            out, _ = self.client.mha(m, x)
            self.assertLess(rel_error(out, m(x, x, x)[0]), TOLERANCE)

    def test_an_unknown_field(self):
        e = self.raised(self.client.attention, x=[[1.0]], w_q=[[1.0]],
                        w_k=[[1.0]], w_v=[[1.0]], W_q=1)
        self.assertEqual((e.status, e.code, e.pointer),
                         (400, "unknown_field", "/W_q"))

    def test_an_unknown_keyword_says_which_field_it_meant(self):
        # a tensor under a wrong name travels as a parameter: the refusal
        # names the input it meant and lists the inputs too
        e = self.raised(self.client.attention, x=[[1.0]], w_q=[[1.0]],
                        w_k=[[1.0]], w_v=[[1.0]], W_o=[[1.0]])
        self.assertEqual((e.code, e.pointer), ("unknown_field", "/W_o"))
        self.assertIn('did you mean the input "w_o"?', e.detail)
        self.assertIn("inputs: x, context, w_q", e.detail)
        e = self.raised(self.client.attention, x=[[1.0]], w_q=[[1.0]],
                        w_k=[[1.0]], w_v=[[1.0]], num_head=1)
        self.assertIn('did you mean "num_heads"?', e.detail)

    def test_a_result_that_overflows(self):
        e = self.raised(self.client.attention, x=[[1.0]], w_q=[[1e200]],
                        w_k=[[1e200]], w_v=[[1.0]])
        self.assertEqual((e.status, e.code), (422, "non_finite_result"))

    def test_a_body_refused_from_its_length_before_it_is_sent(self):
        # the server answers 413 and closes while the client still sends
        with Server(os.path.abspath(default_server()),
                    "--max-body", "100000") as server:
            with Client(f"http://127.0.0.1:{server.port}") as client:
                e = self.raised(client.attention, x=np.ones((40000, 64)),
                                w_q=np.eye(64), w_k=np.eye(64),
                                w_v=np.eye(64))
                self.assertEqual((e.status, e.code), (413, "body_too_large"))
                # and the next request opens a new connection
                result = client.attention(x=[[1.0]], w_q=[[1.0]],
                                          w_k=[[1.0]], w_v=[[1.0]])
                self.assertEqual(result["weights"].tolist(), [[[1.0]]])
            server.proc.stdout.close()

    def test_the_api_key(self):
        with tempfile.NamedTemporaryFile("w", suffix=".key") as key:
            key.write("s3cret\n")
            key.flush()
            with Server(os.path.abspath(default_server()),
                        "--api-key-file", key.name) as server:
                base = f"http://127.0.0.1:{server.port}"
                fields = dict(x=[[1.0]], w_q=[[1.0]], w_k=[[1.0]],
                              w_v=[[1.0]])
                with Client(base, api_key="wrong") as client:
                    e = self.raised(client.attention, **fields)
                self.assertEqual((e.status, e.code), (401, "unauthorized"))
                with Client(base, api_key="s3cret", timeout=10) as client:
                    result = client.attention(**fields)
                self.assertEqual(result["weights"].tolist(), [[[1.0]]])
            server.proc.stdout.close()


def unpack_link(link):
    """The page's unpackState: base64url, inflate-raw, JSON."""
    state = link.split("#state=", 1)[1]
    raw = base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
    return json.loads(zlib.decompress(raw, -15))


def png_images(html):
    """Each heatmap image of a view: (its palette indices, rows × cols, and
    the palette as RGB triples)."""
    images = []
    for data in re.findall(r'src="data:image/png;base64,([^"]*)"', html):
        png = base64.b64decode(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        at, chunks = 8, {}
        while at < len(png):
            length, kind = struct.unpack(">I4s", png[at:at + 8])
            chunks[kind] = chunks.get(kind, b"") + png[at + 8:at + 8 + length]
            at += 12 + length
        cols, rows, depth, kind = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
        assert (depth, kind) == (8, 3)  # one byte of palette a pixel
        raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8)
        raw = raw.reshape(rows, cols + 1)
        assert not raw[:, 0].any()  # no filter
        palette = np.frombuffer(chunks[b"PLTE"], np.uint8).reshape(-1, 3)
        images.append((raw[:, 1:], palette))
    return images


def lesson(name):
    with open(os.path.join(os.path.dirname(__file__), "..", "lessons",
                           name + ".json")) as f:
        return json.load(f)


MEGABYTE = 1_000_000


class TestNotebook(ClientTest):
    def test_html_has_a_heatmap_per_head_with_tokens_and_the_page_link(self):
        body = {"x": [[1, 0, 1], [0, 1, 1], [1, 1, 0]], "w_q": np.eye(3),
                "w_k": np.eye(3), "w_v": np.eye(3), "mask": np.tril(
                    np.ones((3, 3), bool)), "tokens": ["a", "b<", "c"]}
        result = self.client.attention(**body)
        html = result._repr_html_()
        self.assertEqual(html.count("<svg"), 1)
        self.assertEqual(html.count("<rect"), 9)
        self.assertIn(">b&lt;</text>", html)
        link = result.share_link()
        self.assertTrue(link.startswith(url() + "/#state="))
        self.assertIn(link.replace("&", "&amp;"), html)
        state = unpack_link(link)
        self.assertEqual(state["head"], 0)
        self.assertEqual(state["body"]["tokens"], ["a", "b<", "c"])
        # the page posts the body as it is: the same weights
        status, reply = SERVER.post(state["body"])
        self.assertEqual(status, 200)
        self.assertTrue(np.array_equal(reply["weights"], result["weights"]))
        # and the page itself is served there
        with urllib.request.urlopen(link.split("#")[0]) as page:
            self.assertIn(b"<html", page.read(200).lower())
        # the colour scale of the heatmaps
        self.assertIn("linear-gradient(to right, #ffffd9,", html)

    def test_a_request_too_large_for_a_link_gets_a_note_instead(self):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(40, 32))
        result = self.client.attention(x=x, w_q=np.eye(32), w_k=np.eye(32),
                                       w_v=np.eye(32))
        self.assertGreater(len(result.share_link()), 2000)
        html = result._repr_html_()
        self.assertNotIn("#state=", html)
        self.assertIn("too large for a link", html)
        self.assertIn("save_bundle()", html)

    def test_the_lessons_are_drawn_cell_by_cell_with_their_link(self):
        for name in ("lesson_000", "lesson_001", "lesson_002"):
            body = lesson(name)
            body.pop("return", None)
            result = self.client.attention(**body)
            html = result._repr_html_()
            h, n, m = result["weights"].shape
            self.assertEqual(html.count("<svg"), h, name)
            self.assertEqual(html.count("<rect"), h * n * m, name)
            self.assertEqual(html.count("<title>"), h * n * m, name)
            self.assertIn("linear-gradient(to right, #ffffd9,", html)
            link = result.share_link()
            if len(link) <= 2000:
                self.assertIn(link.replace("&", "&amp;"), html)
                status, reply = SERVER.post(unpack_link(link)["body"])
                self.assertEqual(status, 200, reply)
                self.assertTrue(np.array_equal(reply["weights"],
                                               result["weights"]))
            else:
                self.assertNotIn("#state=", html)
                self.assertIn("save_bundle()", html)

    def test_a_layer_of_width_512_stays_under_a_megabyte(self):
        # nn.MultiheadAttention(512, h) on 32 tokens: its request is 12.9 MB
        # of JSON, its weights 8 or 16 heads of 32 × 32
        x = randn(1, 32, 512)
        for h in (8, 16):
            m = module(e=512, h=h, batch_first=True)
            fields, stages, _ = attention_client.torch_names.mha_request(
                m, x, x, x, None, None, True, False, False)
            result = self.client.attention(stages=stages, **fields)
            html = result._repr_html_()
            self.assertLess(len(html.encode()), MEGABYTE, h)
            self.assertEqual(len(png_images(html)), h)
            self.assertNotIn("#state=", html)
            self.assertIn("too large for a link", html)
            self.assertIn('"Save as a page"', html)
            self.assertIn("linear-gradient(to right, #ffffd9,", html)

    def test_a_long_sequence_is_drawn_whole_as_the_page_samples_it(self):
        # 8 heads of 300 × 300 are more cells than the view's pixels: each
        # pixel is the cell under its centre, and the last query's row is
        # drawn (causal: its last key has weight, the first query's none)
        m = module(e=16, h=8, batch_first=True)
        x = randn(1, 300, 16)
        fields, stages, _ = attention_client.torch_names.mha_request(
            m, x, x, x, None, None, True, False, True)
        result = self.client.attention(stages=stages, **fields)
        html = result._repr_html_()
        self.assertLess(len(html.encode()), MEGABYTE)
        images = png_images(html)
        self.assertEqual(len(images), 8)
        weights = result["weights"][0]
        for head, (index, palette) in zip(weights, images):
            rows, cols = index.shape
            self.assertLess(rows, 300)
            self.assertGreater(rows, 100)
            i = ((np.arange(rows) + 0.5) * 300 / rows).astype(int)
            j = ((np.arange(cols) + 0.5) * 300 / cols).astype(int)
            want = np.rint(head[np.ix_(i, j)] * 255)
            self.assertTrue(np.array_equal(index, want))
            self.assertEqual(index[0, -1], 0)
            self.assertEqual(i[-1], 299)
            self.assertEqual(j[-1], 299)
            # the palette is the legend's scale: 0 its first stop, 1 its last
            self.assertEqual(bytes(palette[0]).hex(), "ffffd9")
            self.assertEqual(bytes(palette[255]).hex(), "081d58")

    def test_a_trace_of_a_wide_encoder_stays_under_a_megabyte(self):
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(
            512, 8, dim_feedforward=64, dropout=0.0, batch_first=True,
            dtype=F64)
        model = torch.nn.TransformerEncoder(layer, 2).eval()
        trace = self.client.trace(model, randn(1, 32, 512))
        html = trace._repr_html_()
        self.assertLess(len(html.encode()), MEGABYTE)
        self.assertEqual(len(png_images(html)), 16)
        self.assertIn("<h4>layers.1.self_attn</h4>", html)

    def test_a_link_keeps_minus_infinity_in_a_mask(self):
        # JSON has no −∞: a 0/−∞ mask goes as booleans, any other in the
        # binary form; either way the page's request gives the same weights
        for mask in ([[0, -np.inf], [0, 0]], [[0.5, -np.inf], [1, 0]]):
            result = self.client.attention(
                x=np.eye(2), w_q=np.eye(2), w_k=np.eye(2), w_v=np.eye(2),
                mask=np.array(mask))
            self.assertEqual(result["weights"][0, 0, 1], 0)
            body = unpack_link(result.share_link())["body"]
            status, reply = SERVER.post(body)
            self.assertEqual(status, 200, reply)
            self.assertTrue(np.array_equal(reply["weights"],
                                           result["weights"]))

    def test_several_heads_of_a_batch(self):
        m = module(e=8, h=4, batch_first=True)
        x = randn(2, 3, 8)
        fields, stages, _ = attention_client.torch_names.mha_request(
            m, x, x, x, None, None, True, False, False)
        html = self.client.attention(stages=stages, **fields)._repr_html_()
        self.assertEqual(html.count("<svg"), 4)
        self.assertIn("sequence 0 of 2", html)

    def test_named_heads_keep_their_numbers(self):
        result = self.client.attention(
            x=np.eye(4), w_q=np.eye(4), w_k=np.eye(4), w_v=np.eye(4),
            num_heads=4, heads=[3, 1])
        html = result._repr_html_()
        self.assertLess(html.index("head 3</figcaption>"),
                        html.index("head 1</figcaption>"))
        self.assertNotIn("head 0</figcaption>", html)


class TestHalfPrecision(ClientTest):
    """float16 and bfloat16 tensors travel in their type (FP16, BF16) and
    come back in it; the server computes in float32 and rounds each number
    of the reply once, so it is within half a step of the type of PyTorch's
    float32 result on the same values (relative to the largest)."""

    def test_mha_keeps_the_type_within_half_a_step(self):
        from half_precision import errors
        for kind, step in ((torch.float16, 2 ** -10),
                           (torch.bfloat16, 2 ** -7)):
            for config in ((16, 2, 2, 8), (64, 4, 2, 64)):
                out, weights, _ = errors(self.client, *config, kind)
                self.assertLessEqual(out, step / 2, (kind, config))
                self.assertLessEqual(weights, step / 2, (kind, config))

    def test_sdpa_and_arrays_keep_the_type(self):
        for kind in (torch.float16, torch.bfloat16):
            q = randn(2, 3, 5, 8).to(kind)
            out = self.client.sdpa(q, q, q, is_causal=True)
            self.assertEqual(out.dtype, kind)
            want = sdpa_definition(q.double(), q.double(), q.double(),
                                   is_causal=True)
            self.assertLess(rel_error(out.double(), want), 2 ** -7)
        result = self.client.attention(
            x=np.array([[1, 0], [0, 1], [1, 1]], np.float16), w_q=np.eye(2),
            w_k=np.eye(2), w_v=np.eye(2) / 10, dtype="float16")
        self.assertEqual(result["output"].dtype, np.float16)
        self.assertEqual(result.parameters["dtype"], "float16")
        # bfloat16, which NumPy lacks, arrives as float32 holding it
        result = self.client.attention(
            x=[[1, 0], [0, 1], [1, 1]], w_q=np.eye(2), w_k=np.eye(2),
            w_v=np.eye(2) / 10, dtype="bfloat16")
        self.assertEqual(result["output"].dtype, np.float32)
        bits = result["output"].view(np.uint32)
        self.assertFalse((bits & 0xFFFF).any())

    def test_v1_json_and_base64_give_the_bits_of_v2_binary(self):
        x = np.array([[0.1, -2.5], [3.3, 0.7], [1e-6, 1]])
        w = np.array([[0.3, -1.1], [0.9, 0.2]])
        for dtype, np_type in (("float16", "<f2"), ("bfloat16", None)):
            fields = dict(x=x, w_q=w, w_k=w.T, w_v=w, causal=True)
            result = self.client.attention(dtype=dtype, **fields)
            body = {k: np.asarray(v).tolist() if k != "causal" else v
                    for k, v in fields.items()}
            status, reply = SERVER.post(dict(body, dtype=dtype))
            self.assertEqual(status, 200, reply)
            self.assertEqual(reply["dtype"], dtype)
            for stage in ("output", "weights"):
                self.assertTrue(np.array_equal(
                    np.array(reply[stage], np.float32),
                    result[stage].astype(np.float32)), (dtype, stage))
            # the same numbers as base64 of the type both ways
            if np_type:
                raw = x.astype(np_type)
            else:
                raw = attention_client.wire.bfloat16_bits(x)
            status, reply = SERVER.post(dict(
                body, dtype=dtype, encoding="base64",
                x={"shape": [3, 2],
                   "base64": base64.b64encode(raw.tobytes()).decode()}))
            self.assertEqual(status, 200, reply)
            got = np.frombuffer(base64.b64decode(reply["output"]["base64"]),
                                np_type or "<u2")
            if not np_type:
                got = attention_client.wire.bfloat16_values(got)
            self.assertTrue(np.array_equal(
                got.astype(np.float32),
                result["output"].astype(np.float32).ravel()), dtype)

    def test_a_bfloat16_model_traces_in_its_type(self):
        # PyTorch 1.13 has no float16 matrix product on the CPU: a float16
        # model cannot run here, a bfloat16 one can
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(
            16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, 2).eval().to(
            torch.bfloat16)
        trace = self.client.trace(model, randn(1, 6, 16).to(torch.bfloat16))
        self.assertEqual(len(trace), 2)
        for each in trace:
            self.assertEqual(each.output.dtype, torch.bfloat16)
            self.assertEqual(each.result.parameters["dtype"], "bfloat16")

    def test_a_number_past_the_type_is_refused_where_it_is(self):
        with self.assertRaisesRegex(ValueError, r"x: 100000\.0 does not "
                                    r"fit in float16 \(largest 65504\)"):
            self.client.attention(x=[[1e5, 0]], w_q=np.eye(2), w_k=np.eye(2),
                                  w_v=np.eye(2), dtype="float16")
        status, reply = SERVER.post(dict(
            x=[[1e5, 0]], w_q=np.eye(2).tolist(), w_k=np.eye(2).tolist(),
            w_v=np.eye(2).tolist(), dtype="float16"))
        self.assertEqual((status, reply["code"], reply["pointer"]),
                         (400, "number_out_of_range", "/x/0/0"))
        # computed in float32, 300² does not fit float16's reply
        e = self.raised(self.client.attention, x=[[300, 0]],
                        w_q=[[300, 0], [0, 1]], w_k=np.eye(2),
                        w_v=np.eye(2), dtype="float16", stages=["q"])
        self.assertEqual((e.status, e.code), (422, "non_finite_result"))


class TestTrace(ClientTest):
    def test_a_transformer_encoder_layer_by_layer(self):
        torch.manual_seed(3)
        layer = torch.nn.TransformerEncoderLayer(
            16, 4, dim_feedforward=32, dropout=0.0, batch_first=True,
            dtype=F64)
        model = torch.nn.TransformerEncoder(layer, 2).eval()
        src = randn(2, 5, 16)
        padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
        causal = torch.nn.Transformer.generate_square_subsequent_mask(5) \
            .to(F64)
        trace = self.client.trace(model, src, mask=causal,
                                  src_key_padding_mask=padding)
        self.assertEqual([layer.name for layer in trace],
                         ["layers.0.self_attn", "layers.1.self_attn"])
        with torch.no_grad():
            want = model(src, mask=causal, src_key_padding_mask=padding)
        self.assertLess(rel_error(trace.output, want), TOLERANCE)
        for each in trace:
            self.assertEqual(each.weights.shape, (2, 4, 5, 5))
            self.assertLess(each.error, TOLERANCE)
            self.assertEqual(each.output.shape, each.module_output.shape)
            # causal and padded keys get no weight
            self.assertTrue((each.weights[:, :, 0, 1:] == 0).all())
            self.assertTrue((each.weights[1, :, :, 3:] == 0).all())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bundle.json")
            trace.save_bundle(path)
            with open(path) as f:
                bundle = json.load(f)
        self.assertEqual(list(bundle), ["layers"])
        self.assertEqual([(b["name"], sorted(b)) for b in bundle["layers"]],
                         [("layers.0.self_attn", ["name", "request"]),
                          ("layers.1.self_attn", ["name", "request"])])
        for each, saved in zip(trace, bundle["layers"]):
            status, reply = SERVER.post(saved["request"])
            self.assertEqual(status, 200, reply)
            self.assertTrue(np.array_equal(reply["weights"], each.weights))


if __name__ == "__main__":
    unittest.main(verbosity=2)
