// `npm run bench`: the figures for the JS host. Cold start (import of the
// package with compilation of the component, instantiation, first `read`
// result), per-call latency of sequential `read`s of a 4 KiB file and of
// one-line `edit`s of it in one session, the first windowed read of the
// middle of the large file `dsh-fs-bench` generates (over `NodeStore`, the
// local disk) against `wc -l` of it and against the file handed over without
// the component (Node's transport), and the size of the transpiled bundle
// (generated .js + .wasm). Prints; asserts nothing.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { firstReads, transport } from './bench-first-read.mjs';

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

// The first read of a large file: the whole file is read (its hash, its
// lines) to answer 2000 lines from its middle, each in a fresh session.
// `dsh-fs-bench` writes the file (80-byte lines); BENCH_FILE names another.
// V8 compiles the hot code of a large read again, optimized, on a background
// thread during the first few (which the read-ahead worker shares the second
// core with): the first five reads of the process are one figure, reads 11
// to 15, once that has settled, another.
const large = process.env.BENCH_FILE ?? `${tmpdir()}/dsh-fs-bench/text-100mib.txt`;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
let largeRead = null;
if (existsSync(large)) {
  const counts = [];
  const passes = [];
  const reads = await firstReads(large, 15, async () => {
    const w = performance.now();
    execFileSync('wc', ['-l', large]);
    counts.push(performance.now() - w);
    passes.push(await transport(large));
  });
  largeRead = {
    size: statSync(large).size,
    first: median(reads.slice(0, 5)),
    settled: median(reads.slice(10)),
    wc: median(counts),
    transport: median(passes.slice(10)),
  };
}

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
if (largeRead) {
  const { size, first, settled, wc, transport } = largeRead;
  const mib = (size / 2 ** 20).toFixed(0);
  console.log(
    `first read of the middle of ${mib} MiB (NodeStore, each in a fresh session): reads 1-5 of the process ${first.toFixed(1)} ms (${(first / wc).toFixed(2)}x), reads 11-15 ${settled.toFixed(1)} ms (${(settled / wc).toFixed(2)}x); \`wc -l\` ${wc.toFixed(1)} ms (as a child process, median of 15); the file handed over as to the component, without it (Node's transport) ${transport.toFixed(1)} ms (${(transport / wc).toFixed(2)}x)`,
  );
} else {
  console.log(`first read of a large file: skipped, no ${large} (run dsh-fs-bench first)`);
}
console.log(`transpiled bundle: ${total} bytes (${(total / 1024).toFixed(0)} KiB)`);
for (const [f, size] of bundle) console.log(`  ${f.padEnd(28)} ${size}`);
