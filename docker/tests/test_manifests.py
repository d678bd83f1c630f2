"""Checks docker/k8s/*.yaml and docker/compose.yaml against the image, the server and each other.

    /usr/bin/python3 docker/tests/test_manifests.py --server build/attention-server

Parses every manifest (python3-yaml) and checks, one behaviour per test:
- every document has a known apiVersion/kind pair, a name, and the fields its kind requires;
- the Deployment's probes point at real routes: the real server, started with the Deployment's ATTENTION_*
  variables, answers the liveness path with 200 and the readiness path with 200 (and these are /healthz, /readyz);
- every ATTENTION_* variable in the manifests is one `attention-server --help` documents;
- resources: requests and limits for cpu and memory, requests <= limits, ATTENTION_THREADS = the CPU limit, the
  memory limit at least the budget plus the base docs/reliability.md gives (64 MiB + 64 KiB per connection);
- non-root, read-only security context, as the image's USER;
- terminationGracePeriodSeconds covers preStop + ATTENTION_GRACE;
- the Service, HPA and PDB select/target the Deployment's pods; the Service targets a declared port;
- compose.yaml: replicas behind nginx, the image's health check, nginx.conf mounted, its upstream = the service;
- every object against the Kubernetes OpenAPI schemas (offline, from the npm package kubernetes-models);
- docker/k8s/kserve/: the InferenceService runs the Deployment's container as its predictor, speaking the Open
  Inference Protocol (PROTOCOL v2), its probes on /v2/health/* answered by the real server, and it matches KServe's
  InferenceService CRD schema (its relevant part, docker/tests/kserve/) with its pod's fields as a core/v1 PodSpec.
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DOCKER = os.path.dirname(HERE)
K8S = os.path.join(DOCKER, "k8s")
KSERVE = os.path.join(K8S, "kserve")
KSERVE_SCHEMA = os.path.join(HERE, "kserve", "inferenceservice.schema.json")

# apiVersion/kind pairs of the stable APIs the manifests may use (Kubernetes >= 1.23 serves all of them)
KNOWN_KINDS = {("apps/v1", "Deployment"), ("v1", "Service"), ("autoscaling/v2", "HorizontalPodAutoscaler"),
               ("policy/v1", "PodDisruptionBudget")}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")  # RFC 1123 label: names of objects, containers, ports
QUANTITY = re.compile(r"^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")
UNITS = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
         "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(q):
    m = QUANTITY.match(str(q))
    if not m:
        raise AssertionError(f"not a Kubernetes quantity: {q!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


class Context:
    def __init__(self, server):
        self.server = server
        self.docs = {}
        for name in sorted(os.listdir(K8S)):
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(K8S, name)) as f:
                    for doc in yaml.safe_load_all(f):
                        if doc is not None:
                            self.docs.setdefault(doc.get("kind"), []).append((name, doc))
        self.kserve = []
        for name in sorted(os.listdir(KSERVE)):
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(KSERVE, name)) as f:
                    self.kserve += [(name, doc) for doc in yaml.safe_load_all(f) if doc is not None]
        with open(os.path.join(DOCKER, "compose.yaml")) as f:
            self.compose = yaml.safe_load(f)
        with open(os.path.join(DOCKER, "Dockerfile")) as f:
            self.dockerfile = f.read()
        with open(os.path.join(DOCKER, "nginx.conf")) as f:
            self.nginx = f.read()
        help_text = subprocess.run([server, "--help"], capture_output=True, text=True, check=True).stdout
        self.env_names = set(re.findall(r"env (ATTENTION_[A-Z_]+)", help_text))
        assert self.env_names, "--help lists no ATTENTION_* variable"

    def one(self, kind):
        found = self.docs.get(kind, [])
        assert len(found) == 1, f"{len(found)} {kind} manifests in docker/k8s, want 1"
        return found[0][1]

    @property
    def deployment(self):
        return self.one("Deployment")

    @property
    def pod(self):
        return self.deployment["spec"]["template"]["spec"]

    @property
    def container(self):
        containers = self.pod["containers"]
        assert len(containers) == 1, "one container per pod"
        return containers[0]

    def env(self):
        return {e["name"]: e["value"] for e in self.container.get("env", [])}

    def image_user(self):
        users = re.findall(r"^USER\s+(\S+)", self.dockerfile, re.M)
        assert users, "the Dockerfile has no USER"
        return users[-1]

    def image_healthcheck(self):
        m = re.search(r"^HEALTHCHECK\b.*?CMD\s+(\[.*?\])", self.dockerfile, re.M | re.S)
        assert m, "the Dockerfile has no HEALTHCHECK CMD [...]"
        return ["CMD"] + yaml.safe_load(m.group(1))


# ---- tests -------------------------------------------------------------------------------------------------------

def test_every_document_is_a_known_kind_with_a_name(ctx):
    assert ctx.docs, "no manifest in docker/k8s"
    for kind, docs in ctx.docs.items():
        for file, doc in docs:
            assert (doc.get("apiVersion"), kind) in KNOWN_KINDS, f"{file}: {doc.get('apiVersion')} {kind}"
            name = doc.get("metadata", {}).get("name", "")
            assert DNS_LABEL.match(name), f"{file}: metadata.name {name!r}"
            assert isinstance(doc.get("spec"), dict), f"{file}: no spec"
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler"):
        ctx.one(kind)


def test_deployment_selector_matches_its_pods(ctx):
    spec = ctx.deployment["spec"]
    selector = spec["selector"]["matchLabels"]
    labels = spec["template"]["metadata"]["labels"]
    assert selector and all(labels.get(k) == v for k, v in selector.items()), f"{selector} vs {labels}"
    assert isinstance(spec["replicas"], int) and spec["replicas"] >= 2, "at least two replicas"


def test_container_image_port_and_names(ctx):
    c = ctx.container
    assert DNS_LABEL.match(c["name"]) and c.get("image"), "container name and image"
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports.get("http") == 8080, f"named port http = 8080 (the image's EXPOSE): {ports}"
    assert "EXPOSE 8080" in ctx.dockerfile
    listen = c.get("args", [])
    if "--listen" in listen:
        assert listen[listen.index("--listen") + 1] == "0.0.0.0:8080", f"args {listen}"


def probe_path(probe, ports):
    get = probe["httpGet"]
    port = get["port"]
    assert port in ports or port in ports.values(), f"probe port {port!r} is not a container port"
    return get["path"]


def test_probes_point_at_real_routes(ctx):
    c = ctx.container
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    live = probe_path(c["livenessProbe"], ports)
    ready = probe_path(c["readinessProbe"], ports)
    start = probe_path(c["startupProbe"], ports) if "startupProbe" in c else live
    assert live == "/healthz", f"liveness on {live}, want /healthz"
    assert ready == "/readyz", f"readiness on {ready}, want /readyz"
    answer_200(ctx, ctx.env(), (live, ready, start))


def answer_200(ctx, manifest_env, paths):
    """The real server, configured with a manifest's environment (listening on loopback instead), answers each path
    with 200."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTENTION_")}
    env.update(manifest_env)
    env["ATTENTION_THREADS"] = "1"
    proc = subprocess.Popen([ctx.server, "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", line)
        assert m, f"the server did not start with the manifest's environment: {line!r}"
        for path in paths:
            conn = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=5)
            conn.request("GET", path)
            status = conn.getresponse().status
            conn.close()
            assert status == 200, f"GET {path} answered {status}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_environment_names_are_the_servers(ctx):
    used = set(ctx.env())
    compose_env = ctx.compose["services"]["attention"].get("environment", {})
    used |= set(compose_env)
    unknown = {n for n in used if n.startswith("ATTENTION_")} - ctx.env_names
    assert not unknown, f"not in attention-server --help: {sorted(unknown)}"
    for value in list(ctx.env().values()) + list(compose_env.values()):
        assert isinstance(value, str), f"env values must be strings in the manifests: {value!r}"


