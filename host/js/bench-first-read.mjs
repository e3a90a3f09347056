// The first windowed read of the middle of a large file through the npm
// package in Node (`NodeStore` over the local disk): each read in a fresh
// session of one process, so the first few include V8 optimizing the hot
// code and the later ones do not. `npm run bench` prints it beside `wc -l`;
// `dsh-fs-bench` runs this file as a script and sets its figures beside the
// library's in the same run. After each read, untimed in it, the same file
// is handed over as the component is handed it, without the component:
// Node's transport, what any component in this host pays before its work.
//
//     node bench-first-read.mjs FILE [READS]   # prints {"node":...,"ms":[...],"transport":[...]}

import { basename, dirname, resolve } from 'node:path';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Times `reads` first reads of 2000 lines from the middle of `file` (80-byte
 * lines, as `dsh-fs-bench` writes them), each in a fresh session; calls
 * `between()` after each, untimed (and awaits what it returns). Resolves to the milliseconds of each.
 */
export async function firstReads(file, reads, between = () => {}) {
  const { createSession } = await import('./src/index.js');
  const { NodeStore } = await import('./src/node.js');
  const middle = Math.floor(statSync(file).size / 80 / 2);
  const args = { file_path: basename(file), offset: middle, limit: 2000 };
  const ms = [];
  for (let i = 0; i < reads; i++) {
    const session = createSession({ store: new NodeStore(dirname(file)) });
    const t = performance.now();
    const r = session.execute('read', args);
    ms.push(performance.now() - t);
    if (r.isError) throw new Error(r.text);
    await between();
  }
  return ms;
}

/** The component's stream chunk (`STREAM_CHUNK`, guest/tools/src/tools/read.rs). */
const CHUNK = 256 << 10;
/** A linear memory like the component's, which every chunk is copied into. */
let memory;

/**
 * Milliseconds to hand `file` over as a large read hands it to the
 * component, without the component: `NodeStore`'s reads of it in the
 * component's chunks from the start (its read-ahead worker included), each
 * chunk copied into a WebAssembly memory as jco's binding copies it.
 */
export async function transport(file) {
  const { NodeStore } = await import('./src/node.js');
  memory ??= new Uint8Array(new WebAssembly.Memory({ initial: CHUNK / 65536 }).buffer);
  const store = new NodeStore(dirname(file));
  const t = performance.now();
  const reader = store.open({ key: basename(file), shown: basename(file) });
  try {
    for (let offset = 0; ; ) {
      const bytes = reader.read(offset, CHUNK);
      if (bytes.length === 0) break;
      memory.set(bytes);
      offset += bytes.length;
    }
  } finally {
    reader.close();
  }
  return performance.now() - t;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, reads = '15'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench-first-read.mjs FILE [READS]');
    process.exit(2);
  }
  const path = resolve(file);
  const passes = [];
  const ms = await firstReads(path, Number(reads), async () => passes.push(await transport(path)));
  console.log(JSON.stringify({ node: process.versions.node, ms, transport: passes }));
}
