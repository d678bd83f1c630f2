// check_traffic.mjs - every recorded request and reply against openapi.yaml.
//
// DESIGN
// The schemas are judged by Ajv (its draft-04 class: OpenAPI 3.0's schema
// objects are draft 4's, boolean exclusiveMinimum and all, plus
// `nullable`, which Ajv implements), reading openapi.yaml itself; this file
// only finds, for each exchange, the part of the contract that speaks for
// it: the operation of its path and method, its request body's media type,
// the response of its status, that response's media type and headers.
// A compressed reply (Content-Encoding gzip or deflate) is judged as it
// inflates.
// A request the contract refuses must not be answered 2xx (the contract
// would be stricter than the server); a reply must be declared for its
// operation and status and match its schema.  The Open Inference
// Protocol's binary tensor data extension carries bytes no schema can
// describe: its JSON part is checked as the JSON body would be, and its
// bytes against the extension's rules (binary_data_size of every binary
// input or output equals its shape's element count times its datatype's
// size, and the sizes add up to the bytes after the JSON, whose length is
// Inference-Header-Content-Length).
//   node check_traffic.mjs OPENAPI_YAML RECORD_DIR [--self-test]
// --self-test first feeds the checker recorded replies made to violate the
// contract (a problem without its code, a /v1 result with a member
// renamed), and fails unless each is caught, and finds for each field
// whose items must differ (uniqueItems) a recorded request repeating one,
// refused by both the contract and the server; every /v1 result (200) is
// judged against AttentionResponse, which names every member it may hold.  Every problem code of the
// contract must be seen in some reply: the corpus and the servers under
// pressure (send_pressure.mjs) cover every code the server can send.
import Ajv from 'ajv-draft-04';
import * as yaml from 'js-yaml';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { splitReplies, splitRequests } from './http_stream.mjs';

const [specPath, recordDir, ...flags] = process.argv.slice(2);
const selfTesting = flags.includes('--self-test');
const doc = yaml.load(readFileSync(specPath, 'utf8'));
const ajv = new Ajv({ strict: false, validateSchema: false });
// OpenAPI's formats: byte is base64 (RFC 4648, padded), binary any bytes
ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
ajv.addFormat('binary', true);
ajv.addSchema(doc, 'openapi.yaml');

const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
function at(pointer) {
  let node = doc;
  for (const t of pointer.split('/').slice(1))
    node = node?.[t.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}
// An object that may be a $ref (components/responses): its pointer, itself.
function deref(pointer) {
  let node = at(pointer);
  while (node && node.$ref) {
    pointer = node.$ref.slice(1);
    node = at(pointer);
  }
  return [pointer, node];
}
// Ajv's errors for value against the schema at pointer, or null.
function check(pointer, value) {
  const validate = ajv.getSchema(`openapi.yaml#${pointer}`);
  if (!validate) return [`no schema at ${pointer}`];
  return validate(value) ? null : validate.errors.slice(0, 4).map(
    (e) => `${e.instancePath || '/'} ${e.message}`);
}
const mediaType = (headers) =>
  ((headers['content-type'] || [''])[0].split(';')[0].trim().toLowerCase());
const isJson = (media) => media === 'application/json' || media.endsWith('+json');

// The extension's element sizes (extension_binary_data.md: BOOL one byte)
const DATATYPE_BYTES = { BOOL: 1, INT8: 1, UINT8: 1, INT16: 2, UINT16: 2,
  FP16: 2, BF16: 2, INT32: 4, UINT32: 4, FP32: 4, INT64: 8, UINT64: 8,
  FP64: 8 };

// A body of the binary tensor data extension: [json, problems], where the
// JSON's tensors (`inputs` or `outputs`) with binary_data_size are checked
// against the bytes after it.
function splitBinary(headers, body, tensorsKey) {
  const problems = [];
  const lengthHeader = (headers['inference-header-content-length'] || [])[0];
  const jsonLength = lengthHeader === undefined ? body.length : Number(lengthHeader);
  if (!(jsonLength <= body.length))
    return [null, [`Inference-Header-Content-Length ${lengthHeader} is past the body's ${body.length} bytes`]];
  let json;
  try {
    json = JSON.parse(body.subarray(0, jsonLength).toString('utf8'));
  } catch (e) {
    return [null, [`its JSON part does not parse: ${e.message}`]];
  }
  let total = 0;
  for (const [i, t] of (Array.isArray(json?.[tensorsKey]) ? json[tensorsKey] : []).entries()) {
    const size = t?.parameters?.binary_data_size;
    if (size === undefined) continue;
    total += size;
    const elements = (t.shape || []).reduce((a, b) => a * b, 1);
    const want = elements * (DATATYPE_BYTES[t.datatype] || NaN);
    if (size !== want)
      problems.push(`${tensorsKey}[${i}] ${t.name}: binary_data_size ${size}, but shape ${JSON.stringify(t.shape)} of ${t.datatype} is ${want} bytes`);
    if (t.data !== undefined)
      problems.push(`${tensorsKey}[${i}] ${t.name}: both data and binary_data_size`);
  }
  if (lengthHeader !== undefined) seenBinary.add(tensorsKey);
  if (total !== body.length - jsonLength)
    problems.push(`binary_data_size adds up to ${total}, but ${body.length - jsonLength} bytes follow the JSON`);
  return [json, problems];
}

// A body as the server reads it: inflated when its Content-Encoding is
// gzip or deflate and it inflates (else as sent, for the contract to judge).
function decoded(req) {
  const coding = (req.headers['content-encoding'] || [''])[0].toLowerCase();
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return zlib.gunzipSync(req.body);
    if (coding === 'deflate') return zlib.inflateSync(req.body);
  } catch {
    return req.body;
  }
  return req.body;
}

