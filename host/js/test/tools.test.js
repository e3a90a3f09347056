// The Node suite: the package's sessions through the transpiled component on
// the JS MemoryStore (and on stores built from it), asserting the
// model-facing results and the bytes left in the workspace.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import * as pkg from '../src/index.js';
import { checkScenario, runScenario } from './scenario.js';

const { createSession, MemoryStore, FsError } = pkg;
const utf8 = new TextDecoder();
const bytes = (...b) => new Uint8Array(b);

/** A session over a fresh workspace seeded with `files`. */
function workspace(files = {}, options = {}) {
  const store = options.store ?? new MemoryStore();
  for (const [path, content] of Object.entries(files)) store.insert(path, content);
  const session = createSession({ ...options, store });
  const call = (tool, args) => session.execute(tool, args);
  const ok = (tool, args) => {
    const r = call(tool, args);
    assert.equal(r.isError, false, r.text);
    assert.equal(r.error, null);
    return r.text;
  };
  const fails = (tool, args, code) => {
    const r = call(tool, args);
    assert.equal(r.isError, true, r.text);
    assert.equal(r.error?.code, code, r.text);
    // The one line, then any quoted lines under it.
    assert.equal(r.text.split('\n')[0], `${code}: ${r.error.message}`);
    return r.text;
  };
  return { store, session, call, ok, fails, text: (p) => utf8.decode(store.get(p)) };
}

test('the shared scenario: windowed read then edit, stale, ambiguous, not observed, binary', () => {
  checkScenario(runScenario(pkg), assert);
});

describe('byte-faithful edits', () => {
  test('BOM and CRLF are hidden on read and kept on edit', () => {
    const w = workspace({ 'win.ini': bytes(0xef, 0xbb, 0xbf, ...Buffer.from('x = 1\r\ny = 2')) });
    assert.equal(w.ok('read', { file_path: 'win.ini' }), 'File: win.ini\n1: x = 1\n2: y = 2\n(End of file: 2 lines.)');
    w.ok('edit', { file_path: 'win.ini', old_string: 'x = 1\ny = 2', new_string: 'x = 1\ny = 3\nz = 4' });
    assert.deepEqual(w.store.get('win.ini'), bytes(0xef, 0xbb, 0xbf, ...Buffer.from('x = 1\r\ny = 3\r\nz = 4')));
  });

  test('mixed line endings: only the matched range changes', () => {
    const w = workspace({ 'mixed.txt': 'one\r\ntwo\nthree\r\nfour' });
    w.ok('read', { file_path: 'mixed.txt' });
    w.ok('edit', { file_path: 'mixed.txt', old_string: 'two\nthree', new_string: '2\n3' });
    assert.equal(w.text('mixed.txt'), 'one\r\n2\n3\r\nfour');
    w.ok('edit', { file_path: 'mixed.txt', old_string: 'four', new_string: '4\n4' });
    assert.equal(w.text('mixed.txt'), 'one\r\n2\n3\r\n4\r\n4');
  });

  test('non-ASCII text survives a splice and the write counts', () => {
    const w = workspace({ 'ü.md': '# Überschrift 🦀\r\nZeile\r\n' });
    w.ok('read', { file_path: 'ü.md' });
    const out = w.ok('edit', { file_path: 'ü.md', old_string: 'Zeile', new_string: 'Zeile ✓' });
    assert.match(out, /^Edited ü\.md: 1 replacement at line 2\./);
    assert.equal(w.text('ü.md'), '# Überschrift 🦀\r\nZeile ✓\r\n');
  });
});