def test_resources_fit_the_configuration(ctx):
    res = ctx.container["resources"]
    for key in ("cpu", "memory"):
        assert quantity(res["requests"][key]) <= quantity(res["limits"][key]), f"{key} request > limit"
    env = ctx.env()
    assert quantity(env["ATTENTION_THREADS"]) == quantity(res["limits"]["cpu"]), \
        "ATTENTION_THREADS must equal the CPU limit (the default counts the node's CPUs)"
    # docs/reliability.md, "Memory": RSS <= budget + 64 MiB + 64 KiB x --max-connections
    connections = int(env.get("ATTENTION_MAX_CONNECTIONS", "1024"))
    base = 64 * 2**20 + connections * 64 * 2**10
    assert int(env["ATTENTION_MEMORY_BUDGET"]) + base <= quantity(res["limits"]["memory"]), \
        "the memory limit must hold the budget plus the server's base (64 MiB + 64 KiB per connection)"
    body = re.search(r"client_max_body_size\s+(\d+)m;", ctx.nginx)
    assert body and int(env["ATTENTION_MAX_BODY"]) == int(body.group(1)) * 2**20, \
        "ATTENTION_MAX_BODY differs from nginx's client_max_body_size"


def test_security_context_is_non_root_and_read_only(ctx):
    pod_sc = ctx.pod.get("securityContext", {})
    sc = ctx.container["securityContext"]
    assert sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True
    uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
    assert uid is not None and uid != 0 and str(uid) == ctx.image_user().split(":")[0], \
        f"runAsUser {uid} vs the image's USER {ctx.image_user()}"
    assert sc.get("readOnlyRootFilesystem") is True
    assert sc.get("allowPrivilegeEscalation") is False
    assert sc.get("capabilities", {}).get("drop") == ["ALL"]


