"""An Open Inference Protocol (KServe V2 / Triton REST) client that frames
requests and reads replies exactly as tritonclient.http does, written from
its sources (tritonclient/http/_utils.py, _infer_input.py,
_requested_output.py, _infer_result.py) with the standard library and
NumPy, since tritonclient cannot be installed here.

What it reproduces:
  - InferInput.set_data_from_numpy(a, binary_data=True): the input's JSON is
    {"name", "shape", "datatype", "parameters": {"binary_data_size": n}}
    and a.tobytes() (C order, little-endian) goes after the JSON; with
    binary_data=False, "data" is the flat list [v.item() for v in
    a.flatten()].
  - InferRequestedOutput(name, binary_data=True): {"name", "parameters":
    {"binary_data": true}}.
  - _get_inference_request(): {"id"?, "inputs", "outputs"?, "parameters"?},
    and without outputs the request parameter binary_data_output: true (all
    outputs binary); the body is the JSON then each input's bytes in input
    order; Inference-Header-Content-Length is the JSON's length, sent only
    when binary data follows; no Content-Type.
  - InferResult: with Inference-Header-Content-Length the reply's JSON is
    its first that many bytes and each output with binary_data_size owns
    the next bytes in output order; as_numpy() reads them with the
    datatype's NumPy type, or np.array(data) for JSON data, then reshapes.
  - _get_error(): a status other than 200 is an error whose message is the
    body's "error".
  - the extensions' calls (_client.py): get_model_config (GET
    v2/models/NAME[/versions/V]/config), get_inference_statistics (GET
    v2/models[/NAME[/versions/V]]/stats), get_model_repository_index (POST
    v2/repository/index with an empty body), load_model (POST
    v2/repository/models/NAME/load, body json.dumps({})) and unload_model
    (.../unload, body {"parameters": {"unload_dependents": false}}): each
    raises on a status other than 200 and returns json.loads of the body,
    load and unload nothing.
"""
import http.client
import json

import numpy as np

NP_OF = {"FP64": np.float64, "FP32": np.float32, "FP16": np.float16,
         "BOOL": np.bool_, "INT64": np.int64, "INT32": np.int32,
         "INT16": np.int16, "INT8": np.int8, "UINT64": np.uint64,
         "UINT32": np.uint32, "UINT16": np.uint16, "UINT8": np.uint8}
DATATYPE_OF = {np.dtype(v): k for k, v in NP_OF.items()}
# BF16, which NumPy lacks, is a float32 array in tritonclient
# (triton_to_np_dtype), sent as each number's upper two bytes
# (serialize_bf16_tensor) and read back as float32 (deserialize_bf16_tensor)
NP_OF["BF16"] = np.float32


class InferenceServerException(Exception):
    def __init__(self, msg, status, body=None):
        super().__init__(msg)
        self.status = status
        self.body = body


class InferInput:
    def __init__(self, name, shape, datatype):
        self.name, self.shape, self.datatype = name, list(shape), datatype
        self.parameters = {}
        self.data = None
        self.raw = None

    def set_data_from_numpy(self, a, binary_data=True):
        if self.datatype == "BF16" and a.dtype == np.float32 and binary_data:
            self.data = None
            self.raw = np.ascontiguousarray(a, "<f4").view("<u2")[..., 1::2] \
                .tobytes()
            self.parameters["binary_data_size"] = len(self.raw)
            return self
        if DATATYPE_OF.get(a.dtype) != self.datatype:
            raise ValueError(f"got {a.dtype}, expected {self.datatype}")
        if list(a.shape) != self.shape:
            raise ValueError(f"got shape {a.shape}, expected {self.shape}")
        if binary_data:
            self.data = None
            self.raw = np.ascontiguousarray(a).astype(
                a.dtype.newbyteorder("<")).tobytes()
            self.parameters["binary_data_size"] = len(self.raw)
        else:
            self.parameters.pop("binary_data_size", None)
            self.raw = None
            self.data = [v.item() for v in a.flatten()]
        return self

    def tensor(self):
        t = {"name": self.name, "shape": self.shape,
             "datatype": self.datatype}
        if self.parameters:
            t["parameters"] = self.parameters
        if self.raw is None and self.data is not None:
            t["data"] = self.data
        return t


class InferRequestedOutput:
    def __init__(self, name, binary_data=True):
        self.name = name
        self.parameters = {"binary_data": binary_data}

    def tensor(self):
        return {"name": self.name, "parameters": self.parameters}


