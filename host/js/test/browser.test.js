// The shared scenario in headless Chromium: a local HTTP server serves the
// page, the package, the transpiled component and preview2-shim's browser
// build; the transcript must pass the same checks as in Node and match the
// Node run exactly. Needs Debian's chromium (CHROMIUM_PATH overrides).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import * as pkg from '../src/index.js';
import { checkScenario, runScenario } from './scenario.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const dir = (path) => fileURLToPath(new URL(path, import.meta.url));
/** URL prefix -> directory served under it; nothing else is reachable. */
const ROUTES = [
  ['/src/', dir('../src/')],
  ['/generated/', dir('../generated/')],
  ['/shim/', dir('../node_modules/@bytecodealliance/preview2-shim/dist/browser/')],
  ['/test/', dir('./')],
];
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

let server;
let browser;
const served = [];

function file(urlPath) {
  if (urlPath === '/') return dir('./browser/index.html');
  for (const [prefix, root] of ROUTES) {
    if (!urlPath.startsWith(prefix)) continue;
    const path = resolve(root, `.${urlPath.slice(prefix.length - 1)}`);
    return path.startsWith(root) || `${path}${sep}` === root ? path : null;
  }
  return null;
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  server = createServer(async (req, res) => {
    const path = file(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    try {
      const body = await readFile(path ?? '');
      served.push(req.url);
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
});

after(async () => {
  await browser?.close();
  await new Promise((done) => (server ? server.close(done) : done()));
});

test('the shared scenario runs in headless Chromium like in Node', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.scenarioResult, null, { timeout: 30_000 });
  const result = await page.evaluate(() => window.scenarioResult);
  const userAgent = await page.evaluate(() => navigator.userAgent);

  assert.equal(result.error, undefined, `${result.error}\n${problems.join('\n')}`);
  assert.deepEqual(problems, []);
  assert.match(userAgent, /HeadlessChrome\//);
  assert.ok(served.includes('/generated/dsh-fs-tools.core.wasm'), served.join(' '));
  assert.ok(served.includes('/shim/io.js'), served.join(' '));
  checkScenario(result.transcript, assert);
  assert.deepEqual(result.transcript, runScenario(pkg));
});
