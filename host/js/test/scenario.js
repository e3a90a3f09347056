// The scenario run both in Node (tools.test.js) and in headless Chromium
// (browser.test.js): windowed read then edit, stale edit, ambiguous edit,
// not-observed write and binary rejection, through the transpiled component
// on a MemoryStore. Browser-safe: no Node imports.

/** Runs the scenario with the package's exports; returns a JSON-able transcript. */
export function runScenario({ createSession, MemoryStore }) {
  const files = new MemoryStore();
  const session = createSession({ store: files });
  const utf8 = new TextDecoder();
  const file = (path) => utf8.decode(files.get(path));
  const call = (tool, args) => {
    const result = session.execute(tool, args);
    return { text: result.text, isError: result.isError, code: result.error?.code ?? null };
  };
  const t = {};

  // A windowed read authorizes an edit far outside the window.
  const big = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}\n`).join('');
  files.insert('big.txt', big);
  const edit4999 = { file_path: 'big.txt', old_string: 'line 4999\n', new_string: 'x\n' };
  t.editBeforeRead = call('edit', edit4999);
  t.window = call('read', { file_path: 'big.txt', offset: 10, limit: 3 });
  t.windowedEdit = call('edit', edit4999);
  t.bigEdited = file('big.txt') === big.replace('line 4999\n', 'x\n');

  // Another writer changes the file: the old read is stale, before matching.
  files.insert('a.txt', 'one\ntwo\n');
  t.readA = call('read', { file_path: 'a.txt' });
  files.insert('a.txt', 'three\n');
  t.staleEdit = call('edit', { file_path: 'a.txt', old_string: 'two', new_string: '2' });
  t.aAfterStale = file('a.txt');
  t.reread = call('read', { file_path: 'a.txt' });
  t.goneEdit = call('edit', { file_path: 'a.txt', old_string: 'two', new_string: '2' });
  t.freshEdit = call('edit', { file_path: 'a.txt', old_string: 'three', new_string: '3' });
  t.aFinal = file('a.txt');

  // Several matches: refused with their lines, or all replaced on request.
  files.insert('dup.txt', 'x\ny\nx\r\nx');
  call('read', { file_path: 'dup.txt' });
  t.ambiguous = call('edit', { file_path: 'dup.txt', old_string: 'x', new_string: 'z' });
  t.dupAfterAmbiguous = file('dup.txt');
  t.replaceAll = call('edit', {
    file_path: 'dup.txt',
    old_string: 'x',
    new_string: 'z',
    replace_all: true,
  });
  t.dupFinal = file('dup.txt');

  // Overwriting a file this session never read is refused; creating is not.
  files.insert('exists.txt', 'keep me\n');
  t.clobber = call('write', { file_path: 'exists.txt', content: 'clobber' });
  t.existsAfter = file('exists.txt');
  t.create = call('write', { file_path: 'src/new.txt', content: 'fresh\n' });
  t.created = file('src/new.txt');

  // Binary content is refused, whether a NUL byte or invalid UTF-8.
  files.insert('image.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x00, 0x01]));
  t.nul = call('read', { file_path: 'image.png' });
  files.insert('latin1.txt', new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  t.invalidUtf8 = call('read', { file_path: 'latin1.txt' });
  return t;
}

/** The expectations on a transcript, with `assert` being node:assert/strict. */
export function checkScenario(t, assert) {
  assert.equal(t.editBeforeRead.code, 'FS_NOT_OBSERVED');
  assert.equal(
    t.window.text,
    'File: big.txt\n10: line 10\n11: line 11\n12: line 12\n(Lines 10-12 of 5000 shown. Continue with offset=13.)',
  );
  assert.equal(t.window.isError, false);
  assert.match(t.windowedEdit.text, /^Edited big\.txt: 1 replacement at line 4999\./);
  assert.equal(t.bigEdited, true);

  assert.equal(t.readA.isError, false);
  assert.equal(t.staleEdit.code, 'FS_STALE_VERSION');
  assert.equal(
    t.staleEdit.text,
    'FS_STALE_VERSION: a.txt changed since it was last read. Read the file again, then retry the change on its current content.',
  );
  assert.equal(t.aAfterStale, 'three\n');
  assert.equal(t.reread.text, 'File: a.txt\n1: three\n(End of file: 1 line.)');
  assert.equal(t.goneEdit.code, 'FS_EDIT_NOT_FOUND');
  assert.equal(t.freshEdit.isError, false);
  assert.equal(t.aFinal, '3\n');

  assert.equal(t.ambiguous.code, 'FS_AMBIGUOUS_EDIT');
  assert.match(t.ambiguous.text, /old_string matches 3 places in dup\.txt \(lines 1, 3, 4\)/);
  assert.equal(t.dupAfterAmbiguous, 'x\ny\nx\r\nx');
  assert.match(t.replaceAll.text, /^Edited dup\.txt: 3 replacements \(first at line 1\)\./);
  assert.equal(t.dupFinal, 'z\ny\nz\r\nz');

  assert.equal(t.clobber.code, 'FS_NOT_OBSERVED');
  assert.match(t.clobber.text, /exists\.txt already exists and has not been read in this session/);
  assert.equal(t.existsAfter, 'keep me\n');
  assert.match(t.create.text, /^Created src\/new\.txt \(1 line, 6 bytes\)\./);
  assert.equal(t.created, 'fresh\n');

  assert.equal(t.nul.code, 'FS_NOT_TEXT');
  assert.match(t.nul.text, /image\.png is not UTF-8 text \(binary: NUL byte at offset 6\)/);
  assert.equal(t.invalidUtf8.code, 'FS_NOT_TEXT');
  assert.match(t.invalidUtf8.text, /latin1\.txt is not UTF-8 text \(invalid UTF-8 at offset 3\)/);
}