describe('freshness and the observation policy', () => {
  test('storing identical bytes is not a change; other bytes are', () => {
    const w = workspace({ 'a.txt': 'same\n' });
    w.ok('read', { file_path: 'a.txt' });
    w.store.insert('a.txt', 'same\n'); // new generation, same content
    w.ok('edit', { file_path: 'a.txt', old_string: 'same', new_string: 'mine' });
    w.store.insert('a.txt', 'theirs\n');
    w.fails('write', { file_path: 'a.txt', content: 'overwrite\n' }, 'FS_STALE_VERSION');
    assert.equal(w.text('a.txt'), 'theirs\n');
  });

  test('a file deleted since the read is stale, for edit and write', () => {
    const w = workspace({ 'gone.txt': 'bye\n' });
    w.ok('read', { file_path: 'gone.txt' });
    assert.equal(w.store.remove('gone.txt'), true);
    const text = w.fails('edit', { file_path: 'gone.txt', old_string: 'bye', new_string: 'hi' }, 'FS_STALE_VERSION');
    assert.match(text, /gone\.txt no longer exists/);
    w.fails('write', { file_path: 'gone.txt', content: 'back\n' }, 'FS_STALE_VERSION');
    assert.equal(w.store.get('gone.txt'), undefined);
  });

  test('sessions do not share observations', () => {
    const store = new MemoryStore();
    store.insert('a.txt', 'hello\n');
    const first = workspace({}, { store });
    const second = workspace({}, { store });
    first.ok('read', { file_path: 'a.txt' });
    second.fails('edit', { file_path: 'a.txt', old_string: 'hello', new_string: 'x' }, 'FS_NOT_OBSERVED');
    first.ok('edit', { file_path: 'a.txt', old_string: 'hello', new_string: 'hi' });
    second.ok('read', { file_path: 'a.txt' });
    second.ok('edit', { file_path: 'a.txt', old_string: 'hi', new_string: 'hey' });
    first.fails('edit', { file_path: 'a.txt', old_string: 'hey', new_string: 'yo' }, 'FS_STALE_VERSION');
    assert.equal(first.text('a.txt'), 'hey\n');
  });

  test('with the policy off, writes and edits are unconditional', () => {
    const w = workspace({ 'a.txt': 'one\n' }, { observationPolicy: false });
    w.ok('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'two' });
    w.store.insert('a.txt', 'three\n');
    w.ok('write', { file_path: 'a.txt', content: 'four\n' });
    assert.equal(w.text('a.txt'), 'four\n');
    w.fails('edit', { file_path: 'a.txt', old_string: 'five', new_string: '5' }, 'FS_EDIT_NOT_FOUND');
  });

  test('a create is guarded by absence, an edit by the token of what it read', () => {
    const guards = [];
    class Recording extends MemoryStore {
      replace(place, createParents) {
        const [replacement, current] = super.replace(place, createParents);
        const commit = replacement.commit.bind(replacement);
        replacement.commit = (guard) => {
          guards.push([place.key, current?.meta().token ?? null, guard]);
          return commit(guard);
        };
        return [replacement, current];
      }
    }
    const w = workspace({}, { store: new Recording() });
    w.ok('write', { file_path: 'h.txt', content: 'hello' });
    w.ok('edit', { file_path: 'h.txt', old_string: 'hello', new_string: 'hullo' });
    w.ok('write', { file_path: 'h.txt', content: 'hi' });
    assert.deepEqual(guards, [
      ['h.txt', null, { tag: 'absent' }],
      ['h.txt', 'm1', { tag: 'unchanged', val: 'm1' }],
      ['h.txt', 'm2', { tag: 'unchanged', val: 'm2' }],
    ]);
    assert.equal(w.text('h.txt'), 'hi');
  });
});

describe('paths', () => {
  test('leaving the root is denied; spellings of one file share observations', () => {
    const w = workspace({ 'dir/a.txt': 'a\n' });
    for (const path of ['../x', 'dir/../../x', '/etc/passwd', '/workspacex/a.txt', '/workspace/../x']) {
      w.fails('read', { file_path: path }, 'FS_SANDBOX_DENIED');
    }
    w.ok('read', { file_path: '/workspace/dir/./a.txt' });
    w.ok('edit', { file_path: 'other/../dir//a.txt', old_string: 'a', new_string: 'b' });
    assert.equal(w.text('dir/a.txt'), 'b\n');
  });

  test('directories, files used as directories, missing files', () => {
    const w = workspace({ 'src/lib.rs': '\n' });
    w.fails('read', { file_path: 'src' }, 'FS_NOT_REGULAR_FILE');
    w.fails('read', { file_path: '.' }, 'FS_NOT_REGULAR_FILE');
    w.fails('write', { file_path: 'src/lib.rs/x.rs', content: '' }, 'FS_NOT_DIRECTORY');
    w.fails('read', { file_path: 'src/main.rs' }, 'FS_NOT_FOUND');
    w.ok('write', { file_path: 'deep/er/new.rs', content: 'fn f() {}\n' });
    w.fails('read', { file_path: 'deep/er' }, 'FS_NOT_REGULAR_FILE');
  });
});

describe('large files', () => {
  // Over the 10 MiB threshold: the component reads through stream-text, in
  // 1 MiB chunks. The header's length puts the end of the first chunk inside
  // a multi-byte character.
  const line = (n) => `zeile ${n} — ünïcödé 🦀\n`; // line n of the file, for n ≥ 2
  const body = Array.from({ length: 400_000 }, (_, i) => line(i + 2)).join('');
  const header = (() => {
    for (let k = 1; ; k++) {
      const byte = Buffer.from(`${'#'.repeat(k)}\n${body.slice(0, 1 << 20)}`)[1 << 20];
      if (byte >= 0x80 && byte < 0xc0) return `${'#'.repeat(k)}\n`;
    }
  })();
  const content = header + body;
  const lines = 400_001;

  /** Records, per open that read anything, the offsets read. */
  class Counting extends MemoryStore {
    opens = [];
    open(place) {
      const reader = super.open(place);
      const reads = [];
      const read = reader.read.bind(reader);
      reader.read = (offset, len) => {
        if (reads.length === 0) this.opens.push(reads);
        reads.push(offset);
        return read(offset, len);
      };
      return reader;
    }
  }

  test('are streamed, windowed, and editable from a streamed read', () => {
    const raw = Buffer.from(content);
    assert.ok(raw.length > 10 << 20);
    const w = workspace({ 'big.txt': content }, { store: new Counting() });
    const out = w.ok('read', { file_path: 'big.txt', offset: lines - 1, limit: 5 });
    assert.equal(
      out,
      `File: big.txt\n${lines - 1}: ${line(lines - 1).trimEnd()}\n${lines}: ${line(lines).trimEnd()}\n(Lines ${lines - 1}-${lines} of ${lines}; end of file.)`,
    );
    // A window across the end of the first chunk.
    const first = raw.subarray(0, 1 << 20).toString('latin1').split('\n').length - 500;
    const across = w.ok('read', { file_path: 'big.txt', offset: first, limit: 1000 });
    const expected = Array.from({ length: 1000 }, (_, i) => `${first + i}: ${line(first + i).trimEnd()}`);
    assert.equal(across.split('\n').slice(1, -1).join('\n'), expected.join('\n'));
    assert.equal(w.store.opens.length, 2);
    // A page deep in the unchanged file resumes from the session's index.
    const deep = w.ok('read', { file_path: 'big.txt', offset: 300_000, limit: 3 });
    const want = [0, 1, 2].map((i) => `${300_000 + i}: ${line(300_000 + i).trimEnd()}`).join('\n');
    assert.equal(deep.split('\n').slice(1, -1).join('\n'), want);
    // The BOM check reads the head, then the stream goes on from the page's chunk.
    const third = w.store.opens[2];
    assert.ok(third[1] > 1 << 20, `the page streamed from ${third[1]}`);
    w.ok('edit', { file_path: 'big.txt', old_string: line(lines), new_string: 'last\n' });
    assert.equal(w.text('big.txt'), content.replace(line(lines), 'last\n'));
  });

  test('a NUL byte far into a streamed file is reported with its offset', () => {
    const raw = Buffer.from(content);
    raw[raw.length - 1] = 0; // the final newline
    const w = workspace({ 'big.bin': raw }, { store: new Counting() });
    const text = w.fails('read', { file_path: 'big.bin' }, 'FS_NOT_TEXT');
    assert.match(text, new RegExp(`NUL byte at offset ${raw.length - 1}\\)`));
    assert.equal(w.store.opens.length, 1);
  });
});

describe('the package API', () => {
  test('arguments as JSON text; bad arguments and unknown tools are results', () => {
    const w = workspace({ 'a.txt': 'x\n' });
    assert.match(w.ok('read', '{"file_path": "a.txt", "limit": 1}'), /^File: a\.txt\n1: x\n/);
    w.fails('read', '{"file_path": ', 'INVALID_ARGS');
    w.fails('read', { file_path: 'a.txt', offset: 0 }, 'INVALID_ARGS');
    w.fails('read', { path: 'a.txt' }, 'INVALID_ARGS');
    w.fails('list', {}, 'UNKNOWN_TOOL');
  });

  test('definitions: read, write, edit, glob and grep with JSON Schemas', () => {
    const defs = createSession().definitions();
    assert.deepEqual(defs.map((d) => d.name), ['read', 'write', 'edit', 'glob', 'grep']);
    for (const d of defs) {
      const schema = JSON.parse(d.parameters);
      assert.equal(schema.type, 'object');
      const first = ['glob', 'grep'].includes(d.name) ? 'pattern' : 'file_path';
      assert.ok(schema.required.includes(first), d.name);
      assert.ok(d.title.length > 0, d.name);
      assert.equal(d.hints.readOnly, ['read', 'glob', 'grep'].includes(d.name), d.name);
    }
  });

  test('multi_edit: listed on request, all edits in one change or none', () => {
    const session = createSession();
    assert.deepEqual(session.definitions({ extra: ['multi_edit'] }).map((d) => d.name).at(-1), 'multi_edit');
    assert.throws(() => session.definitions({ extra: ['undo'] }), /the extra tools are multi_edit/);
    const w = workspace({ 'a.txt': '\uFEFFone\r\ntwo\r\n' });
    w.ok('read', { file_path: 'a.txt' });
    const edits = [
      { old_string: 'one', new_string: '1' },
      { old_string: 'three', new_string: '3' },
    ];
    const missed = w.call('multi_edit', { file_path: 'a.txt', edits });
    assert.equal(missed.error?.code, 'FS_EDIT_NOT_FOUND', missed.text);
    assert.match(missed.error.message, /^edit 2 of 2: /);
    const bom = [0xef, 0xbb, 0xbf];
    assert.deepEqual([...w.store.get('/workspace/a.txt')], [...bom, ...Buffer.from('one\r\ntwo\r\n')]);
    edits[1] = { old_string: 'two', new_string: '2' };
    assert.equal(
      w.ok('multi_edit', { file_path: 'a.txt', edits }),
      'Edited a.txt: 2 edits, 2 replacements (first change at line 1).\n@@ -1,2 +1,2 @@\n-one\n-two\n+1\n+2',
    );
    assert.deepEqual([...w.store.get('/workspace/a.txt')], [...bom, ...Buffer.from('1\r\n2\r\n')]);
  });

  test('checkpoint and revert: the bytes back, an outside change left alone', () => {
    const w = workspace({ 'a.ini': bytes(0xef, 0xbb, 0xbf, ...Buffer.from('x = 1\r\n')), 'b.txt': 'one\n' });
    assert.match(w.ok('checkpoint', {}), /^Checkpoint 1 set/);
    for (const [file_path, old_string, new_string] of [['a.ini', 'x = 1', 'x = 2'], ['b.txt', 'one', 'two']]) {
      w.ok('read', { file_path });
      w.ok('edit', { file_path, old_string, new_string });
    }
    w.ok('write', { file_path: 'new/c.txt', content: 'c\n' });
    w.store.insert('b.txt', 'three\n');
    const reverted = w.ok('revert', { to: 1 });
    assert.match(reverted, /^Reverted to checkpoint 1: 2 files restored, 1 left alone\./);
    assert.match(reverted, /\nRemoved new\/c\.txt \(1 line\): this session created it\./);
    assert.equal(w.store.get('/workspace/new/c.txt'), undefined);
    assert.deepEqual([...w.store.get('/workspace/a.ini')], [0xef, 0xbb, 0xbf, ...Buffer.from('x = 1\r\n')]);
    assert.equal(w.text('/workspace/b.txt'), 'three\n');
    const off = createSession({ journalBytes: 0 }).execute('checkpoint', {});
    assert.equal(off.error?.code, 'INVALID_ARGS', off.text);
  });

  test('a default session has its own MemoryStore', () => {
    const session = createSession();
    assert.ok(session.store instanceof MemoryStore);
    assert.equal(session.execute('write', { file_path: 'n.txt', content: 'n\n' }).isError, false);
    assert.equal(utf8.decode(session.store.get('/workspace/n.txt')), 'n\n');
  });

  test('the former names: MemoryProvider and the provider option', () => {
    const provider = new pkg.MemoryProvider();
    provider.insert('a.txt', 'a\n');
    const session = createSession({ provider });
    assert.equal(session.provider, provider);
    assert.equal(session.store, provider);
    assert.match(session.execute('read', { file_path: 'a.txt' }).text, /^File: a\.txt\n1: a\n/);
  });

  test('a store that throws an FsError or a plain Error', () => {
    class Failing extends MemoryStore {
      open(place) {
        if (place.key === 'locked.txt') throw new FsError('permission-denied', 'locked.txt is locked');
        throw new Error('disk on fire');
      }
    }
    const w = workspace({ 'locked.txt': 'x', 'other.txt': 'y' }, { store: new Failing() });
    w.fails('read', { file_path: 'locked.txt' }, 'FS_PERMISSION_DENIED');
    const text = w.fails('read', { file_path: 'other.txt' }, 'FS_IO_ERROR');
    assert.match(text, /the provider failed: disk on fire/);
  });

  test('a value the component cannot take ends the call, and the session restarts', () => {
    let broken = false;
    class Flaky extends MemoryStore {
      open(place) {
        const reader = super.open(place);
        if (broken) reader.meta = () => ({ kind: 'a kind of its own', size: 2, token: 'v' });
        return reader;
      }
    }
    const w = workspace({ 'a.txt': 'a\n' }, { store: new Flaky() });
    w.ok('read', { file_path: 'a.txt' });
    broken = true;
    const text = w.fails('read', { file_path: 'a.txt' }, 'INTERNAL_ERROR');
    assert.match(text, /The session was restarted: read files again before editing them\.$/);
    broken = false;
    // The fresh instance has no observations.
    w.fails('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' }, 'FS_NOT_OBSERVED');
    w.ok('read', { file_path: 'a.txt' });
    w.ok('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' });
    assert.equal(w.text('a.txt'), 'b\n');
  });

  test('a store that calls its own session is refused, and the running call goes on', () => {
    let session;
    const inner = [];
    class Calling extends MemoryStore {
      open(place) {
        inner.push(session.execute('write', { file_path: 'b.txt', content: 'from the store\n' }));
        return super.open(place);
      }
    }
    const w = workspace({ 'a.txt': 'a\n' }, { store: new Calling() });
    session = w.session;
    w.ok('read', { file_path: 'a.txt' });
    assert.ok(inner.length > 0);
    for (const r of inner) {
      assert.equal(r.error?.code, 'FS_BUSY', r.text);
      assert.match(r.text, /^FS_BUSY: this session is running another call, from whose store this write came: a store must not call its own session; nothing was done$/);
    }
    assert.equal(w.store.get('b.txt'), undefined);
    // The session kept its observations: no restart.
    w.ok('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' });
    assert.equal(w.text('a.txt'), 'b\n');
  });
});

