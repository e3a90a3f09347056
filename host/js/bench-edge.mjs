// `npm run bench:edge`: the Worker in workerd, measured. Needs
// `npm run build:edge`. Prints:
// - the bundle: worker.js and the .wasm modules, raw and gzipped;
// - cold start: workerd started to listening, then the first MCP call
//   (the Durable Object made, the component instantiated, the call run),
//   and the same first call after a restart of workerd;
// - per call: a 4 KiB read over MCP (raw JSON-RPC over HTTP, one request per
//   call) against the baseline of the same 4 KiB through the Worker's
//   `GET /files/` route (the same HTTP hop and Durable Object, no component)
//   and of a `tools/list` over MCP (the MCP server's own cost, no component);
// - a file of --mib MiB (10 by default): its upload, a windowed read of its
//   middle, a one-line edit, the linear memory of the workspace's instance
//   (what counts against an isolate's 128 MiB with the JS heap) and workerd's
//   peak RSS (the whole process: SQLite's cache, the runtime, the upload).

import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { serveWorker } from './test/workerd/serve.js';

const EDGE = fileURLToPath(new URL('./generated/edge/', import.meta.url));
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const MIB = arg('mib', 10);
const CALLS = arg('calls', 300);

const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
const ms = (n) => `${n.toFixed(2)} ms`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let raw = 0;
let zipped = 0;
for (const f of fs.readdirSync(EDGE).filter((f) => f === 'worker.js' || f.endsWith('.wasm'))) {
  const bytes = fs.readFileSync(join(EDGE, f));
  raw += bytes.length;
  zipped += gzipSync(bytes).length;
}
console.log(`bundle: ${kib(raw)} (${kib(zipped)} gzipped): worker.js and the component's core modules`);

const scratch = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-bench-edge-'));
const started = performance.now();
const edge = await serveWorker({ dir: scratch, worker: join(EDGE, 'worker.js'), wasmDirs: [EDGE], objects: { Workspace: 'WORKSPACES' } });
const listening = performance.now() - started;

let id = 0;
async function request(workspace, method, params) {
  const r = await fetch(`${edge.url}/mcp/${workspace}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
  });
  return r.json();
}
async function rpc(workspace, name, args) {
  const answer = await request(workspace, 'tools/call', { name, arguments: args });
  if (answer.result?.isError) throw new Error(answer.result.content[0].text);
  return answer.result.content[0].text;
}
const timed = async (f) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

try {
  const first = await timed(() => rpc('cold', 'write', { file_path: 'a.txt', content: 'x\n' }));
  await edge.restart();
  const again = await timed(() => rpc('cold', 'read', { file_path: 'a.txt' }));
  console.log(`cold start: workerd listening after ${ms(listening)}; first call ${ms(first)}; first call after a restart ${ms(again)}`);

  const page = `${'y'.repeat(63)}\n`.repeat(64);
  await fetch(`${edge.url}/files/calls/page.txt`, { method: 'PUT', body: page });
  await rpc('calls', 'read', { file_path: 'page.txt' });
  const reads = [];
  const lists = [];
  const gets = [];
  for (let i = 0; i < CALLS; i++) {
    reads.push(await timed(() => rpc('calls', 'read', { file_path: 'page.txt' })));
    lists.push(await timed(() => request('calls', 'tools/list', {})));
    gets.push(await timed(async () => (await fetch(`${edge.url}/files/calls/page.txt`)).arrayBuffer()));
  }
  const [r, l, g] = [median(reads), median(lists), median(gets)];
  console.log(
    `4 KiB read over MCP: ${ms(r)} a call (median of ${CALLS}); tools/list over MCP (no component call): ${ms(l)}; ` +
      `GET /files/ of the same 4 KiB: ${ms(g)}; read/GET ${(r / g).toFixed(2)}x`,
  );

  const rss = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${edge.process.pid}/status`, 'utf8'))[1]) / 1024;
  const before = rss('VmRSS');
  const line = (i) => `line ${String(i).padStart(8, '0')} ${'x'.repeat(50)}\n`;
  const count = Math.floor((MIB * 2 ** 20) / line(0).length);
  const body = Array.from({ length: count }, (_, i) => line(i)).join('');
  const up = await timed(() => fetch(`${edge.url}/files/large/big.txt`, { method: 'PUT', body }));
  const middle = Math.floor(count / 2);
  const read = await timed(() => rpc('large', 'read', { file_path: 'big.txt', offset: middle, limit: 2000 }));
  const edit = await timed(() =>
    rpc('large', 'edit', { file_path: 'big.txt', old_string: `line ${String(middle).padStart(8, '0')} `, new_string: 'MIDDLE ' }),
  );
  const peak = rss('VmHWM');
  const { wasmMemoryBytes } = await (await fetch(`${edge.url}/stats/large`)).json();
  console.log(
    `${MIB} MiB file: upload ${ms(up)}; read of 2000 lines at its middle ${ms(read)}; one-line edit ${ms(edit)}; ` +
      `the instance's linear memory ${(wasmMemoryBytes / 2 ** 20).toFixed(1)} MiB; ` +
      `workerd RSS ${before.toFixed(0)} MiB before the upload, peak ${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)})`,
  );
} finally {
  await edge.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
}
