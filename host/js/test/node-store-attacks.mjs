// The red team's attacks on the NodeStore, as functions the tests run (and
// `node test/node-store-attacks.mjs measure [STORE_MODULE]` prints the figures
// of): a neighbour swapping a parent directory for a link out of the root,
// processes incrementing one counter through their own sessions, a writer
// killed mid-write. Run with a mode as its first argument, the file is also
// the child process each attack needs.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(sleeper, 0, 0, ms);
/** The store module attacked unless told otherwise. */
export const STORE = new URL('../src/store/node.js', import.meta.url).href;

/** A child process running `mode` of this file; resolves to its stdout when it exits. */
export function child(mode, args, { onLine } = {}) {
  const proc = spawn(process.execPath, [self, mode, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (text) => {
    out += text;
    if (onLine) for (const line of text.split('\n').filter(Boolean)) onLine(line, proc);
  });
  const done = new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
  return { proc, done };
}

/** A session's `call(tool, args)` on a NodeStore of `root` from `storeModule`. */
async function sessionOn(storeModule, root, options = {}) {
  const { NodeStore } = await import(storeModule);
  const { createSession } = await import('../src/index.js');
  const session = createSession({ store: new NodeStore(root), ...options });
  return (tool, args) => {
    const r = session.execute(tool, args);
    return { text: r.text, code: r.error?.code ?? null };
  };
}

/**
 * For `ms`, a neighbour process swaps `root/sub` for a link to `outside` and
 * back, in a loop, while this process writes and reads under `sub/` through
 * a session. Counts the entries written outside (files, temp files, the
 * decoy `f.txt` overwritten) and the reads that returned outside content.
 */
export async function swapRace({ storeModule = STORE, ms = 3000 } = {}) {
  const base = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-swap-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  fs.mkdirSync(join(root, 'sub'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(join(root, 'sub', 'f.txt'), 'inside\n');
  fs.writeFileSync(join(outside, 'f.txt'), 'OUTSIDE\n');
  const call = await sessionOn(storeModule, root, { observationPolicy: false });
  let ready;
  const started = new Promise((resolve) => (ready = resolve));
  const neighbour = child('swap', [root, outside, String(ms)], { onLine: () => ready() });
  await Promise.race([started, neighbour.done]);
  const n = { writes: 0, reads: 0, readsOutside: 0, refused: 0 };
  const until = Date.now() + ms;
  for (let i = 0; Date.now() < until; i++) {
    const w = call('write', { file_path: i % 2 ? `sub/new-${i}.txt` : 'sub/f.txt', content: 'inside\n' });
    if (w.code === null) n.writes++;
    else n.refused++;
    const r = call('read', { file_path: 'sub/f.txt' });
    if (r.code === null) n.reads++;
    if (r.text.includes('OUTSIDE')) n.readsOutside++;
  }
  const { code } = await neighbour.done;
  if (code !== 0) throw new Error(`the neighbour process failed (exit ${code})`);
  // Everything outside but the decoy, as it was, is a write that escaped.
  const escaped = walk(outside).filter((p) => !(p === 'f.txt' && isDecoy(join(outside, p))));
  fs.rmSync(base, { recursive: true, force: true });
  return { ...n, outsideEntries: escaped.length, escaped: escaped.slice(0, 5) };
}

function isDecoy(path) {
  try {
    return fs.readFileSync(path, 'utf8') === 'OUTSIDE\n';
  } catch {
    return false;
  }
}

/** Every file below `dir`, relative. */
function walk(dir, prefix = '') {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name), `${prefix}${d.name}/`) : [`${prefix}${d.name}`],
  );
}

/**
 * `processes` processes each make `each` successful read-then-edit
 * increments of one counter through their own session; returns the final
 * count and how many successful increments were lost.
 */
export async function increments({ storeModule = STORE, processes = 3, each = 100 } = {}) {
  const root = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-count-'));
  fs.writeFileSync(join(root, 'counter.txt'), 'count: 0\n');
  const runs = await Promise.all(
    Array.from({ length: processes }, () => child('increment', [storeModule, root, String(each)]).done),
  );
  const reports = runs.map((r) => JSON.parse(r.out));
  const final = Number(/count: (\d+)/.exec(fs.readFileSync(join(root, 'counter.txt'), 'utf8'))[1]);
  const leftovers = fs.readdirSync(root).filter((name) => name !== 'counter.txt');
  fs.rmSync(root, { recursive: true, force: true });
  const done = reports.reduce((n, r) => n + r.done, 0);
  return {
    final,
    done,
    lost: done - final,
    retries: reports.reduce((n, r) => n + r.retries, 0),
    errors: reports.flatMap((r) => r.errors),
    leftovers,
  };
}

