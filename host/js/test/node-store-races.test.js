// The NodeStore under a hostile neighbour and concurrent writers (the red
// team's report on the Node store): a parent swapped for a link out of the
// root between a resolve and its use, three processes incrementing one
// counter, a writer killed mid-write, a commit lock left by a killed process.
// The attacks themselves live in node-store-attacks.mjs.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSession } from '../src/index.js';
import { NodeStore } from '../src/store/node.js';
import { child, increments, swapRace } from './node-store-attacks.mjs';

function session(root, options = {}) {
  const s = createSession({ store: new NodeStore(root), ...options });
  return (tool, args) => {
    const r = s.execute(tool, args);
    return { text: r.text, code: r.error?.code ?? null };
  };
}

/** The dsh-fs temp files and locks on disk in `dir`. */
const asides = (dir) => fs.readdirSync(dir).filter((name) => name.includes('.dsh-fs'));

test('a parent swapped for a link out of the root: no write lands outside, no read comes from there', async (t) => {
  const n = await swapRace({ ms: 3000 });
  t.diagnostic(JSON.stringify(n));
  assert.equal(n.outsideEntries, 0, `written outside: ${n.escaped.join(', ')}`);
  assert.equal(n.readsOutside, 0);
  assert.ok(n.writes > 0 && n.reads > 0, 'the calls got through between the swaps');
});

test('three processes × 100 read-then-edit increments lose no update', async (t) => {
  const n = await increments({ processes: 3, each: 100 });
  t.diagnostic(`final ${n.final} of ${n.done}, lost ${n.lost}, stale retries ${n.retries}`);
  assert.deepEqual(n.errors, []);
  assert.equal(n.done, 300);
  // Every NodeStore commit of the name takes its lock and checks the guard under it.
  assert.equal(n.lost, 0);
  assert.deepEqual(n.leftovers, [], 'no temp file or lock is left');
});

test('a writer killed mid-write: its temp file is never listed and is swept', async () => {
  const root = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-killed-'));
  try {
    fs.writeFileSync(join(root, 'keep.txt'), 'keep\n');
    const killed = async () => {
      const writer = child('bigWrite', [new URL('../src/store/node.js', import.meta.url).href, root, 'big.txt', '64'], {
        onLine: (line, proc) => line === 'writing' && proc.kill('SIGKILL'),
      });
      // Reaped (not a zombie) once `exit` fires: its pid is gone.
      const { signal } = await writer.done;
      assert.equal(signal, 'SIGKILL');
      const [temp] = asides(root);
      assert.match(temp, /^\.big\.txt\.dsh-fs-[0-9a-f]{8}-\d+-[0-9a-f]{12}\.tmp$/);
      assert.ok(fs.statSync(join(root, temp)).size >= 6 << 20, 'the temp file holds the bytes written');
      return temp;
    };

    // Glob, grep and listings never show it; the listing sweeps it.
    let temp = await killed();
    const call = session(root);
    assert.equal(call('glob', { pattern: '*' }).text, 'keep.txt');
    assert.equal(call('glob', { pattern: '*.tmp' }).text, 'No files found');
    assert.doesNotMatch(call('grep', { pattern: 'needle' }).text, /dsh-fs/);
    assert.equal(new NodeStore(root).listDir({ key: '', shown: '.' }).next(100).length, 1);
    assert.deepEqual(asides(root), [], `${temp} was swept`);
    assert.equal(fs.existsSync(join(root, 'big.txt')), false);

    // A commit in its directory sweeps it too.
    temp = await killed();
    assert.equal(call('write', { file_path: 'other.txt', content: 'x\n' }).code, null);
    assert.deepEqual(asides(root), [], `${temp} was swept`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a commit lock left by a killed process is broken, and never listed', async () => {
  const root = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-lock-'));
  const killedHolder = async () => {
    const holder = child('holdLock', [root, 'f.txt'], { onLine: (line, proc) => line === 'locked' && proc.kill('SIGKILL') });
    await holder.done;
    assert.deepEqual(asides(root), ['.f.txt.dsh-fs.lock']);
  };
  try {
    fs.writeFileSync(join(root, 'f.txt'), 'one\n');
    const call = session(root);
    assert.equal(call('read', { file_path: 'f.txt' }).code, null);
    await killedHolder();
    const started = Date.now();
    assert.equal(call('edit', { file_path: 'f.txt', old_string: 'one', new_string: 'two' }).code, null);
    assert.ok(Date.now() - started < 2000, 'without waiting for the lock to age');
    assert.equal(fs.readFileSync(join(root, 'f.txt'), 'utf8'), 'two\n');
    assert.deepEqual(asides(root), []);

    await killedHolder();
    assert.equal(call('glob', { pattern: '*' }).text, 'f.txt');
    assert.deepEqual(asides(root), [], 'the listing swept it');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
