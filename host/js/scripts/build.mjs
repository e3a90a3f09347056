// `npm run build`: the tools component with the text layer linked in over
// an imported byte store (`cargo xtask js`), so it imports only
// `dsh:fs/store` and WASI; transpiles it with jco into generated/ and lists
// its core modules for src/component.js. DSH_FS_WASM names an already
// built component instead.

import { fileURLToPath } from 'node:url';
import { compose, transpile } from './transpile.mjs';

const out = fileURLToPath(new URL('../generated/', import.meta.url));
const wasm = process.env.DSH_FS_WASM ?? compose('js');
const coreModules = transpile(wasm, out, 'dsh-fs-tools');
console.log(`transpiled ${wasm} -> ${out} (${coreModules.length} core modules)`);
