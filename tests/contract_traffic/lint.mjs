// lint.mjs - openapi.yaml through two linters we did not write: Redocly's
// recommended ruleset and Spectral's oas ruleset, each as it ships.
//
// An error fails, and so does a warning that docs/api.md does not keep: its
// table "Lint warnings kept" names each one (linter, rule) with the reason,
// and a kept warning that no longer appears fails too, so the table stays
// the truth.  Prints every problem with its place in openapi.yaml.
//   node lint.mjs OPENAPI_YAML API_MD
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bin = (name) => join(here, 'node_modules', '.bin', name);
const [spec, apiMd] = process.argv.slice(2);

// A linter's standard output, whatever its exit status (1 when it found an
// error; its report says which).
function run(cmd, args) {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDOCLY_TELEMETRY: 'off',
             REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
  } catch (e) {
    if (e.status !== 1) {
      process.stderr.write(e.stderr || '');
      throw e;
    }
    return e.stdout;
  }
}

// [{linter, rule, severity: 'error'|'warning', where, message}]
function redocly() {
  const out = run(bin('redocly'), ['lint', spec, '--format=json',
    '--config', join(here, 'redocly.yaml')]);
  return JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1))
    .problems.map((p) => ({
    linter: 'redocly', rule: p.ruleId, severity: p.severity,
    where: (p.location || []).map((l) => l.pointer).join(' '),
    message: p.message }));
}

const SPECTRAL_SEVERITY = ['error', 'warning', 'info', 'hint'];
function spectral() {
  const dir = mkdtempSync(join(tmpdir(), 'spectral-'));
  const report = join(dir, 'report.json');
  run(bin('spectral'), ['lint', spec, '--format=json', '--output', report,
    '--ruleset', join(here, 'spectral.yaml'), '--fail-severity=error']);
  const found = JSON.parse(readFileSync(report, 'utf8'));
  rmSync(dir, { recursive: true });
  return found.map((p) => ({
    linter: 'spectral', rule: p.code, severity: SPECTRAL_SEVERITY[p.severity],
    where: `line ${p.range.start.line + 1} /${p.path.join('/')}`,
    message: p.message }));
}

// The rows of docs/api.md's "Lint warnings kept" table: "linter rule".
function kept() {
  const text = readFileSync(apiMd, 'utf8');
  const at = text.indexOf('### Lint warnings kept');
  if (at < 0) throw new Error(`${apiMd}: no "### Lint warnings kept" section`);
  const rows = new Set();
  for (const line of text.slice(at).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const m = line.match(/^\| (redocly|spectral) \| `([a-z0-9-]+)` \|/);
    if (m) rows.add(`${m[1]} ${m[2]}`);
  }
  return rows;
}

const problems = [...redocly(), ...spectral()];
const keep = kept();
let failed = 0;
const seen = new Set();
for (const p of problems) {
  const key = `${p.linter} ${p.rule}`;
  seen.add(key);
  const ok = p.severity !== 'error' && keep.has(key);
  if (!ok) failed++;
  console.log(`${ok ? 'kept' : 'FAIL'} ${p.linter} ${p.severity} ${p.rule}: ` +
              `${p.message} (${p.where})`);
}
for (const key of keep) {
  if (!seen.has(key)) {
    failed++;
    console.log(`FAIL docs/api.md keeps "${key}", which no linter reports`);
  }
}
console.log(`lint: ${problems.length} problems, ${keep.size} kept warnings`);
console.log(`${failed ? 0 : 1} passed, ${failed ? 1 : 0} failed`);
process.exit(failed ? 1 : 0);