def inference_request(inputs, outputs=None, request_id="", parameters=None):
    """(body, json_size or None), as _utils._get_inference_request."""
    request, params = {}, {}
    if request_id != "":
        request["id"] = request_id
    request["inputs"] = [i.tensor() for i in inputs]
    if outputs:
        request["outputs"] = [o.tensor() for o in outputs]
    else:
        params["binary_data_output"] = True
    for key, value in (parameters or {}).items():
        params[key] = value
    if params:
        request["parameters"] = params
    # rapidjson.dumps: compact, ASCII
    text = json.dumps(request, separators=(",", ":"))
    body = [text.encode()]
    body += [i.raw for i in inputs if i.raw is not None]
    if len(body) == 1:
        return body[0], None
    return b"".join(body), len(text)


class InferResult:
    def __init__(self, body, header_length):
        if header_length is None:
            self.result = json.loads(body)
            return
        self.result = json.loads(body[:header_length])
        self.buffer = body[header_length:]
        self.offsets = {}
        index = 0
        for out in self.result["outputs"]:
            size = out.get("parameters", {}).get("binary_data_size")
            if size is not None:
                self.offsets[out["name"]] = index
                index += size

    def get_output(self, name):
        for out in self.result["outputs"]:
            if out["name"] == name:
                return out
        return None

    def as_numpy(self, name):
        out = self.get_output(name)
        if out is None:
            return None
        dtype = NP_OF[out["datatype"]]
        size = out.get("parameters", {}).get("binary_data_size")
        if size is not None and out["datatype"] == "BF16":
            start = self.offsets[name]
            bits = np.frombuffer(self.buffer[start:start + size], "<u2")
            a = (bits.astype(np.uint32) << 16).view(np.float32)
        elif size is not None:
            start = self.offsets[name]
            a = np.frombuffer(self.buffer[start:start + size],
                              dtype=np.dtype(dtype).newbyteorder("<"))
        else:
            a = np.array(out["data"], dtype=dtype)
        return a.reshape(out["shape"])

    def get_response(self):
        return self.result


class Client:
    """InferenceServerClient over one keep-alive connection."""

    def __init__(self, port, headers=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = dict(headers or {})
        self.last_headers = {}

    def close(self):
        self.conn.close()

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes) of one exchange."""
        all_headers = dict(self.headers, **(headers or {}))
        self.conn.request(method, path, body=body, headers=all_headers)
        resp = self.conn.getresponse()
        data = resp.read()
        self.last_headers = {k.lower(): v for k, v in resp.getheaders()}
        return resp.status, self.last_headers, data

    def _get_json(self, path):
        status, _, body = self.request("GET", path)
        if status != 200:
            raise error_of(status, body)
        return json.loads(body)

    def is_server_live(self):
        return self.request("GET", "/v2/health/live")[0] == 200

    def is_server_ready(self):
        return self.request("GET", "/v2/health/ready")[0] == 200

    def is_model_ready(self, model):
        return self.request("GET", f"/v2/models/{model}/ready")[0] == 200

    def get_server_metadata(self):
        return self._get_json("/v2")

    def get_model_metadata(self, model):
        return self._get_json(f"/v2/models/{model}")

    def get_model_config(self, model, model_version=""):
        version = f"/versions/{model_version}" if model_version else ""
        return self._get_json(f"/v2/models/{model}{version}/config")

    def get_inference_statistics(self, model_name="", model_version=""):
        if not model_name:
            return self._get_json("/v2/models/stats")
        version = f"/versions/{model_version}" if model_version else ""
        return self._get_json(f"/v2/models/{model_name}{version}/stats")

    def _post(self, path, body):
        status, _, data = self.request("POST", path, body)
        if status != 200:
            raise error_of(status, data)
        return data

    def get_model_repository_index(self):
        return json.loads(self._post("/v2/repository/index", ""))

    def load_model(self, model):
        self._post(f"/v2/repository/models/{model}/load", json.dumps({}))

    def unload_model(self, model, unload_dependents=False):
        self._post(f"/v2/repository/models/{model}/unload", json.dumps(
            {"parameters": {"unload_dependents": unload_dependents}}))

    def infer(self, model, inputs, outputs=None, request_id="",
              parameters=None):
        body, json_size = inference_request(inputs, outputs, request_id,
                                            parameters)
        headers = {}
        if json_size is not None:
            headers["Inference-Header-Content-Length"] = str(json_size)
        status, resp_headers, data = self.request(
            "POST", f"/v2/models/{model}/infer", body, headers)
        if status != 200:
            raise error_of(status, data)
        length = resp_headers.get("inference-header-content-length")
        return InferResult(data, None if length is None else int(length))


def error_of(status, body):
    """_utils._get_error: the message is the body's "error"."""
    try:
        message = json.loads(body)["error"]
    except Exception as e:  # noqa: BLE001 - as tritonclient does
        message = f"an exception occurred in the client while decoding " \
                  f"the response: {e}"
    return InferenceServerException(message, status, body)
