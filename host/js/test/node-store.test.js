// The NodeStore on a real temporary directory, through the component: read,
// edit, stale edit by another writer; confinement (`..`, absolute paths and
// links that leave the root); FIFOs that never block; atomic replaces that
// leave no temp file and keep the mode.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createSession } from '../src/index.js';
import { AHEAD_BYTES, aheadReady, blocksTaken } from '../src/store/node-ahead.js';
import { NodeStore } from '../src/store/node.js';

let dir;
let outside;

before(() => {
  dir = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-node-'));
  outside = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-outside-'));
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

function session(root, options = {}) {
  const s = createSession({ store: new NodeStore(root), ...options });
  return (tool, args) => {
    const r = s.execute(tool, args);
    return { text: r.text, code: r.error?.code ?? null };
  };
}

test('read, edit, then a stale edit after another writer changed the file', () => {
  const root = fs.mkdtempSync(join(dir, 'edit-'));
  fs.writeFileSync(join(root, 'app.js'), 'let x = 1;\r\n');
  fs.chmodSync(join(root, 'app.js'), 0o640);
  const call = session(root);
  assert.deepEqual(call('read', { file_path: 'app.js' }), {
    text: 'File: app.js\n1: let x = 1;\n(End of file: 1 line.)',
    code: null,
  });
  const edited = call('edit', { file_path: 'app.js', old_string: 'x = 1', new_string: 'x = 2' });
  assert.match(edited.text, /^Edited app\.js: 1 replacement at line 1\./);
  assert.equal(fs.readFileSync(join(root, 'app.js'), 'utf8'), 'let x = 2;\r\n');
  assert.equal(fs.statSync(join(root, 'app.js')).mode & 0o777, 0o640);

  // A touch is not a change; other bytes are.
  const now = new Date(Date.now() + 5000);
  fs.utimesSync(join(root, 'app.js'), now, now);
  assert.equal(call('edit', { file_path: 'app.js', old_string: 'x = 2', new_string: 'x = 3' }).code, null);
  fs.writeFileSync(join(root, 'app.js'), 'let x = 9;\n');
  const stale = call('edit', { file_path: 'app.js', old_string: 'x = 9', new_string: 'x = 4' });
  assert.deepEqual(stale, {
    text: 'FS_STALE_VERSION: app.js changed since it was last read. Read the file again, then retry the change on its current content.',
    code: 'FS_STALE_VERSION',
  });
  assert.equal(fs.readFileSync(join(root, 'app.js'), 'utf8'), 'let x = 9;\n');
  assert.deepEqual(fs.readdirSync(root), ['app.js'], 'no temp file is left behind');
});

test('writes create parents; the root and its absolute spelling are accepted', () => {
  const root = fs.mkdtempSync(join(dir, 'write-'));
  const call = session(root);
  assert.match(call('write', { file_path: 'a/b/c.txt', content: 'deep\n' }).text, /^Created a\/b\/c\.txt/);
  assert.equal(fs.readFileSync(join(root, 'a/b/c.txt'), 'utf8'), 'deep\n');
  assert.equal(call('read', { file_path: join(root, 'a/b/c.txt') }).code, null);
  assert.equal(call('write', { file_path: 'a/b/c.txt/d', content: '' }).code, 'FS_NOT_DIRECTORY');
  assert.equal(call('read', { file_path: 'a' }).code, 'FS_NOT_REGULAR_FILE');
  assert.equal(call('read', { file_path: 'missing.txt' }).code, 'FS_NOT_FOUND');
  assert.match(call('glob', { pattern: '**/*.txt' }).text, /^a\/b\/c\.txt$/);
});

test('nothing outside the root is reached: .., absolute paths, links out', () => {
  const root = fs.mkdtempSync(join(dir, 'confined-'));
  fs.writeFileSync(join(outside, 'secret.txt'), 'secret\n');
  fs.writeFileSync(join(root, 'inside.txt'), 'inside\n');
  fs.symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
  fs.symlinkSync(outside, join(root, 'dir-out'));
  fs.symlinkSync('../' + outside.split('/').pop(), join(root, 'relative-out'));
  fs.symlinkSync('inside.txt', join(root, 'link-in.txt'));
  const call = session(root);
  for (const path of [
    '../x',
    join(outside, 'secret.txt'),
    'link-out.txt',
    'dir-out/secret.txt',
    'relative-out/secret.txt',
  ]) {
    assert.equal(call('read', { file_path: path }).code, 'FS_SANDBOX_DENIED', path);
  }
  assert.equal(call('write', { file_path: 'dir-out/new.txt', content: 'x' }).code, 'FS_SANDBOX_DENIED');
  assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
  // A link inside the root is the file it names: one observation for both spellings.
  assert.equal(call('read', { file_path: 'link-in.txt' }).code, null);
  assert.equal(call('edit', { file_path: 'inside.txt', old_string: 'inside', new_string: 'in' }).code, null);
  assert.equal(fs.readFileSync(join(root, 'inside.txt'), 'utf8'), 'in\n');
  // A hard link may have a twin outside the root: refused, as on the local disk.
  fs.writeFileSync(join(outside, 'linked.txt'), 'twin\n');
  fs.linkSync(join(outside, 'linked.txt'), join(root, 'linked.txt'));
  const linked = call('read', { file_path: 'linked.txt' });
  assert.equal(linked.code, 'FS_SANDBOX_DENIED', linked.text);
  assert.match(linked.text, /linked\.txt has 2 hard links/);
});

test('a FIFO is refused without blocking', () => {
  const root = fs.mkdtempSync(join(dir, 'fifo-'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
  const call = session(root);
  const r = call('read', { file_path: 'pipe' });
  assert.equal(r.code, 'FS_NOT_REGULAR_FILE', r.text);
  assert.match(r.text, /pipe is not a regular file \(FIFO, socket or device\)/);
  assert.equal(call('write', { file_path: 'pipe', content: 'x' }).code, 'FS_NOT_REGULAR_FILE');
});

test('reading ahead gives the bytes in order: any read size, a jump back, a file cut short', async () => {
  assert.equal(await aheadReady(), true, 'the read-ahead worker starts under Node');
  const root = fs.mkdtempSync(join(dir, 'ahead-'));
  const path = join(root, 'big.bin');
  // 9 MiB whose every 4-byte word is its own index: a byte out of place shows.
  const words = new Uint32Array(9 << 18);
  for (let i = 0; i < words.length; i++) words[i] = i;
  const bytes = Buffer.from(words.buffer);
  fs.writeFileSync(path, bytes);
  const store = new NodeStore(root);
  const target = { key: 'big.bin', shown: 'big.bin' };

  /** Reads from `from` in asks of `size` until the end (or `until`), copying each answer. */
  const readOn = (reader, from, size, until = Infinity) => {
    const parts = [];
    let at = from;
    for (let got; at < until && (got = reader.read(at, size)).length > 0; at += got.length) parts.push(Buffer.from(got));
    return Buffer.concat(parts);
  };

  for (const size of [256 << 10, (256 << 10) - 3, 64 << 10, 1 << 20, 4099]) {
    const taken = blocksTaken;
    const reader = store.open(target);
    assert.ok(readOn(reader, 0, size).equals(bytes), `asks of ${size} bytes`);
    reader.close();
    assert.ok(blocksTaken - taken >= 30, `the worker served the pass of ${size}-byte asks`);
  }

  // A jump back mid-pass, then on to the end; another reader meanwhile.
  const reader = store.open(target);
  assert.ok(readOn(reader, 0, 256 << 10, 3 << 20).equals(bytes.subarray(0, 3 << 20)));
  const other = store.open(target);
  assert.ok(readOn(other, 0, 256 << 10).equals(bytes), 'a second reader reads on its own');
  other.close();
  assert.ok(readOn(reader, 100, 256 << 10).equals(bytes.subarray(100)), 'after a jump back');
  reader.close();

  // The file cut short mid-pass, past what the worker may have read ahead
  // (bytes read before the cut are the file's then; the component's check of
  // the file's version after its read sees the change): the bytes before the
  // cut, and the end at it.
  const cut = store.open(target);
  const head = readOn(cut, 0, 256 << 10, (5 << 20) / 2);
  const end = head.length + AHEAD_BYTES + (512 << 10);
  assert.ok(end < bytes.length);
  fs.truncateSync(path, end);
  const rest = readOn(cut, head.length, 256 << 10);
  cut.close();
  assert.ok(Buffer.concat([head, rest]).equals(bytes.subarray(0, end)));

  // Closed mid-pass: the next pass, through the component (a file past the
  // 10 MiB it reads whole), reads ahead again and is right.
  const closed = store.open(target);
  readOn(closed, 0, 256 << 10, 1 << 20);
  closed.close();
  const lines = Array.from({ length: 1_100_000 }, (_, i) => `line ${i}`).join('\n');
  fs.writeFileSync(join(root, 'lines.txt'), lines);
  const taken = blocksTaken;
  const read = session(root)('read', { file_path: 'lines.txt', offset: 1_099_999, limit: 1 });
  assert.equal(read.code, null);
  assert.match(read.text, /^1099999: line 1099998$/m);
  assert.ok(blocksTaken > taken, 'the component read through the worker');
});
