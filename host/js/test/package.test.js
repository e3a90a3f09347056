// The package as a user gets it: packed and installed into a scratch project
// outside the repository by the README's own commands, then used only from
// there: the README's TypeScript / JavaScript blocks as written (in Node and
// in headless Chromium), the shared scenario in both, the AI SDK adapter on
// the real `ai`, and the declarations under tsc.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as repoPackage from '../src/index.js';
import { launchChromium, serve, visit } from './chromium.js';
import { checkScenario, runScenario } from './scenario.js';

const dir = (path) => fileURLToPath(new URL(path, import.meta.url));
const HOST_JS = dir('../');
const REPO = dir('../../../');
const manifest = JSON.parse(readFileSync(join(HOST_JS, 'package.json'), 'utf8'));
const TARBALL = `${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`;

/**
 * The fenced blocks of the section `## title` of the Markdown file `path`
 * (relative to the repository; the section ends at the next `## `):
 * `[{ lang, body }]`. A missing section, or one without blocks, fails.
 */
function sectionBlocks(path, title) {
  const text = readFileSync(join(REPO, path), 'utf8');
  const start = text.indexOf(`\n## ${title}\n`);
  assert.notEqual(start, -1, `${path} has no section "${title}"`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, body]) => ({
    lang,
    body,
  }));
  assert.ok(blocks.length > 0, `${path}, section "${title}", has no code blocks`);
  return blocks;
}

/**
 * The documentation's JavaScript blocks as steps, in order: the README's
 * section "TypeScript / JavaScript" (install, a first session), then the
 * section "Examples" of docs/hosts/js.md (a store of your own, the AI SDK, a
 * browser page). `sh` runs in the project, `js` is a module run by node,
 * `html` a page opened in Chromium; a `text` block right after a `js` or
 * `html` block is what it must print (or show).
 */
function readmeSteps() {
  const steps = [];
  const blocks = [
    ...sectionBlocks('README.md', 'TypeScript / JavaScript'),
    ...sectionBlocks('docs/hosts/js.md', 'Examples'),
  ];
  for (const block of blocks) {
    if (block.lang === 'text') {
      const last = steps.at(-1);
      assert.ok(last && last.lang !== 'sh' && last.expected === undefined, 'a text block follows js or html');
      last.expected = block.body.trimEnd();
    } else {
      assert.ok(['sh', 'js', 'html'].includes(block.lang), `no test runs a ${block.lang} block`);
      steps.push({ ...block });
    }
  }
  return steps;
}