def test_termination_grace_covers_the_drain(ctx):
    grace = int(ctx.env()["ATTENTION_GRACE"])
    pre = ctx.container.get("lifecycle", {}).get("preStop", {})
    cmd = pre.get("exec", {}).get("command", [])
    pre_s = int(cmd[1]) if cmd[:1] == ["sleep"] else int(pre.get("sleep", {}).get("seconds", 0))
    total = ctx.pod["terminationGracePeriodSeconds"]
    assert pre_s + grace < total <= pre_s + grace + 10, \
        f"terminationGracePeriodSeconds {total} vs preStop {pre_s} s + ATTENTION_GRACE {grace} s"


def test_service_selects_the_pods_on_a_declared_port(ctx):
    svc = ctx.one("Service")["spec"]
    labels = ctx.deployment["spec"]["template"]["metadata"]["labels"]
    assert svc["selector"] and all(labels.get(k) == v for k, v in svc["selector"].items())
    names = {p["name"] for p in ctx.container["ports"]} | {p["containerPort"] for p in ctx.container["ports"]}
    for p in svc["ports"]:
        assert p["targetPort"] in names, f"targetPort {p['targetPort']} is not a container port"
        assert 0 < p["port"] < 65536


def test_hpa_scales_the_deployment_on_requested_cpu(ctx):
    hpa = ctx.one("HorizontalPodAutoscaler")["spec"]
    ref = hpa["scaleTargetRef"]
    assert (ref["apiVersion"], ref["kind"], ref["name"]) == ("apps/v1", "Deployment", ctx.deployment["metadata"]["name"])
    assert 1 <= hpa["minReplicas"] <= hpa["maxReplicas"]
    assert hpa["minReplicas"] <= ctx.deployment["spec"]["replicas"] <= hpa["maxReplicas"]
    cpu = [m for m in hpa["metrics"] if m["type"] == "Resource" and m["resource"]["name"] == "cpu"]
    assert cpu and 0 < cpu[0]["resource"]["target"]["averageUtilization"] <= 100
    assert "cpu" in ctx.container["resources"]["requests"], "CPU utilisation needs a CPU request"


def test_disruption_budget_keeps_replicas(ctx):
    for _, pdb in ctx.docs.get("PodDisruptionBudget", []):
        labels = ctx.deployment["spec"]["template"]["metadata"]["labels"]
        sel = pdb["spec"]["selector"]["matchLabels"]
        assert all(labels.get(k) == v for k, v in sel.items())
        assert 1 <= pdb["spec"]["minAvailable"] < ctx.deployment["spec"]["replicas"]


