// send_pressure.mjs - the problem codes only a server under pressure sends,
// produced for real behind record_server.mjs so that check_traffic.mjs
// validates them too:
//   overloaded     a server with a memory budget of 1 MiB: while an
//                  upload that announced the largest body it admits holds
//                  its bytes, a second such upload is 503 overloaded (its
//                  body and parsing no longer fit; tests/http/
//                  test_overload.c's case); once it leaves, the server
//                  serves again
//   draining       SIGTERM while a long request computes: /readyz on a
//                  connection opened before is 503 draining, and the long
//                  request, still computing when --grace ends, too
//   out_of_memory  a server whose address space is limited (prlimit --as,
//                  as a container's memory limit would) and whose budget is
//                  not: a request whose weights need far more than the
//                  limit is 503 out_of_memory when the allocation fails,
//                  and the server serves on
// Each step says what it must get; a different answer fails.
//   CONTRACT_SERVER=... CONTRACT_RECORD=... node send_pressure.mjs
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const here = dirname(fileURLToPath(import.meta.url));
const lesson = readFileSync(join(here, '..', 'lessons', 'lesson_001.json'), 'utf8');
// The address space of the out_of_memory server: 2 GiB, eight times what
// it maps idle (about 250 MB with its libraries, stacks and OpenBLAS's
// buffers) and an eighth of the 17 GB of weights the request asks for.
const ADDRESS_SPACE = String(2 * 1024 ** 3);
// The largest body a 1 MiB budget admits: the body and its parsing, 36
// bytes per body byte (server/base/parse_budget.h), must fit: 1 MiB / 37.
const BUDGET = '1M';
const BUDGET_LARGEST_BODY = 28339;
// How long a long request is given to reach its worker, and SIGTERM to
// start the drain, on a loaded machine.
const SETTLE_MS = 500;

// The long request of tests/http/test_stop.c: n 4096 tokens of width 1,
// 128 heads of 16, w_o back to width 1 (seconds of work on one worker).
function longRequest(ret) {
  const width = 128 * 16;
  const matrix = (rows, cols, seed) => Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (((i * cols + j) * seed) % 97) / 97 - 0.5));
  return JSON.stringify({ x: matrix(4096, 1, 37), w_q: matrix(1, width, 13),
    w_k: matrix(1, width, 17), w_v: matrix(1, width, 19), w_o: matrix(width, 1, 11),
    num_heads: 128, return: ret });
}

// A server behind the recorder: {port, exited, kill}.
// prefix: a command the server runs under (its first word takes the
// server's place, the server's path follows the rest).
async function start(args, prefix = []) {
  const env = { ...process.env, CONTRACT_LABEL: 'pressure' };
  args = ['--listen', '127.0.0.1:0', ...args];
  if (prefix.length) {
    env.CONTRACT_SERVER = prefix[0];
    args = [...prefix.slice(1), process.env.CONTRACT_SERVER, ...args];
  }
  const child = spawn(join(here, 'record_server.mjs'), args,
                      { env, stdio: ['ignore', 'pipe', process.env.PRESSURE_LOG ? 'inherit' : 'ignore'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (b) => {
      text += b;
      const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    exited.then(() => reject(new Error(`the server (${args.join(' ')}) did not start`)));
  });
  return { port, exited, kill: (sig) => child.kill(sig) };
}

// A keep-alive connection of its own: get(path) sends a GET on it and
// resolves to [status, parsed body].
function keepAlive(port) {
  const s = connect(port, '127.0.0.1');
  let got = Buffer.alloc(0);
  let waiting = null;
  s.on('data', (b) => {
    got = Buffer.concat([got, b]);
    const end = got.indexOf('\r\n\r\n');
    if (end < 0 || !waiting) return;
    const head = got.subarray(0, end).toString('latin1');
    const length = Number((head.match(/\r\ncontent-length: *(\d+)/i) || [0, 0])[1]);
    if (got.length < end + 4 + length) return;
    const body = got.subarray(end + 4, end + 4 + length).toString('utf8');
    got = got.subarray(end + 4 + length);
    const w = waiting;
    waiting = null;
    w([Number(head.split(' ')[1]), body ? JSON.parse(body) : null]);
  });
  return {
    get: (path) => new Promise((resolve) => {
      waiting = resolve;
      s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    }),
    close: () => s.destroy(),
  };
}

async function post(port, body, signal) {
  const r = await fetch(`http://127.0.0.1:${port}/v1/attention`,
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal });
  const text = await r.text();
  return [r.status, r.status >= 400 ? JSON.parse(text) : null];
}

let failed = 0;
function expect(what, [status, body], wantStatus, wantCode) {
  const ok = status === wantStatus && (!wantCode || body?.code === wantCode);
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${status} ${body?.code || ''}` +
              (ok ? '' : ` (expected ${wantStatus} ${wantCode || ''})`));
}

// overloaded: a memory budget another upload holds
{
  const srv = await start(['--memory-budget', BUDGET]);
  const probe = keepAlive(srv.port);
  expect('readiness, idle', await probe.get('/readyz'), 200);
  const holder = connect(srv.port, '127.0.0.1');
  holder.write('POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
               'Content-Type: application/json\r\n' +
               `Content-Length: ${BUDGET_LARGEST_BODY}\r\n\r\n`);
  await sleep(SETTLE_MS);
  expect('an upload the held budget cannot take',
         await post(srv.port, ' '.repeat(BUDGET_LARGEST_BODY)), 503, 'overloaded');
  holder.destroy(); // the budget comes back
  let ready = [0, null];
  for (let i = 0; i < 50 && ready[0] !== 200; i++) {
    await sleep(SETTLE_MS / 10);
    ready = await probe.get('/readyz');
  }
  expect('readiness once the upload left', ready, 200);
  expect('served again', await post(srv.port, lesson), 200);
  probe.close();
  srv.kill('SIGTERM');
  expect('the server exits 0', [await srv.exited, null], 0);
}

// draining: SIGTERM while a long request computes on the one worker
{
  const srv = await start(['--threads', '1', '--fast-lane', 'off', '--grace', '2']);
  const probe = keepAlive(srv.port);
  expect('readiness, idle', await probe.get('/readyz'), 200);
  const long = post(srv.port, longRequest(['output']));
  await sleep(2 * SETTLE_MS);
  srv.kill('SIGTERM');
  await sleep(SETTLE_MS);
  expect('readiness while draining', await probe.get('/readyz'), 503, 'draining');
  expect('a computation --grace ends', await long, 503, 'draining');
  probe.close();
  expect('the drained server exits 0', [await srv.exited, null], 0);
}

// out_of_memory, on a server whose address space is limited
{
  const srv = await start(['--max-request-memory', '1024G', '--memory-budget', '1024G',
                           '--max-work', '0'], ['/usr/bin/prlimit', `--as=${ADDRESS_SPACE}`, '--']);
  expect('17 GB of weights in 2 GiB of address space',
         await post(srv.port, longRequest(['weights'])), 503, 'out_of_memory');
  expect('served on after an allocation failed', await post(srv.port, lesson), 200);
  srv.kill('SIGTERM');
  expect('the server exits 0', [await srv.exited, null], 0);
}

console.log(`${failed ? 0 : 1} passed, ${failed ? 1 : 0} failed`);
process.exit(failed ? 1 : 0);
