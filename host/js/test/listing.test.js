// Directory listings: the JS MemoryStore's refusals (the cases the Rust
// suite in tests/all/listing.rs runs on every Rust backend), and the listing
// as the component hands it out over a store: byte order whatever order the
// store gives, directory reads and path suggestions.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createSession, FsError, MemoryStore } from '../src/index.js';

function seeded(files) {
  const store = new MemoryStore();
  for (const [path, content] of Object.entries(files)) store.insert(path, content);
  return store;
}

/** What a directory read shows: the entries listed under the first line. */
function shown(store, path) {
  const r = createSession({ store }).execute('read', { file_path: path });
  assert.equal(r.error?.code, 'FS_NOT_REGULAR_FILE', r.text);
  return r.text.split('\n').slice(1).map((line) => line.trim());
}

function code(store, key) {
  try {
    store.listDir({ key, shown: key || '.' });
  } catch (e) {
    assert.ok(e instanceof FsError, String(e));
    return e.code;
  }
  assert.fail(`listing ${key} succeeded`);
}

describe('listings over a store', () => {
  test('names in byte order, whatever order the store gives them in', () => {
    const store = seeded({
      'b.txt': 'bb',
      'B.txt': 'B',
      'a/x.txt': 'xyz',
      'a/deeper/y.txt': 'y',
      'é.md': 'e\n',
      'a.rs': '',
    });
    const root = ['B.txt', 'a/', 'a.rs', 'b.txt', 'é.md'];
    for (const spelling of ['.', './', 'a/..', '/workspace']) {
      assert.deepEqual(shown(store, spelling), root, spelling);
    }
    assert.deepEqual(shown(store, 'a'), ['deeper/', 'x.txt']);
    const reversed = new (class extends MemoryStore {
      listDir(place) {
        return super.listDir(place).reverse();
      }
    })();
    reversed.insert('z.txt', '');
    reversed.insert('a.txt', '');
    assert.deepEqual(shown(reversed, '.'), ['a.txt', 'z.txt']);
  });

  test('byte order, not UTF-16 order', () => {
    // U+FF61 sorts before U+1F600 in UTF-16 code units, after it in bytes.
    const store = seeded({ '\u{1f600}': '', '\u{ff61}': '' });
    assert.deepEqual(shown(store, '.'), ['\u{ff61}', '\u{1f600}']);
  });

  test('a listing handed out in pages gives every entry once', () => {
    const files = {};
    for (let i = 0; i < 25; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = `${i}`;
    const store = new (class extends MemoryStore {
      listDir(place) {
        const entries = super.listDir(place);
        return { next: (max) => entries.splice(0, Math.min(max, 2)) };
      }
    })();
    for (const [path, content] of Object.entries(files)) store.insert(path, content);
    const r = createSession({ store }).execute('glob', { pattern: 'many/*.txt' });
    assert.equal(r.text.split('\n').length, 25, r.text);
  });

  test('missing, files and paths under files are refused', () => {
    const store = seeded({ 'file.txt': 'text', 'dir/inner.txt': 'x' });
    assert.equal(code(store, 'missing'), 'not-found');
    assert.equal(code(store, 'dir/missing'), 'not-found');
    assert.equal(code(store, 'file.txt'), 'not-directory');
    assert.equal(code(store, 'file.txt/below'), 'not-directory');
  });
});

describe('the listing through the component', () => {
  const project = () =>
    seeded({
      'src/context.rs': Array.from({ length: 120 }, (_, i) => `// line ${i + 1}\n`).join(''),
      'src/lib.rs': 'mod context;\n',
      'src/util.rs': 'pub fn a() {}\n',
      'src/util.ts': 'export {}\n',
      'src/tools/read.rs': 'fn read() {}\n',
      'README.md': '# project\n',
    });
  const read = (store, path) => {
    const r = createSession({ store }).execute('read', { file_path: path });
    assert.equal(r.isError, true, r.text);
    return r.text;
  };

  test('a directory read lists its first entries, as on every host', () => {
    assert.equal(
      read(project(), 'src'),
      'FS_NOT_REGULAR_FILE: src is a directory, not a file: 5 entries, listed below ' +
        '(directories end with /). Read a file in it with file_path src/context.rs.\n' +
        '  context.rs\n  lib.rs\n  tools/\n  util.rs\n  util.ts',
    );
  });

  test('a missing path suggests the file meant, as on every host', () => {
    const p = project();
    const cases = [
      ['src/Context.rs', ': names are case-sensitive. Use file_path src/context.rs.'],
      ['src/context', '. Did you mean src/context.rs?'],
      ['context.rs', '. Did you mean src/context.rs?'],
      ['Src/context.rs', ': names are case-sensitive. Use file_path src/context.rs.'],
      ['src/read.rs', '. Did you mean src/tools/read.rs?'],
      ['src/context.rs:99', '. Use file_path src/context.rs with offset=99.'],
    ];
    for (const [path, hint] of cases) {
      assert.equal(read(p, path), `FS_NOT_FOUND: ${path} does not exist${hint}`, path);
    }
    assert.equal(
      read(p, 'src/Util'),
      'FS_NOT_FOUND: src/Util does not exist. Similar existing paths are below; ' +
        'use one as file_path.\n  src/util.rs\n  src/util.ts',
    );
  });
});
