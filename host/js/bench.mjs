// `npm run bench`: the figures for the JS host. Cold start (import of the
// package with compilation of the component, instantiation, first `read`
// result), per-call latency of sequential `read`s of a 4 KiB file and of
// one-line `edit`s of it in one session, and the size of the transpiled
// bundle (generated .js + .wasm). Prints; asserts nothing.

import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CALLS = Number(process.env.CALLS ?? 10_000);

const started = performance.now();
const { createSession, MemoryStore } = await import('./src/index.js');
const imported = performance.now();

const store = new MemoryStore();
// The file `dsh-fs bench` reads: 80-byte lines, cut at 4096 bytes.
const lines = Array.from({ length: 52 }, (_, i) => `${String(i).padStart(79)}\n`).join('');
store.insert('small-4k.txt', lines.slice(0, 4096));
const session = createSession({ store });
const args = { file_path: 'small-4k.txt' };
const first = session.execute('read', args);
const cold = performance.now();
if (first.isError) throw new Error(first.text);

for (let i = 0; i < 1000; i++) session.execute('read', args); // warm-up
const loop = performance.now();
for (let i = 0; i < CALLS; i++) {
  const r = session.execute('read', args);
  if (r.isError) throw new Error(r.text);
}
const elapsed = performance.now() - loop;

// Edits of one line, back and forth (each edit's own version authorizes the next).
const edits = Math.max(1, Math.floor(CALLS / 10));
const marker = { file_path: 'small-4k.txt', old_string: `${String(25).padStart(79)}\n` };
const swap = (i) =>
  i % 2 === 0
    ? { ...marker, new_string: `${'edited'.padStart(79)}\n` }
    : { file_path: marker.file_path, old_string: `${'edited'.padStart(79)}\n`, new_string: marker.old_string };
const editLoop = performance.now();
for (let i = 0; i < edits; i++) {
  const r = session.execute('edit', swap(i));
  if (r.isError) throw new Error(r.text);
}
const editElapsed = performance.now() - editLoop;

const generated = fileURLToPath(new URL('./generated/', import.meta.url));
const bundle = readdirSync(generated)
  .filter((f) => f.endsWith('.js') || f.endsWith('.wasm'))
  .map((f) => [f, statSync(generated + f).size]);
const total = bundle.reduce((sum, [, size]) => sum + size, 0);

console.log(`dsh-fs JS host, Node ${process.versions.node}`);
console.log(
  `cold start: ${(cold - started).toFixed(1)} ms (import + compile ${(imported - started).toFixed(1)} ms, instantiate + first read ${(cold - imported).toFixed(1)} ms)`,
);
console.log(
  `${CALLS} sequential reads of a 4 KiB file, one session: ${((elapsed * 1000) / CALLS).toFixed(1)} µs/call (${Math.round((CALLS * 1000) / elapsed)} calls/s)`,
);
console.log(
  `${edits} sequential one-line edits of it: ${((editElapsed * 1000) / edits).toFixed(1)} µs/call (${Math.round((edits * 1000) / editElapsed)} calls/s)`,
);
console.log(`transpiled bundle: ${total} bytes (${(total / 1024).toFixed(0)} KiB)`);
for (const [f, size] of bundle) console.log(`  ${f.padEnd(28)} ${size}`);
