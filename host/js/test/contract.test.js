// The byte-store contract (dsh-fs-core's `store::contract`, the suite every
// Rust store runs) against the JavaScript stores: the text adapter built
// with its `contract` feature runs each check inside the component against
// a fresh store of each kind, through the same binding the package uses.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';
import { MemoryStore } from '../src/index.js';
import { bind, load, wasiFrom } from '../src/instance.js';
import { NodeStore } from '../src/store/node.js';

const component = await load(new URL('./generated/contract/store-contract.js', import.meta.url));
const wasi = wasiFrom({ cli, clocks, io, random });
const suite = (store) => bind(component, store, wasi).storeContract;
const names = suite(new MemoryStore()).checks();

const scratch = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-contract-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const stores = {
  MemoryStore: () => new MemoryStore(),
  NodeStore: () => new NodeStore(fs.mkdtempSync(join(scratch, 'store-'))),
};

test('the suite has its checks', () => {
  assert.ok(names.length >= 16, names.join(' '));
});

for (const [kind, fresh] of Object.entries(stores)) {
  describe(`${kind} keeps the byte-store contract`, () => {
    for (const name of names) {
      test(name, () => {
        // Each check on a fresh store, in a fresh instance.
        try {
          suite(fresh()).run(name);
        } catch (e) {
          assert.fail(`${name}: ${e.payload ?? e}`);
        }
      });
    }
  });
}
