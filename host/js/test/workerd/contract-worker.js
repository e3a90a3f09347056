// The byte-store contract suite (the text adapter built with its `contract`
// feature, test/generated/contract/) run inside workerd against the
// DurableObjectStore: each check in a Durable Object of its own, so on a
// fresh, empty store. Bundled and served by test/workerd.test.js.
//   GET /checks      the names of the checks, as JSON
//   POST /run/NAME   runs one: 200 when it holds, 500 with what failed

import { DurableObject } from 'cloudflare:workers';
import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';
import { bind, wasiFrom } from '../../src/imports.js';
import { DurableObjectStore } from '../../src/store/durable.js';
import { instantiate } from '../generated/contract/store-contract.js';
import { coreModules } from '../generated/contract/worker-modules.js';

const component = { instantiate, compiled: new Map(Object.entries(coreModules)) };
const wasi = wasiFrom({ cli, clocks, io, random });
const suite = (store) => bind(component, store, wasi).storeContract;

export class ContractStore extends DurableObject {
  async fetch(request) {
    const name = decodeURIComponent(new URL(request.url).pathname.split('/')[2]);
    try {
      suite(new DurableObjectStore(this.ctx.storage)).run(name);
      return new Response('ok\n');
    } catch (e) {
      return new Response(`${e?.payload ?? e?.stack ?? e}\n`, { status: 500 });
    }
  }
}

export default {
  async fetch(request, env) {
    const [, route, name] = new URL(request.url).pathname.split('/');
    if (route === 'checks') {
      // A store is needed to instantiate; this one is never written.
      const names = bind(component, { stat: () => null }, wasi).storeContract.checks();
      return Response.json(names);
    }
    if (route === 'run' && name) {
      return env.CONTRACT.get(env.CONTRACT.idFromName(name)).fetch(request);
    }
    return new Response('not found\n', { status: 404 });
  },
};
