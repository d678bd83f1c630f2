// send_corpus.mjs - the requests of corpus.jsonl that no other suite sends
// (a refusal for each problem code the recorded suites leave out, requests
// that carry every optional field, HEAD of every GET route), sent to the
// server behind record_server.mjs so that check_traffic.mjs sees them too.
// Each line says what the server must answer (status, and the problem's
// code), so the corpus cannot drift from the server unnoticed.
//   CONTRACT_SERVER=... CONTRACT_RECORD=... node send_corpus.mjs CORPUS
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const corpus = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));

const server = spawn(join(here, 'record_server.mjs'),
  ['--listen', '127.0.0.1:0', '--threads', '2'],
  { env: { ...process.env, CONTRACT_LABEL: 'corpus' }, stdio: ['ignore', 'pipe', 'ignore'] });
const port = await new Promise((resolve, reject) => {
  let text = '';
  server.stdout.on('data', (b) => {
    text += b;
    const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)/);
    if (m) resolve(Number(m[1]));
  });
  server.on('exit', () => reject(new Error('the server did not start')));
});
const base = `http://127.0.0.1:${port}`;

// [status, parsed body or null] of bytes sent on a connection of their own
function raw(bytes) {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    let got = '';
    s.on('data', (b) => { got += b; });
    s.on('end', () => {
      const body = got.slice(got.indexOf('\r\n\r\n') + 4);
      resolve([Number(got.split(' ')[1]), body ? JSON.parse(body) : null]);
    });
  });
}

let failed = 0;
for (const row of corpus) {
  const outcomes = [];
  if (row.raw) {
    outcomes.push(await raw(row.raw));
  } else if (row.heads) {
    for (const path of row.heads) {
      const r = await fetch(base + path, { method: 'HEAD' });
      outcomes.push([r.status, null, path]);
    }
  } else {
    const r = await fetch(base + row.path, { method: row.method, headers: row.headers,
                                             body: JSON.stringify(row.body) });
    const text = await r.text();
    outcomes.push([r.status, r.status >= 400 ? JSON.parse(text) : null]);
  }
  for (const [status, body, path] of outcomes) {
    const ok = status === row.status && (!row.code || body?.code === row.code);
    if (!ok) failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${row.name}${path ? ` ${path}` : ''}: ${status} ${body?.code || ''}` +
                (ok ? '' : ` (expected ${row.status} ${row.code || ''})`));
  }
}
server.kill('SIGTERM');
const code = await new Promise((resolve) => server.on('exit', resolve));
console.log(`${corpus.length - (failed ? 1 : 0)} passed, ${failed ? 1 : 0} failed`);
process.exit(failed || code ? 1 : 0);
