// The shared scenario in headless Chromium: a local HTTP server serves the
// page, the package's sources, the transpiled component and preview2-shim's
// browser build; the transcript must pass the same checks as in Node and
// match the Node run exactly. Needs Debian's chromium (CHROMIUM_PATH overrides).

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
