// The directory-listing contract on the JS MemoryProvider (the cases the Rust
// suite in tests/all/listing.rs runs on every Rust backend), and the same
// listing seen through the component: directory reads and path suggestions.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createSession, FsError, MemoryProvider } from '../src/index.js';
import { compareNames } from '../src/provider/contract.js';

function seeded(files) {
  const p = new MemoryProvider();
  for (const [path, content] of Object.entries(files)) p.insert(path, content);
  return p;
}

/** Every entry of `path`, `page` at a time, checking each page's bound. */
function list(p, path, page = 100) {
  const listing = p.listDir(p.resolve(path));
  const all = [];
  for (;;) {
    const got = listing.next(page);
    if (got.length === 0) {
      assert.deepEqual(listing.next(page), [], 'the end stays the end');
      return all;
    }
    assert.ok(got.length <= Math.max(page, 1), `page ${page}: ${got.length}`);
    all.push(...got);
  }
}

const rows = (entries) => entries.map((e) => [e.name, e.kind, e.size]);

function code(p, path) {
  try {
    list(p, path);
  } catch (e) {
    assert.ok(e instanceof FsError, String(e));
    return e.code;
  }
  assert.fail(`listing ${path} succeeded`);
}

describe('listing contract (JS MemoryProvider)', () => {
  test('names in byte order with kinds and sizes', () => {
    const p = seeded({
      'b.txt': 'bb',
      'B.txt': 'B',
      'a/x.txt': 'xyz',
      'a/deeper/y.txt': 'y',
      'é.md': 'e\n',
      'a.rs': '',
    });
    const root = [
      ['B.txt', 'file', 1],
      ['a', 'directory', 0],
      ['a.rs', 'file', 0],
      ['b.txt', 'file', 2],
      ['é.md', 'file', 2],
    ];
    for (const spelling of ['.', './', 'a/..', '/workspace']) {
      assert.deepEqual(rows(list(p, spelling)), root, spelling);
    }
    assert.deepEqual(rows(list(p, 'a')), [
      ['deeper', 'directory', 0],
      ['x.txt', 'file', 3],
    ]);
    assert.equal(p.listDir(p.resolve('a')).skipped(), 0);
  });

  test('byte order, not UTF-16 order', () => {
    // U+FF61 sorts before U+1F600 in UTF-16 code units, after it in bytes.
    assert.ok(compareNames('\u{ff61}', '\u{1f600}') < 0);
    assert.ok(compareNames('a', 'ab') < 0);
    assert.equal(compareNames('x', 'x'), 0);
    const p = seeded({ '\u{1f600}': '', '\u{ff61}': '' });
    assert.deepEqual(
      list(p, '.').map((e) => e.name),
      ['\u{ff61}', '\u{1f600}'],
    );
  });

  test('pages of any size give the same entries', () => {
    const files = {};
    for (let i = 0; i < 25; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = `${i}`;
    const p = seeded(files);
    const whole = list(p, 'many', 1000);
    assert.equal(whole.length, 25);
    for (const page of [0, 1, 2, 7, 24, 25]) assert.deepEqual(list(p, 'many', page), whole);
  });

  test('missing, files and paths under files are refused; the root is never left', () => {
    const p = seeded({ 'file.txt': 'text', 'dir/inner.txt': 'x' });
    assert.equal(code(p, 'missing'), 'not-found');
    assert.equal(code(p, 'dir/missing'), 'not-found');
    assert.equal(code(p, 'file.txt'), 'not-directory');
    assert.equal(code(p, 'file.txt/below'), 'not-directory');
    for (const escape of ['..', '../..', '/', '/etc', '/workspace/..']) {
      assert.equal(code(p, escape), 'sandbox-denied', escape);
    }
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
  const read = (provider, path) => {
    const r = createSession({ provider }).execute('read', { file_path: path });
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
      ['src/Context.rs', 'Did you mean src/context.rs?'],
      ['src/context', 'Did you mean src/context.rs?'],
      ['context.rs', 'Did you mean src/context.rs?'],
      ['Src/context.rs', 'Did you mean src/context.rs?'],
      ['src/read.rs', 'Did you mean src/tools/read.rs?'],
      ['src/context.rs:99', 'Use file_path src/context.rs with offset=99.'],
    ];
    for (const [path, hint] of cases) {
      assert.equal(read(p, path), `FS_NOT_FOUND: ${path} does not exist. ${hint}`, path);
    }
    assert.equal(
      read(p, 'src/Util'),
      'FS_NOT_FOUND: src/Util does not exist. Similar existing paths are below; ' +
        'use one as file_path.\n  src/util.rs\n  src/util.ts',
    );
  });
});
