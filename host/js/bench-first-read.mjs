// The first windowed read of the middle of a large file through the npm
// package in Node (`NodeStore` over the local disk): each read in a fresh
// session of one process, so the first few include V8 optimizing the hot
// code and the later ones do not. `npm run bench` prints it beside `wc -l`;
// `dsh-fs-bench` runs this file as a script and sets its figures beside the
// library's in the same run.
//
//     node bench-first-read.mjs FILE [READS]   # prints {"node":...,"ms":[...]}

import { basename, dirname, resolve } from 'node:path';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Times `reads` first reads of 2000 lines from the middle of `file` (80-byte
 * lines, as `dsh-fs-bench` writes them), each in a fresh session; calls
 * `between()` after each, untimed. Resolves to the milliseconds of each.
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
    between();
  }
  return ms;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, reads = '15'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench-first-read.mjs FILE [READS]');
    process.exit(2);
  }
  const ms = await firstReads(resolve(file), Number(reads));
  console.log(JSON.stringify({ node: process.versions.node, ms }));
}
