// What the browser tests share: headless Chromium (Debian's; CHROMIUM_PATH
// overrides) and a loopback HTTP server that serves a few directories and
// nothing else, recording what was fetched.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { chromium } from 'playwright-core';

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
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

/** Headless Chromium; close it when done. */
export async function launchChromium() {
  assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/**
 * Serves `routes` (`[[urlPrefix, directory], ...]`, a prefix ending in `/`)
 * on 127.0.0.1: `{ origin, served, close() }`, `served` listing every URL
 * answered.
 */
export async function serve(routes) {
  const served = [];
  const file = (urlPath) => {
    for (const [prefix, root] of routes) {
      if (!urlPath.startsWith(prefix)) continue;
      const path = resolve(root, `.${urlPath.slice(prefix.length - 1)}`);
      return path.startsWith(`${resolve(root)}${sep}`) ? path : null;
    }
    return null;
  };
  const server = createServer(async (req, res) => {
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
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    served,
    close: () => new Promise((done) => server.close(done)),
  };
}

/**
 * Opens `url` and waits until `ready` (a function run in the page) returns
 * something truthy, or the page reports an error: `{ value, problems }`,
 * `problems` holding page errors and console errors.
 */
export async function visit(browser, url, ready) {
  const page = await browser.newPage();
  const problems = [];
  let failed;
  const failure = new Promise((resolve) => (failed = resolve));
  page.on('pageerror', (e) => {
    problems.push(String(e));
    failed();
  });
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  try {
    await page.goto(url);
    const handle = await Promise.race([
      page.waitForFunction(ready, null, { timeout: 60_000 }),
      failure.then(() => null),
    ]);
    return { value: handle ? await handle.jsonValue() : undefined, problems };
  } finally {
    await page.close();
  }
}
