#!/usr/bin/env node
// record_server.mjs - the attention server behind a recording TCP relay,
// started by a test suite as if it were the server itself.
//
// DESIGN
// Any suite that starts the server from a path (ATTENTION_SERVER, --server)
// can be pointed here instead: this starts CONTRACT_SERVER with the same
// arguments, reads its banner ("... listening on http://127.0.0.1:PORT ..."),
// listens on a loopback port of its own and prints the banner again with
// that port.  Every connection is relayed byte for byte to the server on a
// connection of its own (so keep-alive, pipelining, half-closes and framing
// the server refuses pass unchanged), and when it ends both byte streams
// are written to CONTRACT_RECORD/<label>-<pid>-<n>.json as
// {"label", "client", "server"} (base64), for check_traffic.mjs to split
// into requests and replies.  Signals go to the server, and this exits as
// it did.
//   CONTRACT_SERVER=build/attention-server CONTRACT_RECORD=DIR
//   CONTRACT_LABEL=test_results record_server.mjs --listen 127.0.0.1:0 ...
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';

const real = process.env.CONTRACT_SERVER;
const dir = process.env.CONTRACT_RECORD;
const label = process.env.CONTRACT_LABEL || 'traffic';
if (!real || !dir) {
  console.error('set CONTRACT_SERVER and CONTRACT_RECORD');
  process.exit(2);
}

const child = spawn(real, process.argv.slice(2),
                    { stdio: ['ignore', 'pipe', 'inherit'] });
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'])
  process.on(sig, () => child.kill(sig));
// the suite may close its end of stdout once it has read the banner
process.stdout.on('error', () => {});

let upstreamPort = 0;
let connections = 0;
const open = new Set(); // the connections not yet written down

function writeDown(rec) {
  if (!open.delete(rec)) return;
  writeFileSync(join(dir, `${label}-${process.pid}-${rec.n}.json`),
    JSON.stringify({ label, client: Buffer.concat(rec.client).toString('base64'),
                     server: Buffer.concat(rec.server).toString('base64') }));
}

const relay = createServer({ allowHalfOpen: true }, (down) => {
  const rec = { n: connections++, client: [], server: [] };
  open.add(rec);
  const up = createConnection({ host: '127.0.0.1', port: upstreamPort,
                                allowHalfOpen: true });
  down.on('data', (b) => { rec.client.push(b); up.write(b); });
  up.on('data', (b) => { rec.server.push(b); down.write(b); });
  down.on('end', () => up.end());
  up.on('end', () => down.end());
  let closed = 0;
  const done = () => { if (++closed === 2) writeDown(rec); };
  // a side that closes or fails lets the other finish sending what it
  // holds (a reply the server wrote before closing reaches the client)
  down.on('close', () => { up.end(); done(); });
  up.on('close', () => { down.end(); done(); });
  down.on('error', () => up.end());
  up.on('error', () => down.end());
});

let banner = '';
child.stdout.on('data', (b) => {
  if (upstreamPort) { process.stdout.write(b); return; }
  banner += b.toString();
  const nl = banner.indexOf('\n');
  if (nl < 0) return;
  const m = banner.match(/http:\/\/127\.0\.0\.1:(\d+)/);
  if (!m) { process.stdout.write(banner); return; }
  upstreamPort = Number(m[1]);
  relay.listen(0, '127.0.0.1', () => {
    process.stdout.write(banner.replace(`127.0.0.1:${upstreamPort}`,
                                        `127.0.0.1:${relay.address().port}`));
  });
});

child.on('exit', (code, signal) => {
  for (const rec of [...open]) writeDown(rec);
  relay.close();
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code);
});
