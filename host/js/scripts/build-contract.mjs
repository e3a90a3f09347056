// `npm run build:contract` (run by `npm test`): builds the text adapter with
// its `contract` feature (world fs-text-contract: the byte-store contract
// suite of dsh-fs-core beside the provider) and transpiles it into
// test/generated/contract/, where test/contract.test.js runs the suite
// against each JavaScript store (and test/workerd.test.js against the
// Durable Object store, inside workerd). Its own target directory
// (target/guest-contract, `cargo xtask contract`), so the text layer the
// package ships is never rebuilt with the feature.

import { fileURLToPath } from 'node:url';
import { transpile, workerModules } from './transpile.mjs';
import { xtask } from './xtask.mjs';

const out = fileURLToPath(new URL('../test/generated/contract/', import.meta.url));
const coreModules = transpile(xtask('contract'), out, 'store-contract');
workerModules(out, coreModules);
console.log(`transpiled the store contract component -> ${out}`);