describe('hostile edits', () => {
  test('a replace_all that would build gigabytes is refused before building it', () => {
    const many = 'x\n'.repeat(1000);
    const w = workspace({ 'f.txt': many });
    w.ok('read', { file_path: 'f.txt' });
    const edit = { file_path: 'f.txt', old_string: 'x', new_string: 'n'.repeat(2 << 20), replace_all: true };
    const text = w.fails('edit', edit, 'FS_TOO_LARGE');
    // A memory store holds at most 16 MiB: that is the limit it names.
    assert.match(text, /2097153000 bytes, more than the 16777216-byte limit/);
    assert.equal(w.text('f.txt'), many);
  });

  test('the size is exact: CRLF endings and multi-byte text counted', () => {
    // 1024 matches, each replaced by 3k bytes of '€' plus CRLF: 1024 (3k + 2) bytes.
    const before = 'ä\r\n'.repeat(1024);
    const w = workspace({ 'w.txt': before });
    w.ok('read', { file_path: 'w.txt' });
    const k = 349_526; // 3k bytes: just over 1 MiB
    const edit = { file_path: 'w.txt', old_string: 'ä\n', new_string: `${'€'.repeat(k)}\n`, replace_all: true };
    const size = 1024 * (3 * k + 2);
    assert.ok(size > 1 << 30);
    assert.match(w.fails('edit', edit, 'FS_TOO_LARGE'), new RegExp(`w\\.txt ${size} bytes`));
    assert.equal(w.text('w.txt'), before);
  });

  test('millions of matches: counted, first ten lines named', () => {
    const w = workspace({ 'm.txt': 'x\n'.repeat(2_000_000) });
    w.ok('read', { file_path: 'm.txt', limit: 1 });
    const text = w.fails('edit', { file_path: 'm.txt', old_string: 'x', new_string: 'y' }, 'FS_AMBIGUOUS_EDIT');
    assert.match(text, /matches 2000000 places in m\.txt \(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …\)/);
  });
});

