// `node test/provider-bridge.mjs ADAPTER.js STORE`: the text adapter
// transpiled by scripts/build-adapter.mjs, bound to one JavaScript store
// (`memory`, or `node:ROOT` for a NodeStore of the directory ROOT), serving
// its `dsh:fs/provider` export as JSON lines: one request on stdin, one
// reply on stdout. This is how the Rust text contract suite
// (tests/all/contract.rs, fixtures in tests/all/jco.rs) runs against the
// adapter under jco; the suite's rules stay written once, in Rust.
//
// A request is `{ "op": ..., ...arguments }`; a reply `{ "ok": value }`,
// `{ "err": { "code", "message" } }` (the provider's fs-error) or
// `{ "trap": text }` (anything else thrown). u64s cross as decimal strings
// both ways (JSON numbers lose precision past 2^53), bytes of the memory
// store's side door as hex. Targets are named by [shown, key], as the
// native host names them; streams and listings by the id the call returned.

import { createInterface } from 'node:readline';
import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';
import { bind, load, wasiFrom } from '../src/instance.js';
import { MemoryStore } from '../src/store/memory.js';
import { NodeStore } from '../src/store/node.js';

const dispose = Symbol.dispose ?? Symbol.for('dispose');
const [entry, kind] = process.argv.slice(2);
const store = kind === 'memory' ? new MemoryStore() : new NodeStore(kind.replace(/^node:/, ''));
const component = await load(new URL(entry, `file://${process.cwd()}/`));
const { provider } = bind(component, store, wasiFrom({ cli, clocks, io, random }));

/** The component's targets, by `shown\0key`; streams and listings by id. */
const targets = new Map();
const handles = new Map();
let nextId = 1;

function target([shown, key]) {
  const t = targets.get(`${shown}\0${key}`);
  if (!t) throw new Error(`${shown} was not resolved by this provider`);
  return t;
}

function handle(id) {
  const h = handles.get(id);
  if (!h) throw new Error(`no stream or listing ${id}`);
  return h;
}

function keep(resource) {
  handles.set(nextId, resource);
  return nextId++;
}

const u64 = (n) => (n == null ? null : String(n));

const ops = {
  resolve({ path }) {
    const t = provider.resolve(path);
    const shown = t.displayPath();
    const key = t.key();
    const name = `${shown}\0${key}`;
    if (targets.has(name)) t[dispose]?.();
    else targets.set(name, t);
    return { shown, key };
  },
  stat({ target: t }) {
    const info = provider.stat(target(t));
    return info == null ? null : { version: info.version, kind: info.kind, size: u64(info.size) };
  },
  readText({ target: t, maxBytes }) {
    return provider.readText(target(t), BigInt(maxBytes));
  },
  streamText({ target: t, start }) {
    return keep(provider.streamText(target(t), BigInt(start)));
  },
  next({ id, maxBytes }) {
    return handle(id).next(maxBytes) ?? null;
  },
  skip({ id, maxBytes, maxLines }) {
    const s = handle(id).skip(maxBytes, BigInt(maxLines));
    return s == null ? null : { bytes: u64(s.bytes), lines: u64(s.lines), midLine: s.midLine };
  },
  version({ id }) {
    return handle(id).version() ?? null;
  },
  writeText({ target: t, content, intent }) {
    return provider.writeText(target(t), content, intent ?? undefined);
  },
  editText({ target: t, edit, expected }) {
    const out = provider.editText(target(t), edit, expected ?? undefined);
    const excerpt = out.excerpt && { ...out.excerpt, firstLine: u64(out.excerpt.firstLine) };
    return { replacements: out.replacements, version: out.version, firstLine: u64(out.firstLine), excerpt };
  },
  listDir({ target: t }) {
    return keep(provider.listDir(target(t)));
  },
  entries({ id, max }) {
    return handle(id)
      .next(max)
      .map((e) => ({ name: e.name, kind: e.kind, size: u64(e.size), modified: u64(e.modified) }));
  },
  skipped({ id }) {
    return u64(handle(id).skipped());
  },
  search({ target: t, query }) {
    return provider.search(target(t), query) ?? null;
  },
  drop({ id }) {
    handle(id)[dispose]?.();
    handles.delete(id);
    return null;
  },
  // The memory store's side door: what a test plays as another writer.
  put({ path, hex }) {
    return memory().insert(path, Buffer.from(hex, 'hex'));
  },
  get({ path }) {
    const bytes = memory().get(path);
    return bytes == null ? null : Buffer.from(bytes).toString('hex');
  },
  mkdir({ path }) {
    return memory().createDir(path);
  },
  touch({ path }) {
    return memory().insert(path, memory().get(path));
  },
};

function memory() {
  if (!(store instanceof MemoryStore)) throw new Error('the side door is for the memory store only');
  return store;
}

function reply(request) {
  try {
    const op = ops[request.op];
    if (!op) throw new Error(`no operation ${request.op}`);
    return { ok: op(request) ?? null };
  } catch (e) {
    // The provider's fs-error, as jco throws the `err` case of a result.
    const payload = e?.payload;
    if (payload && typeof payload.code === 'string') return { err: { code: payload.code, message: payload.message } };
    return { trap: e?.stack ?? String(e) };
  }
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  process.stdout.write(`${JSON.stringify(reply(JSON.parse(line)))}\n`);
}
