// `npm run build:edge`: the Worker (src/worker/). The tools built with their
// `memory` feature and the text layer linked in (`cargo xtask edge`), so the
// result imports only `dsh:fs/store`, `dsh:fs/memory` and WASI; transpiled
// with jco into generated/edge/ with its core modules declared as Worker
// modules (worker-modules.js), then bundled with esbuild into
// generated/edge/worker.js, the one JavaScript module a Worker runs beside
// those `.wasm` modules. `node scripts/build-edge.mjs --config PORT DIR`
// also writes DIR/workerd.capnp, a workerd config serving it on
// 127.0.0.1:PORT with the Durable Objects' storage in DIR/storage: the
// workspaces' data stays out of the package's tree.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compose, transpile, workerModules } from './transpile.mjs';
import { bundleWorker, workerdConfig } from './workerd.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('../generated/edge/');

const wasm = process.env.DSH_FS_EDGE_WASM ?? compose('edge', ['dsh:fs/memory@']);
const coreModules = transpile(wasm, out, 'dsh-fs-edge');
workerModules(out, coreModules);
await bundleWorker(here('../src/worker/index.js'), `${out}worker.js`);
console.log(`built the Worker -> ${out}worker.js (${coreModules.length} core modules)`);

const at = process.argv.indexOf('--config');
if (at !== -1) {
  const [port, where] = process.argv.slice(at + 1);
  if (!port || !where) {
    console.error('usage: node scripts/build-edge.mjs --config PORT DIR');
    process.exit(2);
  }
  const dir = resolve(where);
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const config = join(dir, 'workerd.capnp');
  const modules = relative(dir, out) || '.';
  writeFileSync(config, workerdConfig({ coreModules, port: Number(port), storage: join(dir, 'storage'), modules }));
  console.log(`workerd serve ${config}`);
}
