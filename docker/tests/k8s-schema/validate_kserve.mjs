// validate_kserve.mjs - reads {schema, objects: [{file, doc}]} on stdin: each InferenceService against the part of
// KServe's CRD schema in docker/tests/kserve/inferenceservice.schema.json (ajv), and its predictor's pod-level
// fields (containers, security context, grace period) as a core/v1 PodSpec (kubernetes-models' Pod, the schema the
// Deployment is checked with). Prints one line per check and "N passed, N failed"; exit 1 on any failure.
// Run by docker/tests/test_manifests.py (make test-deploy).
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import { Pod } from "kubernetes-models/v1/Pod";

const { schema, objects } = JSON.parse(readFileSync(0, "utf8"));
const ajv = new Ajv({ allErrors: true });
// the CRD's integer formats
ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
ajv.addFormat("int64", { type: "number", validate: (n) => Number.isSafeInteger(n) });
const validate = ajv.compile(schema);
// PredictorSpec embeds core/v1 PodSpec: these of its fields are the pod's
const POD_FIELDS = ["containers", "securityContext", "terminationGracePeriodSeconds", "automountServiceAccountToken"];

let passed = 0;
let failed = 0;
function report(ok, label, message) {
  console.log(ok ? `ok   ${label}` : `FAIL ${label}: ${message}`);
  if (ok) passed++;
  else failed++;
}
for (const { file, doc } of objects) {
  const label = `${file}: ${doc.apiVersion} ${doc.kind} ${doc.metadata?.name}`;
  report(validate(doc), `crd schema ${label}`, ajv.errorsText(validate.errors));
  const predictor = doc.spec?.predictor ?? {};
  const spec = Object.fromEntries(POD_FIELDS.filter((k) => k in predictor).map((k) => [k, predictor[k]]));
  try {
    new Pod({ apiVersion: "v1", kind: "Pod", metadata: { name: doc.metadata?.name }, spec }).validate();
    report(true, `pod spec ${label}`);
  } catch (e) {
    report(false, `pod spec ${label}`, e.message);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