// A reply's body as the server made it before its Content-Encoding:
// {reply} with the body inflated, or {problem} when it does not inflate
// or names a coding the contract does not declare.
function inflatedReply(reply, method) {
  const coding = (reply.headers['content-encoding'] || [''])[0].toLowerCase();
  if (!coding || method === 'HEAD' || !reply.body.length) return { reply };
  if (coding !== 'gzip' && coding !== 'deflate')
    return { problem: `Content-Encoding ${coding} is not one the contract declares` };
  try {
    const body = coding === 'gzip' ? zlib.gunzipSync(reply.body) : zlib.inflateSync(reply.body);
    seenCodings.add(coding);
    return { reply: { ...reply, body } };
  } catch (e) {
    return { problem: `the body does not inflate as its Content-Encoding ${coding} says: ${e.message}` };
  }
}

// The contract's objections to a request: [] when it is valid.
function requestProblems(opPointer, op, sent) {
  const problems = [];
  const req = { ...sent, body: decoded(sent) };
  for (let i = 0; i < (op.parameters || []).length; i++) {
    const [pp, p] = deref(`${opPointer}/parameters/${i}`);
    const value = (req.headers[p.name.toLowerCase()] || [])[0];
    if (p.in !== 'header' || value === undefined) continue;
    const number = /^-?\d+$/.test(value) ? Number(value) : value;
    const errs = check(`${pp}/schema`, number);
    if (errs) problems.push(`header ${p.name}: ${errs.join('; ')}`);
  }
  if (!op.requestBody) return problems;
  const [bodyPointer, requestBody] = deref(`${opPointer}/requestBody`);
  const content = requestBody.content;
  // no body at all where the contract does not require one (tritonclient's
  // POST /v2/repository/index sends an empty one)
  if (!req.body.length && !requestBody.required) return problems;
  const media = mediaType(req.headers);
  const key = content[media] ? media : content['*/*'] ? '*/*' : null;
  if (!key) return [...problems, `Content-Type ${media || '(none)'} is not declared`];
  if (key === '*/*' && content['application/json']) {
    // any media type: the protocol's JSON, then binary inputs
    const [json, binary] = splitBinary(req.headers, req.body, 'inputs');
    if (!json) return [...problems, ...binary];
    const errs = check(`${bodyPointer}/content/application~1json/schema`, json);
    return [...problems, ...binary, ...(errs || [])];
  }
  if (!isJson(key)) return problems;
  let json;
  try {
    json = JSON.parse(req.body.toString('utf8'));
  } catch (e) {
    return [...problems, `the body is not JSON: ${e.message}`];
  }
  return [...problems, ...(check(`${bodyPointer}/content/${esc(key)}/schema`, json) || [])];
}

