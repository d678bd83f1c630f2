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
- every object against the Kubernetes OpenAPI schemas (offline, from the npm package kubernetes-models).
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
    # the real server, configured as the Deployment configures it (listening on loopback instead)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTENTION_")}
    env.update(ctx.env())
    env["ATTENTION_THREADS"] = "1"
    proc = subprocess.Popen([ctx.server, "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", line)
        assert m, f"the server did not start with the Deployment's environment: {line!r}"
        for path in (live, ready, start):
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