test('the mistakes subset answers with the texts of the native host', () => {
  // Recorded from the Rust host by tests/all/hosts.rs; the wasmtime CLI replays it too.
  const golden = new URL('../../../tests/fixtures/mistakes/hosts.json', import.meta.url);
  const script = JSON.parse(readFileSync(golden, 'utf8'));
  const w = workspace(script.files);
  for (const step of script.calls) {
    const r = w.call(step.tool, step.arguments);
    assert.equal(r.text, step.text, `${step.tool} ${JSON.stringify(step.arguments)}`);
    assert.equal(r.isError, step.is_error, r.text);
  }
});

test('glob and grep answer with the texts of the native host', () => {
  // Recorded from the Rust host by tests/all/discovery.rs; every backend replays it.
  const golden = new URL('../../../tests/fixtures/discovery.json', import.meta.url);
  const script = JSON.parse(readFileSync(golden, 'utf8'));
  const w = workspace(script.files);
  for (const step of script.calls) {
    const r = w.call(step.tool, step.arguments);
    assert.equal(r.text, step.text, `${step.tool} ${JSON.stringify(step.arguments)}`);
    assert.equal(r.isError, step.is_error, r.text);
  }
});

test('the memory store refuses a result it cannot hold, before building it', () => {
  // 2000 matches × 10 KiB: 20 MiB, past the 16 MiB a memory store holds.
  const file = 'x\n'.repeat(2000);
  const { ok, fails, text } = workspace({ 'f.txt': file });
  ok('read', { file_path: 'f.txt' });
  const out = fails(
    'edit',
    { file_path: 'f.txt', old_string: 'x', new_string: 'n'.repeat(10 << 10), replace_all: true },
    'FS_TOO_LARGE',
  );
  assert.match(out, /20482000 bytes/);
  assert.match(out, /16777216-byte limit/);
  assert.equal(text('f.txt'), file);
});