// The contract's objections to a reply: [] when it is as declared.
function replyProblems(opPointer, op, method, path, reply) {
  const status = String(reply.status);
  const media = mediaType(reply.headers);
  let respPointer, resp;
  if (op) {
    const responses = op.responses || {};
    const key = [status, `${status[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) return [`status ${status} is not declared for ${method} ${path}`];
    [respPointer, resp] = deref(`${opPointer}/responses/${esc(key)}`);
  } else {
    // no operation: the path or method is unknown, and the reply must be
    // an error in the contract's shape of that path
    if (reply.status < 400) return [`${status} for ${method} ${path}, which the contract does not declare`];
    const oip = path === '/v2' || path.startsWith('/v2/');
    respPointer = `/components/responses/${oip ? 'OipError' : 'Problem'}`;
    resp = at(respPointer);
    if (method === 'HEAD') return [];
  }
  const problems = [];
  for (const name of Object.keys(resp.headers || {})) {
    const value = (reply.headers[name.toLowerCase()] || [])[0];
    if (value === undefined) continue;
    const [hp] = deref(`${respPointer}/headers/${esc(name)}`);
    const number = /^-?\d+$/.test(value) ? Number(value) : value;
    const errs = check(`${hp}/schema`, number);
    if (errs) problems.push(`header ${name}: ${errs.join('; ')}`);
  }
  if (reply.truncated) return problems; // its body never came whole
  const coded = inflatedReply(reply, method);
  if (coded.problem) return [...problems, coded.problem];
  reply = coded.reply;
  if (method === 'HEAD' || reply.status === 204) {
    if (reply.body.length) problems.push('a body where none may be');
    return problems;
  }
  if (!resp.content) {
    if (reply.body.length) problems.push(`a ${media} body where the contract declares none`);
    return problems;
  }
  if (!resp.content[media]) return [...problems, `Content-Type ${media || '(none)'} is not declared for ${status}`];
  const schema = `${respPointer}/content/${esc(media)}/schema`;
  if (media === 'application/octet-stream' && resp.content['application/json']) {
    const [json, binary] = splitBinary(reply.headers, reply.body, 'outputs');
    if (!json) return [...problems, ...binary];
    const errs = check(`${respPointer}/content/application~1json/schema`, json);
    return [...problems, ...binary, ...(errs || [])];
  }
  if (!isJson(media)) return [...problems, ...(check(schema, reply.body.toString('latin1')) || [])];
  let json;
  try {
    json = JSON.parse(reply.body.toString('utf8'));
  } catch (e) {
    return [...problems, `the body is not JSON: ${e.message}`];
  }
  if (json?.code) seenCodes.add(json.code);
  if (method === 'POST' && path === '/v1/attention' && reply.status === 200)
    repliesOfV1++;
  return [...problems, ...(check(schema, json) || [])];
}

let repliesOfV1 = 0; // /v1 results judged against AttentionResponse
const seenCodes = new Set();
const seenBinary = new Set();
const seenCodings = new Set(); // Content-Encoding of replies
const seenStatus = new Map(); // "METHOD path" -> Set of statuses

const countStatus = (key, status) => {
  if (!seenStatus.has(key)) seenStatus.set(key, new Set());
  seenStatus.get(key).add(status);
};

// The contract's path a request target names (RFC 9112 §3.2): origin-form
// as written, absolute-form by its path ("http://x:8080/healthz?a" is
// /healthz; "http://x" is /), without the query; asterisk-form stays "*".
function pathOf(target) {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^#]*)$/i.exec(target);
  const rest = absolute ? absolute[1] || '/' : target;
  return rest.split('?')[0];
}

// OPTIONS * asks about the server itself (RFC 9110 §9.3.7), which OpenAPI's
// paths (each starting "/") cannot name: the reply is held to what
// docs/api.md says of it, 200 with an Allow header and no body; any other
// method with "*" is a 400 problem.
function asteriskProblems(method, reply) {
  if (method !== 'OPTIONS')
    return reply.status === 400 ? [] : [`${method} * answered ${reply.status}, not 400`];
  const allow = (reply.headers.allow || [])[0];
  return [...(reply.status === 200 ? [] : [`OPTIONS * answered ${reply.status}, not 200`]),
          ...(allow ? [] : ['OPTIONS * has no Allow header']),
          ...(reply.body.length ? [`OPTIONS * has a body of ${reply.body.length} bytes`] : [])];
}

// Every exchange of one recording: [{name, problems}] of the failures,
// and the count of exchanges checked.
function checkRecording(file, rec) {
  const client = Buffer.from(rec.client, 'base64');
  const server = Buffer.from(rec.server, 'base64');
  const { requests, rest } = splitRequests(client);
  const methods = [...requests.map((r) => r.method), ...(rest ? [rest.method] : [])];
  const replies = splitReplies(server, methods);
  const failures = [];
  replies.forEach((reply, i) => {
    const req = requests[i] || { method: rest?.method, target: rest?.target, headers: null };
    const path = pathOf(req.target || '');
    const method = req.method || '?';
    if (path === '*') { // asterisk-form: no path of the contract names it
      const problems = asteriskProblems(method, reply);
      countStatus(`${method} *`, reply.status);
      if (problems.length) failures.push({ name: `${rec.label} (${file}, exchange ${i}): ${method} *`, problems });
      return;
    }
    const opPointer = `/paths/${esc(path)}/${method.toLowerCase()}`;
    const op = doc.paths[path]?.[method.toLowerCase()];
    const asked = req.headers ? (op ? requestProblems(opPointer, op, req) : ['no operation']) : null;
    const problems = replyProblems(opPointer, op, method, path, reply);
    if (asked && asked.length && reply.status < 300 && op)
      problems.push(`answered ${reply.status}, but the contract refuses the request: ${asked.join('; ')}`);
    countStatus(`${method} ${op ? path : '(undeclared)'}`, reply.status);
    if (problems.length) {
      const body = req.body ? req.body.subarray(0, 160).toString('latin1') : '(framing the recorder could not split)';
      failures.push({ name: `${rec.label} (${file}, exchange ${i}): ${method} ${req.target} ${body}`,
                      problems: [`reply ${reply.status} ${mediaType(reply.headers)}: ${reply.body.subarray(0, 200).toString('latin1')}`, ...problems] });
    }
  });
  return { failures, count: replies.length };
}

// The self-test's second half: a recorded /v1 result, its last member
// named "output" renamed (its length kept, so Content-Length still frames
// it), must fail: AttentionResponse names every member a reply may hold.
function selfTestResult(files) {
  for (const file of files) {
    const rec = JSON.parse(readFileSync(join(recordDir, file), 'utf8'));
    const server = Buffer.from(rec.server, 'base64').toString('latin1');
    const at = server.lastIndexOf('"output":');
    if (!/^HTTP\/1\.1 200 /.test(server) || at < 0 ||
        /content-encoding:/i.test(server.split('\r\n\r\n')[0]))
      continue;
    // the stage output (or its shape) under a name no reply has
    const broken = `${server.slice(0, at)}"outpux":${server.slice(at + 9)}`;
    const { failures } = checkRecording(file, { ...rec, server: Buffer.from(broken, 'latin1').toString('base64') });
    if (!failures.length) {
      console.log(`FAIL self-test: a /v1 result with a member renamed passed (${file})`);
      return false;
    }
    console.log(`self-test: a /v1 result with a member renamed is caught: ${failures[0].problems.slice(1).join('; ')}`);
    return true;
  }
  console.log('FAIL self-test: no /v1 result was recorded');
  return false;
}

// The self-test: a recorded problem reply, its `code` removed, must fail.
function selfTest(files) {
  for (const file of files) {
    const rec = JSON.parse(readFileSync(join(recordDir, file), 'utf8'));
    const server = Buffer.from(rec.server, 'base64').toString('latin1');
    const m = server.match(/"code":"[a-z_]+",?/);
    if (!m || !/^HTTP\/1\.1 400 /.test(server)) continue;
    // same length, so Content-Length still frames it
    const comma = m[0].endsWith(',') ? ',' : '';
    const broken = server.replace(m[0], `"cod_":"${'x'.repeat(m[0].length - 9 - comma.length)}"${comma}`);
    const { failures } = checkRecording(file, { ...rec, server: Buffer.from(broken, 'latin1').toString('base64') });
    if (!failures.length) {
      console.log(`FAIL self-test: a reply without "code" passed (${file})`);
      return false;
    }
    console.log(`self-test: a reply without "code" is caught: ${failures[0].problems.slice(1).join('; ')}`);
    return true;
  }
  console.log('FAIL self-test: no 400 reply with a code was recorded');
  return false;
}

// The self-test's third part: for every field of AttentionRequest whose
// items must differ (uniqueItems), a recorded /v1 request that repeats an
// item of it (corpus.jsonl sends one), which the contract must refuse and
// the server did (with a 4xx).
function selfTestDistinct(files) {
  const pointer = '/paths/~1v1~1attention/post';
  const op = doc.paths['/v1/attention'].post;
  const props = at('/components/schemas/AttentionRequest/properties');
  const distinct = Object.keys(props).filter((name) => props[name].uniqueItems);
  const missing = new Set(distinct);
  let passed = null;
  for (const file of files) {
    const rec = JSON.parse(readFileSync(join(recordDir, file), 'utf8'));
    const client = Buffer.from(rec.client, 'base64');
    const { requests } = splitRequests(client);
    const replies = splitReplies(Buffer.from(rec.server, 'base64'), requests.map((r) => r.method));
    requests.forEach((req, i) => {
      if (req.method !== 'POST' || pathOf(req.target) !== '/v1/attention') return;
      let body;
      try {
        body = JSON.parse(decoded(req).toString('utf8'));
      } catch {
        return;
      }
      for (const name of distinct) {
        const items = body?.[name];
        if (!Array.isArray(items) || new Set(items.map((v) => JSON.stringify(v))).size === items.length) continue;
        if (!requestProblems(pointer, op, req).length || !(replies[i]?.status >= 400))
          passed ??= `${name} with an item repeated (${file})`;
        missing.delete(name);
      }
    });
  }
  if (passed) {
    console.log(`FAIL self-test: the contract or the server took ${passed}`);
    return false;
  }
  if (missing.size) {
    console.log(`FAIL self-test: no recorded request repeats an item of ${[...missing].join(', ')} (uniqueItems)`);
    return false;
  }
  console.log(`self-test: a repeated item of ${distinct.join(', ')} is refused by the contract and the server`);
  return true;
}

const files = readdirSync(recordDir).filter((f) => f.endsWith('.json')).sort();
let ok = selfTesting ? selfTest(files) && selfTestResult(files) && selfTestDistinct(files) : true;
repliesOfV1 = 0;
seenCodes.clear();
seenStatus.clear();
let exchanges = 0, failed = 0;
for (const file of files) {
  const rec = JSON.parse(readFileSync(join(recordDir, file), 'utf8'));
  const { failures, count } = checkRecording(file, rec);
  exchanges += count;
  for (const f of failures) {
    failed++;
    if (failed <= 40) console.log(`FAIL ${f.name}\n  ${f.problems.join('\n  ')}`);
  }
}
const codes = at('/components/schemas/Problem/properties/code/enum');
console.log(`statuses seen: ${[...seenStatus].map(([k, s]) => `${k} ${[...s].sort().join(',')}`).sort().join('; ')}`);
const never = codes.filter((c) => !seenCodes.has(c));
console.log(`problem codes seen: ${seenCodes.size} of ${codes.length}; never: ${never.join(', ') || 'none'}`);
for (const c of never) {
  ok = false;
  console.log(`FAIL problem code ${c} is in no recorded reply (add a request to corpus.jsonl)`);
}
console.log(`binary tensor data seen in: ${[...seenBinary].sort().join(', ') || 'nothing'}`);
console.log(`replies compressed: ${[...seenCodings].sort().join(', ') || 'none'}`);
console.log(`traffic: ${exchanges} exchanges in ${files.length} connections, ${failed} against the contract`);
console.log(`/v1 results judged against AttentionResponse: ${repliesOfV1}`);
if (!repliesOfV1) {
  ok = false;
  console.log('FAIL no /v1 result was recorded to judge against AttentionResponse');
}
if (failed) ok = false;
console.log(`${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed`);
process.exit(ok ? 0 : 1);
