// The shared scenario in headless Chromium: a local HTTP server serves the
// page, the package's sources, the transpiled component and preview2-shim's
// browser build; the transcript must pass the same checks as in Node and
// match the Node run exactly. Then a read -> edit -> stale edit scenario on
// the Origin Private File System, the component in a dedicated worker with
// the OpfsStore. Needs Debian's chromium (CHROMIUM_PATH overrides).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as pkg from '../src/index.js';
import { launchChromium, serve, visit } from './chromium.js';
import { checkScenario, runScenario } from './scenario.js';

const dir = (path) => fileURLToPath(new URL(path, import.meta.url));

let server;
let browser;

before(async () => {
  server = await serve([
    ['/src/', dir('../src/')],
    ['/generated/', dir('../generated/')],
    ['/shim/', dir('../node_modules/@bytecodealliance/preview2-shim/dist/browser/')],
    ['/test/', dir('./')],
  ]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('the shared scenario runs in headless Chromium like in Node', async () => {
  const { value: result, problems } = await visit(
    browser,
    `${server.origin}/test/browser/index.html`,
    () => window.scenarioResult && { ...window.scenarioResult, userAgent: navigator.userAgent },
  );

  assert.equal(result?.error, undefined, `${result?.error}\n${problems.join('\n')}`);
  assert.deepEqual(problems, []);
  assert.match(result.userAgent, /HeadlessChrome\//);
  const served = server.served;
  assert.ok(served.includes('/generated/dsh-fs-tools.core.wasm'), served.join(' '));
  assert.ok(served.includes('/shim/io.js'), served.join(' '));
  checkScenario(result.transcript, assert);
  assert.deepEqual(result.transcript, runScenario(pkg));
});

test('read, edit, stale edit, a create and a crash recovery on OPFS, in a dedicated worker', async () => {
  const { value: result, problems } = await visit(
    browser,
    `${server.origin}/test/browser/opfs.html`,
    () => window.opfsResult,
  );
  assert.equal(result?.error, undefined, `${result?.error}\n${problems.join('\n')}`);
  assert.deepEqual(problems, []);
  const t = result.transcript;
  assert.deepEqual(t.read, { text: 'File: a.txt\n1: one\n2: two\n(End of file: 2 lines.)', code: null });
  assert.match(t.edit.text, /^Edited a\.txt: 1 replacement at line 2\./);
  assert.equal(t.otherWrite.code, null, t.otherWrite.text);
  assert.deepEqual(t.stale, {
    text: 'FS_STALE_VERSION: a.txt changed since it was last read. Read the file again, then retry the change on its current content.',
    code: 'FS_STALE_VERSION',
  });
  assert.match(t.create.text, /^Created src\/new\.txt \(1 line, 6 bytes\)\./);
  assert.deepEqual(t.readNew, { text: 'File: src/new.txt\n1: fresh\n(End of file: 1 line.)', code: null });
  assert.deepEqual(t.glob, { text: 'a.txt\nsrc/new.txt', code: null });
  assert.equal(t.escape.code, 'FS_SANDBOX_DENIED');
  assert.deepEqual(t.definitions, ['read', 'write', 'edit', 'glob', 'grep']);
  // What the worker left on disk, read by the page once it let go.
  assert.equal(t.aOnDisk, 'three\n');
  assert.equal(t.newOnDisk, 'fresh\n');
  // A rewrite cut short by a crash is finished from the journal; the journal is no file of the workspace.
  assert.deepEqual(t.recovered, { text: 'File: a.txt\n1: recovered\n(End of file: 1 line.)', code: null });
  assert.equal(t.journalHidden.code, 'FS_SANDBOX_DENIED');
  assert.deepEqual(t.rootAfter, { text: 'a.txt\nsrc/new.txt', code: null });
  assert.ok(server.served.includes('/src/opfs/worker.js'), server.served.join(' '));
});

test('the OpfsStore keeps the byte-store contract, in a dedicated worker', async () => {
  const { value: result, problems } = await visit(
    browser,
    `${server.origin}/test/browser/contract.html`,
    () => window.contractResult,
  );
  assert.equal(result?.error, undefined, `${result?.error}\n${problems.join('\n')}`);
  assert.deepEqual(problems, []);
  assert.ok(result.names.length >= 16, result.names.join(' '));
  assert.deepEqual(result.failures, []);
});