describe('hostile searches', () => {
  test('regexes of gigabyte automata and patterns past the limit are refused by name', () => {
    const w = workspace({ 'line.txt': 'a'.repeat(256 << 10) });
    for (const pattern of ['(?:a{1,500}){1,500}c', '(a{1000}){1000}', '[a-z]{50000}[0-9]']) {
      const text = w.fails('grep', { pattern }, 'FS_INVALID_INPUT');
      assert.match(text, /compiles to an automaton too large/);
    }
    const text = w.fails('glob', { pattern: '?'.repeat(200_000) }, 'FS_INVALID_INPUT');
    assert.match(text, /more than the 16384 allowed/);
    assert.ok(text.length < 1000, 'the error quotes the pattern whole');
    // The session goes on, with its observations.
    w.ok('read', { file_path: 'line.txt', limit: 1 });
    w.ok('edit', { file_path: 'line.txt', old_string: 'a'.repeat(256 << 10), new_string: 'b' });
    assert.equal(w.text('line.txt'), 'b');
  });

  test('a slow regex over a long line is stepped to its answer', () => {
    const w = workspace({ 'long.txt': 'a'.repeat(1 << 20) + 'c\n', 'short.txt': 'aaac\n' });
    const found = w.ok('grep', { pattern: '(?:a{1,40}){1,40}c' });
    assert.match(found, /^Found 2 matches in 2 files/);
    assert.match(found, /short\.txt:\n {2}Line 1: aaac/);
  });
});

test("the bindings call the store and WASI without jco's per-call tasks (scripts/transpile.mjs)", () => {
  for (const bindings of ['../generated/dsh-fs-tools.js', '../generated/edge/dsh-fs-edge.js']) {
    const source = readFileSync(new URL(bindings, import.meta.url), 'utf8');
    const imports = source.split('\n    const hostProvided = true;\n').length - 1;
    const rewritten = source.match(/^ {2}_trampoline\d+\.withoutTask = true;$/gm) ?? [];
    assert.ok(imports > 30, `${bindings}: ${imports} host imports`);
    assert.equal(rewritten.length, imports, `${bindings}: every synchronous host import is called without a task`);
    assert.doesNotMatch(source, /_trackHostOperation\(\(\) =>/);
  }
});
