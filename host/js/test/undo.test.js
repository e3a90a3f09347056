// The change journal through the component on the JS MemoryStore and the
// NodeStore: create, edit ×3, write, checkpoint, edit ×2, an outside change,
// revert to the checkpoint (the outside-changed file left alone), a redo,
// revert to the start; every file's bytes checked after each step, a CRLF
// file with a BOM among them. The same scenario runs in Rust over the local
// disk, memory, a bucket and the stock wasmtime CLI (tests/all/undo.rs).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createSession, MemoryStore } from '../src/index.js';
import { NodeStore } from '../src/store/node.js';

const WIN = Buffer.from('\uFEFF[core]\r\nname = one\r\nsize = 1\r\n');
const scratch = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-undo-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Each store with a side door: put and get bytes behind the session's back. */
const stores = {
  MemoryStore: () => {
    const store = new MemoryStore();
    return {
      store,
      put: (path, bytes) => store.insert(path, bytes),
      get: (path) => {
        const bytes = store.get(path);
        return bytes && Buffer.from(bytes);
      },
    };
  },
  NodeStore: () => {
    const root = fs.mkdtempSync(join(scratch, 'node-'));
    return {
      store: new NodeStore(root),
      put: (path, bytes) => {
        fs.mkdirSync(join(root, path, '..'), { recursive: true });
        fs.writeFileSync(join(root, path), bytes);
      },
      get: (path) => (fs.existsSync(join(root, path)) ? fs.readFileSync(join(root, path)) : undefined),
    };
  },
};

for (const [name, make] of Object.entries(stores)) {
  describe(`the journal on the ${name}`, () => {
    test('reverts to its checkpoints, byte for byte, and leaves an outside change alone', () => {
      const { store, put, get } = make();
      put('win.ini', WIN);
      put('notes.md', Buffer.from('# Notes\n- one\n'));
      const session = createSession({ store });
      const ok = (tool, args) => {
        const r = session.execute(tool, args);
        assert.equal(r.isError, false, r.text);
        return r.text;
      };
      const edit = (file_path, old_string, new_string) => ok('edit', { file_path, old_string, new_string });
      assert.match(ok('checkpoint', { label: 'start' }), /^Checkpoint 1 \(start\) set after 0 changes\./);

      ok('write', { file_path: 'src/new.rs', content: 'fn a() {}\n' });
      ok('read', { file_path: 'win.ini' });
      edit('win.ini', 'name = one', 'name = two');
      edit('win.ini', 'size = 1', 'size = 2');
      edit('src/new.rs', 'fn a() {}', 'fn a() {}\nfn b() {}');
      ok('read', { file_path: 'notes.md' });
      ok('write', { file_path: 'notes.md', content: '# Notes\n- one\n- two\n' });
      const win2 = Buffer.from('\uFEFF[core]\r\nname = two\r\nsize = 2\r\n');
      assert.deepEqual(get('win.ini'), win2);
      assert.deepEqual(get('src/new.rs'), Buffer.from('fn a() {}\nfn b() {}\n'));

      assert.match(ok('checkpoint', {}), /^Checkpoint 2 set after 5 changes\./);
      edit('win.ini', '[core]', '[main]');
      edit('notes.md', '- two', '- three');
      put('notes.md', Buffer.from('# Notes\n- one\n- three\n- outside\n'));

      const back = ok('revert', { to: 2 });
      assert.match(back, /^Reverted to checkpoint 2: 1 file restored, 1 left alone\./);
      assert.match(back, /\nLeft alone notes\.md: someone else changed it since/);
      assert.match(back, /To redo: revert with to=3\.$/);
      assert.deepEqual(get('win.ini'), win2);
      assert.deepEqual(get('notes.md'), Buffer.from('# Notes\n- one\n- three\n- outside\n'));

      assert.match(ok('revert', { to: 3 }), /\nRestored win\.ini/);
      assert.deepEqual(get('win.ini'), Buffer.from('\uFEFF[main]\r\nname = two\r\nsize = 2\r\n'));

      const first = ok('revert', { to: 1 });
      assert.match(first, /\nRemoved src\/new\.rs \(2 lines\): this session created it\./);
      assert.deepEqual(get('win.ini'), WIN);
      assert.equal(get('src/new.rs'), undefined);
      assert.deepEqual(get('notes.md'), Buffer.from('# Notes\n- one\n- three\n- outside\n'));
      edit('win.ini', 'size = 1', 'size = 9');
    });
  });
}