/** The environment of a command run in the project: none of npm's own variables from `npm test`. */
function projectEnv() {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_|^INIT_CWD$|^NODE_TEST_CONTEXT$/i.test(k)),
  );
  return {
    ...env,
    DSH_FS: REPO,
    // `npm test` transpiled the component just now (pretest); packing again would rewrite
    // generated/ while other test files read it.
    npm_config_ignore_scripts: 'true',
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

/** Runs `command` in the project; its stdout, or a failure showing both streams. */
function run(project, command, args) {
  const r = spawnSync(command, args, { cwd: project, env: projectEnv(), encoding: 'utf8' });
  assert.equal(r.status, 0, `${command} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const steps = readmeSteps();
let project;
let installed;
let server;
let browser;

before(async () => {
  project = mkdtempSync(join(tmpdir(), 'dsh-fs-package-'));
  // A project that uses the AI SDK already, at the version the adapter is tested with.
  const dependencies = { ai: manifest.devDependencies.ai };
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'agent', private: true, type: 'module', dependencies }, null, 2)}\n`,
  );
  for (const step of steps.filter((s) => s.lang === 'sh')) {
    run(project, 'bash', ['-euo', 'pipefail', '-c', step.body]);
  }
  // The project's own entry: the package by name, resolved through its exports map.
  writeFileSync(
    join(project, 'entry.mjs'),
    [
      "export * as host from '@dsh-fs/host';",
      "export * as aiSdk from '@dsh-fs/host/ai-sdk';",
      "export * as node from '@dsh-fs/host/node';",
      "export * as opfs from '@dsh-fs/host/opfs';",
      "export * as durable from '@dsh-fs/host/durable-object';",
      "export { asSchema } from 'ai';",
      '',
    ].join('\n'),
  );
  steps
    .filter((s) => s.lang === 'js')
    .forEach((block, i) => writeFileSync(join(project, `readme-${i + 1}.mjs`), block.body));
  installed = await import(pathToFileURL(join(project, 'entry.mjs')).href);
  copyFileSync(dir('./scenario.js'), join(project, 'scenario.js'));
  writeFileSync(join(project, 'favicon.ico'), ''); // what a page without an icon asks for
  server = await serve([['/', project]]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

test('the tarball carries the sources, their declarations and the component, nothing else', (t) => {
  const listed = execFileSync('tar', ['-tzf', join(project, TARBALL)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((p) => p.replace(/^package\//, ''))
    .sort();
  const tree = (sub) =>
    readdirSync(join(HOST_JS, sub), { recursive: true })
      .map((p) => `${sub}/${p}`)
      .filter((p) => statSync(join(HOST_JS, p)).isFile());
  const expected = ['package.json', ...tree('src'), ...tree('generated')].sort();
  assert.deepEqual(listed, expected);
  assert.ok(listed.includes('generated/dsh-fs-tools.core.wasm'));
  assert.ok(listed.includes('src/index.d.ts') && listed.includes('src/ai-sdk.d.ts'));
  assert.deepEqual(
    listed.filter((p) => p.endsWith('.d.ts')),
    ['src/ai-sdk.d.ts', 'src/index.d.ts', 'src/node.d.ts', 'src/opfs.d.ts', 'src/store/durable.d.ts'],
  );
  // The Worker and its modules, declared as a Worker declares them.
  for (const f of ['generated/edge/worker.js', 'generated/edge/worker-modules.js', 'generated/edge/dsh-fs-edge.core.wasm']) {
    assert.ok(listed.includes(f), f);
  }
  t.diagnostic(`${TARBALL}: ${statSync(join(project, TARBALL)).size} bytes, ${listed.length} files`);
});

test('the declarations name exactly what the modules export', () => {
  for (const [module, exports] of [
    ['index', installed.host],
    ['ai-sdk', installed.aiSdk],
    ['node', installed.node],
    ['opfs', installed.opfs],
    ['store/durable', installed.durable],
  ]) {
    const dts = readFileSync(join(project, `node_modules/@dsh-fs/host/src/${module}.d.ts`), 'utf8');
    const declared = [...dts.matchAll(/^export (?:function|class|const) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(declared.sort(), Object.keys(exports).sort(), module);
  }
});

test("the README's blocks run as written, in Node, from the installed package", () => {
  const blocks = steps.filter((s) => s.lang === 'js');
  assert.ok(blocks.length >= 2);
  blocks.forEach((block, i) => {
    const out = run(project, process.execPath, [`readme-${i + 1}.mjs`]);
    assert.equal(out.trimEnd(), block.expected ?? '', `README block ${i + 1}`);
  });
});

test('the shared scenario runs in Node from the installed package', () => {
  const transcript = runScenario(installed.host);
  checkScenario(transcript, assert);
  assert.deepEqual(transcript, runScenario(repoPackage));
});

test("the README's page and the shared scenario run in headless Chromium from the installed package", async () => {
  const pages = steps.filter((s) => s.lang === 'html');
  assert.equal(pages.length, 1);
  const [page] = pages;
  writeFileSync(join(project, 'readme.html'), page.body);
  const shown = await visit(browser, `${server.origin}/readme.html`, () => document.body.innerText.trim());
  assert.deepEqual(shown.problems, []);
  assert.equal(shown.value, page.expected);

  // The scenario on a page with the README's import map.
  const importMap = page.body.match(/<script type="importmap">[\s\S]*?<\/script>/)[0];
  writeFileSync(
    join(project, 'scenario.html'),
    `<!doctype html>\n<link rel="icon" href="data:,">\n${importMap}\n<script type="module">
  import * as pkg from '@dsh-fs/host';
  import { runScenario } from './scenario.js';
  try {
    window.scenarioResult = { transcript: runScenario(pkg) };
  } catch (e) {
    window.scenarioResult = { error: String(e?.stack ?? e) };
  }
</script>\n`,
  );
  const { value: result, problems } = await visit(
    browser,
    `${server.origin}/scenario.html`,
    () => window.scenarioResult,
  );
  assert.equal(result?.error, undefined, `${result?.error}\n${problems.join('\n')}`);
  assert.deepEqual(problems, []);
  checkScenario(result.transcript, assert);
  assert.deepEqual(result.transcript, runScenario(repoPackage));
  assert.ok(server.served.includes('/node_modules/@dsh-fs/host/generated/dsh-fs-tools.core.wasm'));
});

test("AI SDK tools: each tool's execute runs on the session; read, edit, stale edit", async () => {
  const { createSession, MemoryStore } = installed.host;
  const files = new MemoryStore();
  const session = createSession({ store: files });
  const tools = installed.aiSdk.aiSdkTools(session);
  const definitions = session.definitions();
  assert.deepEqual(Object.keys(tools), ['read', 'write', 'edit', 'glob', 'grep']);
  for (const d of definitions) {
    assert.equal(tools[d.name].description, d.description);
    assert.deepEqual(installed.asSchema(tools[d.name].inputSchema).jsonSchema, JSON.parse(d.parameters));
  }

  let calls = 0;
  const call = async (name, input) => {
    const toolCallId = `call-${++calls}`;
    const output = await tools[name].execute(input, { toolCallId, messages: [], context: {} });
    const model = await tools[name].toModelOutput({ toolCallId, input, output });
    return { output, model };
  };
  const utf8 = new TextDecoder();

  files.insert('src/app.js', 'let x = 1;\n');
  const read = await call('read', { file_path: 'src/app.js' });
  assert.deepEqual(read.output, {
    text: 'File: src/app.js\n1: let x = 1;\n(End of file: 1 line.)',
    isError: false,
    error: null,
  });
  assert.deepEqual(read.model, { type: 'text', value: read.output.text });

  const edit = await call('edit', { file_path: 'src/app.js', old_string: 'x = 1', new_string: 'x = 2' });
  assert.equal(edit.output.isError, false, edit.output.text);
  assert.match(edit.model.value, /^Edited src\/app\.js: 1 replacement at line 1\./);
  assert.equal(utf8.decode(files.get('src/app.js')), 'let x = 2;\n');

  files.insert('src/app.js', 'let x = 3;\n');
  const stale = await call('edit', { file_path: 'src/app.js', old_string: 'x = 3', new_string: 'x = 4' });
  assert.equal(stale.output.error.code, 'FS_STALE_VERSION');
  assert.deepEqual(stale.model, { type: 'error-text', value: stale.output.text });
  assert.equal(utf8.decode(files.get('src/app.js')), 'let x = 3;\n');

  const write = await call('write', { file_path: 'src/util.js', content: 'export const y = 2;\n' });
  assert.match(write.model.value, /^Created src\/util\.js \(1 line, 20 bytes\)\./);
  const glob = await call('glob', { pattern: '*.js' });
  assert.deepEqual(glob.model, { type: 'text', value: 'src/app.js\nsrc/util.js' });
  const grep = await call('grep', { pattern: 'y = \\d' });
  assert.equal(grep.model.value, 'Found 1 match in 1 file\n\nsrc/util.js:\n  Line 1: export const y = 2;');

  // Arguments the model got wrong reach the component, which says what is wrong.
  const bad = await call('read', { path: 'src/app.js' });
  assert.equal(bad.output.error.code, 'INVALID_ARGS');
  assert.equal(bad.model.type, 'error-text');
});

test('tsc: the declarations hold, and type-check a TypeScript consumer and the README blocks', () => {
  for (const name of ['consumer.ts', 'tsconfig.json']) {
    copyFileSync(dir(`./package/${name}`), join(project, name));
  }
  const tsc = (...args) => {
    const out = spawnSync(process.execPath, [join(HOST_JS, 'node_modules/typescript/bin/tsc'), ...args], {
      cwd: project,
      encoding: 'utf8',
    });
    assert.equal(out.status, 0, `tsc ${args.join(' ')}:\n${out.stdout}${out.stderr}`);
  };
  // The package's own declarations, checked in full (the consumer's tsconfig skips libraries').
  for (const module of ['index', 'node', 'opfs']) {
    tsc('--ignoreConfig', '--noEmit', '--strict', '--types', '', `node_modules/@dsh-fs/host/src/${module}.d.ts`);
  }
  tsc('-p', 'tsconfig.json');
});