/** The child processes, by mode. */
const children = {
  /**
   * Swaps `root/sub` for a link to `outside` and back until `ms` pass. A
   * writer may create `sub` while it is away; such a directory is moved
   * aside (inside the root) and the round starts again.
   */
  swap(root, outside, ms) {
    const sub = join(root, 'sub');
    const real = join(root, 'sub.real');
    let junk = 0;
    const repair = () => {
      const st = fs.lstatSync(sub, { throwIfNoEntry: false });
      if (st?.isSymbolicLink()) fs.unlinkSync(sub);
      else if (st && fs.existsSync(real)) fs.renameSync(sub, join(root, `junk-${junk++}`));
      if (!fs.existsSync(sub) && fs.existsSync(real)) fs.renameSync(real, sub);
    };
    console.log('swapping');
    for (const until = Date.now() + Number(ms); Date.now() < until; ) {
      try {
        fs.renameSync(sub, real);
        fs.symlinkSync(outside, sub);
        fs.unlinkSync(sub);
        fs.renameSync(real, sub);
        // Inside for a moment, so that calls get under way.
        sleep(Math.random() * 0.5);
      } catch {
        try {
          repair();
        } catch {
          // The writer moved things meanwhile: the next round repairs again.
        }
      }
    }
    repair();
  },

  /** `count` successful read-then-edit increments of `root/counter.txt`; prints a JSON report. */
  async increment(storeModule, root, count) {
    const call = await sessionOn(storeModule, root);
    const report = { done: 0, retries: 0, errors: [] };
    for (let tries = 0; report.done < Number(count) && tries < 100 * Number(count); tries++) {
      const read = call('read', { file_path: 'counter.txt' });
      const n = Number(/^1: count: (\d+)$/m.exec(read.text)?.[1]);
      const edit = call('edit', { file_path: 'counter.txt', old_string: `count: ${n}`, new_string: `count: ${n + 1}` });
      if (edit.code === null) report.done++;
      else if (['FS_STALE_VERSION', 'FS_EDIT_NOT_FOUND'].includes(edit.code)) report.retries++;
      else report.errors.push(edit.text);
    }
    console.log(JSON.stringify(report));
  },

  /**
   * Writes `mib` MiB to `root/name` through a NodeStore replacement, 1 MiB at
   * a time with a pause between, printing `writing` after the sixth; never
   * commits (the parent kills it).
   */
  async bigWrite(storeModule, root, name, mib) {
    const { NodeStore } = await import(storeModule);
    const store = new NodeStore(root);
    const [replacement] = store.replace({ key: name, shown: name }, true);
    const chunk = Buffer.from('needle in a temp file\n'.repeat((1 << 20) / 22 + 1).slice(0, 1 << 20));
    for (let i = 0; i < Number(mib); i++) {
      replacement.write(chunk);
      if (i === 5) console.log('writing');
      sleep(20);
    }
    replacement.commit({ tag: 'none' });
  },

  /** Takes the commit lock of `root/name` and holds it until killed. */
  async holdLock(root, name) {
    const { lock } = await import('../src/store/node-aside.js');
    const { Dir } = await import('../src/store/node-dir.js');
    const st = fs.statSync(root, { bigint: true });
    lock(Dir.open(root, { dev: st.dev, ino: st.ino }, [], name), name, name);
    console.log('locked');
    setInterval(() => {}, 1000);
  },

  /** Prints the figures of every attack on STORE_MODULE (default: this package's NodeStore). */
  async measure(storeModule = STORE) {
    if (!storeModule.startsWith('file:')) storeModule = pathToFileURL(storeModule).href;
    console.log('swap race:', await swapRace({ storeModule }));
    console.log('3 x 100 increments:', await increments({ storeModule }));
  },
};

const [mode, ...args] = process.argv.slice(2);
if (process.argv[1] === self && mode) await children[mode](...args);