def test_compose_runs_replicas_behind_nginx(ctx):
    services = ctx.compose["services"]
    app, lb = services["attention"], services["lb"]
    assert app["deploy"]["replicas"] >= 2
    build = app["build"]
    assert os.path.isfile(os.path.join(DOCKER, build["context"], build["dockerfile"])), "build.dockerfile"
    assert app["healthcheck"]["test"] == ctx.image_healthcheck(), "compose health check = the image's"
    assert app["user"] == ctx.image_user() and app["read_only"] is True and app["cap_drop"] == ["ALL"]
    grace = int(app["environment"]["ATTENTION_GRACE"])
    assert int(app["stop_grace_period"].rstrip("s")) > grace, "stop_grace_period <= ATTENTION_GRACE"
    assert app["environment"]["ATTENTION_THREADS"] == app["deploy"]["resources"]["limits"]["cpus"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in lb["volumes"]
    assert lb["depends_on"]["attention"]["condition"] == "service_healthy"
    upstream = re.search(r"upstream\s+attention\s*\{[^}]*?\bserver\s+([^\s;:]+):(\d+)", ctx.nginx)
    assert upstream and upstream.group(1) == "attention" and upstream.group(2) == "8080", \
        "nginx.conf's upstream must be the compose service attention:8080"
    listen = re.search(r"^\s*listen\s+(\d+);", ctx.nginx, re.M)
    assert listen and any(p.endswith(f":{listen.group(1)}") for p in lb["ports"]), "lb port = nginx listen"


def test_manifests_match_the_kubernetes_schemas(ctx):
    """Types, enums and required fields of every object against the Kubernetes OpenAPI schemas (the npm package
    kubernetes-models ships them; docker/tests/k8s-schema/validate.mjs checks with ajv). Unknown keys are not
    caught there (the API's schemas allow them); the tests above check each field this project relies on."""
    if not ctx.schema_dir:
        raise AssertionError("no --schema-dir given")
    docs = [{"file": f, "doc": d} for kind in ctx.docs.values() for f, d in kind]
    run = subprocess.run(["node", os.path.join(ctx.schema_dir, "validate.mjs")], input=json.dumps(docs),
                         capture_output=True, text=True, timeout=120)
    for line in run.stdout.splitlines():
        if line.startswith(("ok", "FAIL")):
            print("     " + line[:300])
    assert run.returncode == 0, f"schema validation failed: {run.stderr[-500:]}"


def inference_service(ctx):
    found = [doc for _, doc in ctx.kserve if doc.get("kind") == "InferenceService"]
    assert len(found) == 1, f"{len(found)} InferenceService manifests in docker/k8s/kserve, want 1"
    return found[0]


def kserve_container(ctx):
    containers = inference_service(ctx)["spec"]["predictor"]["containers"]
    assert len(containers) == 1, "one container: the predictor's own"
    return containers[0]


def test_kserve_predictor_is_the_deployments_container_speaking_v2(ctx):
    isvc = inference_service(ctx)
    assert (isvc["apiVersion"], isvc["kind"]) == ("serving.kserve.io/v1beta1", "InferenceService")
    assert DNS_LABEL.match(isvc["metadata"]["name"])
    # lifecycle, startupProbe and the grace period are refused by Knative: a plain Deployment keeps them
    assert isvc["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "RawDeployment"
    predictor, c = isvc["spec"]["predictor"], kserve_container(ctx)
    assert c["name"] == "kserve-container", "KServe finds the predictor's container by this name"
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env.pop("PROTOCOL", None) == "v2", "PROTOCOL v2: the Open Inference Protocol"
    assert env == ctx.env(), f"the ATTENTION_* variables differ from the Deployment's: {env} vs {ctx.env()}"
    for key in ("image", "args", "resources", "securityContext", "lifecycle"):
        assert c[key] == ctx.container[key], f"container {key} differs from the Deployment's"
    assert [p["containerPort"] for p in c["ports"]] == [8080], "one port, the image's 8080"
    for key in ("securityContext", "terminationGracePeriodSeconds", "automountServiceAccountToken"):
        assert predictor[key] == ctx.pod[key], f"pod {key} differs from the Deployment's"
    assert 2 <= predictor["minReplicas"] <= predictor["maxReplicas"]


def test_kserve_probes_are_the_protocols_health_routes(ctx):
    c = kserve_container(ctx)
    ports = {p["containerPort"]: p["containerPort"] for p in c["ports"]}
    live = probe_path(c["livenessProbe"], ports)
    ready = probe_path(c["readinessProbe"], ports)
    start = probe_path(c["startupProbe"], ports)
    assert (live, ready, start) == ("/v2/health/live", "/v2/health/ready", "/v2/health/live"), \
        f"probes on {live}, {ready}, {start}"
    answer_200(ctx, {e["name"]: e["value"] for e in c["env"] if e["name"].startswith("ATTENTION_")},
               (live, ready, "/v2/models/attention/ready"))


def test_kserve_manifest_matches_the_inferenceservice_crd(ctx):
    """docker/tests/kserve/inferenceservice.schema.json is the part of KServe's published CRD the manifest uses;
    validate_kserve.mjs checks it with ajv, and the predictor's pod-level fields as a core/v1 PodSpec."""
    if not ctx.schema_dir:
        raise AssertionError("no --schema-dir given")
    with open(KSERVE_SCHEMA) as f:
        schema = json.load(f)
    objects = [{"file": f, "doc": d} for f, d in ctx.kserve if d.get("kind") == "InferenceService"]
    run = subprocess.run(["node", os.path.join(ctx.schema_dir, "validate_kserve.mjs")],
                         input=json.dumps({"schema": schema, "objects": objects}), capture_output=True, text=True,
                         timeout=120)
    for line in run.stdout.splitlines():
        if line.startswith(("ok", "FAIL")):
            print("     " + line[:300])
    assert run.returncode == 0, f"schema validation failed: {run.stdout[-500:]} {run.stderr[-500:]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--schema-dir", help="docker/tests/k8s-schema with its node_modules installed")
    args = ap.parse_args()
    ctx = Context(args.server)
    ctx.schema_dir = args.schema_dir
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)]
    failed = 0
    for name, fn in tests:
        try:
            fn(ctx)
            print(f"ok   {name}")
        except (AssertionError, KeyError, TypeError, ValueError) as e:
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            failed += 1
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
