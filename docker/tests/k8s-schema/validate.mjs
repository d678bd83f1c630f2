// validate.mjs - reads a JSON array of Kubernetes objects ({file, doc}) on stdin and validates each against the
// Kubernetes OpenAPI schema of its apiVersion/kind (the schemas kubernetes-models generates from the Kubernetes
// API spec, checked with ajv). Prints one line per object and "N passed, N failed"; exit 1 on any failure.
// Run by docker/tests/test_manifests.py (make test-deploy), which parses the YAML and feeds this script.
import { readFileSync } from "node:fs";

const input = JSON.parse(readFileSync(0, "utf8"));
let passed = 0;
let failed = 0;
for (const { file, doc } of input) {
  const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/") : ["", doc.apiVersion];
  // kubernetes-models (ES modules) lays its classes out as <group>/<version>/<Kind>; the core group is "v1"
  const module = ["kubernetes-models", group, version, doc.kind].filter(Boolean).join("/");
  const label = `${file}: ${doc.apiVersion} ${doc.kind} ${doc.metadata?.name}`;
  try {
    const Model = (await import(module))[doc.kind];
    new Model(doc).validate();
    console.log(`ok   schema ${label}`);
    passed++;
  } catch (e) {
    console.log(`FAIL schema ${label}: ${e.message}`);
    failed++;
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
