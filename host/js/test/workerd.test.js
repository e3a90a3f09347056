// The Worker (src/worker/) inside workerd, driven by the official MCP client
// over Streamable HTTP, call for call beside `dsh-fs mcp` on a local
// directory: the same texts and codes. Also the byte-store contract suite
// on the DurableObjectStore inside workerd, files of 10 MiB, restarts of
// workerd between requests, and workspaces kept apart. Also what the Worker
// refuses: other origins and host names, oversized messages, paths no tool
// can address, tools it does not offer; and a GET that streams a file.
//
// Needs `npm run build:edge` (run by `npm test`) and the `dsh-fs` binary of
// the workspace (built here when missing). DSH_FS_EDGE_MIB sets the size of
// the large file (10 by default), DSH_FS_EDGE_GET_MIB that of the file
// read back while workerd's memory is watched (64 by default).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bundleWorker } from '../scripts/workerd.mjs';
import { serveWorker, serveWrangler } from './workerd/serve.js';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const EDGE = here('../generated/edge/');
const LARGE_MIB = Number(process.env.DSH_FS_EDGE_MIB ?? 10);
const GET_MIB = Number(process.env.DSH_FS_EDGE_GET_MIB ?? 64);
const MIB = 2 ** 20;

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'dsh-fs-workerd-test', version: '0' } },
});

const scratch = fs.mkdtempSync(join(tmpdir(), 'dsh-fs-workerd-'));
const servers = [];
const clients = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of servers) await s.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** The workspace's `dsh-fs` binary, built when missing. */
function dshFs() {
  const workspace = here('../../../');
  const target = process.env.CARGO_TARGET_DIR ?? join(workspace, 'target');
  const binary = join(target, 'debug', 'dsh-fs');
  if (!fs.existsSync(binary)) {
    const r = spawnSync(process.env.CARGO ?? 'cargo', ['build', '--quiet', '-p', 'dsh-fs'], { cwd: workspace, stdio: 'inherit' });
    assert.equal(r.status, 0, 'cargo build -p dsh-fs failed');
  }
  return binary;
}

/**
 * One request by node:http, which sends the headers it is given as they are
 * (a browser's Origin, a name rebound to 127.0.0.1, a Content-Length larger
 * than the body): `{ status, text }`, once the answer is whole.
 */
function raw(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: false }, (response) => {
      const parts = [];
      response.on('data', (d) => parts.push(d));
      response.on('end', () => {
        resolve({ status: response.statusCode, text: Buffer.concat(parts).toString() });
        request.destroy();
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** A process's resident memory (`VmRSS`) and its peak (`VmHWM`), in bytes. */
function memory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

async function connect(transport) {
  const client = new Client({ name: 'dsh-fs-workerd-test', version: '0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** One tool call: `{ text, code, message }` (code and message null on success). */
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.content.length, 1);
  const { code = null, message = null } = r.isError ? (r.structuredContent?.error ?? {}) : {};
  if (r.isError) assert.ok(code && message, `a failure without a code: ${r.content[0].text}`);
  return { text: r.content[0].text, code, message };
}

describe('the Worker in workerd', () => {
  let edge;
  let local;
  let localRoot;
  const mcp = (workspace) => connect(new StreamableHTTPClientTransport(new URL(`${edge.url}/mcp/${workspace}`)));
  const put = async (workspace, path, body) => {
    const r = await fetch(`${edge.url}/files/${workspace}/${path}`, { method: 'PUT', body });
    assert.equal(r.status, 204, await r.text());
  };
  const get = async (workspace, path) => {
    const r = await fetch(`${edge.url}/files/${workspace}/${path}`);
    return r.status === 404 ? null : new Uint8Array(await r.arrayBuffer());
  };
  const text = async (workspace, path) => new TextDecoder().decode(await get(workspace, path));

  before(async () => {
    edge = await serveWorker({
      dir: join(scratch, 'edge'),
      worker: join(EDGE, 'worker.js'),
      wasmDirs: [EDGE],
      objects: { Workspace: 'WORKSPACES' },
    });
    servers.push(edge);
    localRoot = fs.mkdtempSync(join(scratch, 'local-'));
    local = await connect(new StdioClientTransport({ command: dshFs(), args: ['mcp', '--root', localRoot] }));
  });

  test('lists the tools as `dsh-fs mcp` does, with its instructions', async () => {
    const worker = await mcp('listing');
    assert.deepEqual((await worker.listTools()).tools, (await local.listTools()).tools);
    assert.equal(worker.getInstructions(), local.getInstructions());
    assert.deepEqual(worker.getServerVersion(), local.getServerVersion());
  });

  test('answers a scenario with the texts and codes of `dsh-fs mcp`', async () => {
    const worker = await mcp('scenario');
    // The same call on both; the outside change through each one's own side door.
    const both = async (name, args) => {
      const [w, l] = [await call(worker, name, args), await call(local, name, args)];
      assert.deepEqual(w, l, `${name} ${JSON.stringify(args)}`);
      return w;
    };
    assert.equal((await both('write', { file_path: 'src/app.txt', content: 'alpha\nbeta\ngamma\n' })).code, null);
    await both('read', { file_path: 'src/app.txt' });
    assert.equal((await both('edit', { file_path: 'src/app.txt', old_string: 'beta', new_string: 'BETA' })).code, null);
    assert.equal(await text('scenario', 'src/app.txt'), 'alpha\nBETA\ngamma\n');

    // Another writer replaces the file: the next edit is refused, changing nothing.
    await put('scenario', 'src/app.txt', 'alpha\nBETA\ngamma\ndelta\n');
    fs.writeFileSync(join(localRoot, 'src/app.txt'), 'alpha\nBETA\ngamma\ndelta\n');
    assert.equal((await both('edit', { file_path: 'src/app.txt', old_string: 'gamma', new_string: 'GAMMA' })).code, 'FS_STALE_VERSION');
    assert.equal(await text('scenario', 'src/app.txt'), 'alpha\nBETA\ngamma\ndelta\n');
    await both('read', { file_path: 'src/app.txt' });
    assert.equal((await both('edit', { file_path: 'src/app.txt', old_string: 'gamma', new_string: 'GAMMA' })).code, null);
    assert.equal(await text('scenario', 'src/app.txt'), 'alpha\nBETA\nGAMMA\ndelta\n');

    // Finding files.
    await both('write', { file_path: 'src/lib/util.txt', content: 'GAMMA rays\n' });
    await both('glob', { pattern: '**/*.txt' });
    await both('grep', { pattern: 'GAMMA' });
    await both('grep', { pattern: 'gam+a', include: '*.txt', path: 'src' });

    // Mistakes, and paths outside the workspace.
    assert.equal((await both('edit', { file_path: 'src/app.txt', old_string: 'nothing like it', new_string: 'x' })).code, 'FS_EDIT_NOT_FOUND');
    assert.equal((await both('edit', { file_path: 'new.txt', old_string: 'a', new_string: 'b' })).code, 'FS_NOT_FOUND');
    assert.equal((await both('read', { file_path: '../outside.txt' })).code, 'FS_SANDBOX_DENIED');
    assert.equal((await both('write', { file_path: '../../etc/x', content: 'x' })).code, 'FS_SANDBOX_DENIED');
    assert.equal((await both('read', { file_path: '/etc/passwd' })).code, 'FS_SANDBOX_DENIED');
    assert.equal((await both('read', { offset: 1 })).code, 'INVALID_ARGS');
    assert.equal(await get('scenario', 'new.txt'), null);
  });

  test('keeps what the session read across restarts of workerd', async () => {
    let worker = await mcp('restart');
    await call(worker, 'write', { file_path: 'kept.txt', content: 'one\ntwo\n' });
    await call(worker, 'write', { file_path: 'changed.txt', content: 'one\ntwo\n' });
    await put('restart', 'unread.txt', 'one\n');
    await edge.restart();
    worker = await mcp('restart');
    // Written before the restart: still known, so editable without a read.
    assert.equal((await call(worker, 'edit', { file_path: 'kept.txt', old_string: 'two', new_string: 'TWO' })).code, null);
    assert.equal(await text('restart', 'kept.txt'), 'one\nTWO\n');
    // Never read: still refused.
    assert.equal((await call(worker, 'edit', { file_path: 'unread.txt', old_string: 'one', new_string: '1' })).code, 'FS_NOT_OBSERVED');
    // Changed by another writer while workerd was down: stale.
    await edge.restart();
    await put('restart', 'changed.txt', 'one\ntwo\nthree\n');
    await edge.restart();
    worker = await mcp('restart');
    assert.equal((await call(worker, 'edit', { file_path: 'changed.txt', old_string: 'two', new_string: '2' })).code, 'FS_STALE_VERSION');
    assert.equal(await text('restart', 'changed.txt'), 'one\ntwo\nthree\n');
  });

  test('keeps two workspaces apart', async () => {
    const a = await mcp('apart-a');
    const b = await mcp('apart-b');
    await call(a, 'write', { file_path: 'same.txt', content: 'in a\n' });
    assert.equal((await call(b, 'read', { file_path: 'same.txt' })).code, 'FS_NOT_FOUND');
    await put('apart-b', 'same.txt', 'in b\n');
    // Read in a, not in b: b's session may not edit its own same.txt.
    await call(a, 'read', { file_path: 'same.txt' });
    assert.equal((await call(b, 'edit', { file_path: 'same.txt', old_string: 'in b', new_string: 'x' })).code, 'FS_NOT_OBSERVED');
    assert.equal((await call(a, 'edit', { file_path: 'same.txt', old_string: 'in a', new_string: 'A' })).code, null);
    assert.equal(await text('apart-a', 'same.txt'), 'A\n');
    assert.equal(await text('apart-b', 'same.txt'), 'in b\n');
    assert.match((await call(b, 'glob', { pattern: '*' })).text, /same\.txt/);
  });

  test(`reads and edits a ${LARGE_MIB} MiB file`, async () => {
    const line = (i) => `line ${String(i).padStart(8, '0')} ${'x'.repeat(50)}\n`;
    const count = Math.floor((LARGE_MIB * 2 ** 20) / line(0).length);
    const chunks = [];
    for (let i = 0; i < count; i += 10_000) {
      chunks.push(Array.from({ length: Math.min(10_000, count - i) }, (_, k) => line(i + k)).join(''));
    }
    const original = new TextEncoder().encode(chunks.join(''));
    await put('large', 'big.txt', original);
    const worker = await mcp('large');
    const middle = Math.floor(count / 2);
    const read = await call(worker, 'read', { file_path: 'big.txt', offset: middle, limit: 3 });
    assert.equal(read.code, null, read.text);
    assert.match(read.text, new RegExp(`line ${String(middle - 1).padStart(8, '0')}`));
    const edited = await call(worker, 'edit', {
      file_path: 'big.txt',
      old_string: `line ${String(middle).padStart(8, '0')} `,
      new_string: 'THE MIDDLE ',
    });
    assert.equal(edited.code, null, edited.text);
    const now = await get('large', 'big.txt');
    const expected = new TextEncoder().encode(
      chunks.join('').replace(`line ${String(middle).padStart(8, '0')} `, 'THE MIDDLE '),
    );
    assert.equal(now.length, expected.length);
    assert.ok(Buffer.from(now).equals(Buffer.from(expected)), 'the edited file differs from the expected bytes');
    // The isolate has 128 MiB for its JS heap and its WebAssembly memories together.
    const { wasmMemoryBytes } = await (await fetch(`${edge.url}/stats/large`)).json();
    assert.ok(wasmMemoryBytes > 0 && wasmMemoryBytes < 48 * 2 ** 20, `the instance holds ${wasmMemoryBytes} bytes of linear memory`);
  });

  test('refuses another origin or another host name on every route', async () => {
    await put('guarded', 'a.txt', 'one\n');
    const { port } = new URL(edge.url);
    const routes = [
      ['POST', '/mcp/guarded', TOOLS_LIST],
      ['POST', '/mcp/guarded', INITIALIZE],
      ['GET', '/files/guarded/a.txt'],
      ['PUT', '/files/guarded/a.txt', 'changed\n'],
      ['GET', '/stats/guarded'],
    ];
    // A page of another site, or a name of its own rebound to 127.0.0.1.
    const foreign = [
      { origin: 'http://evil.example.com' },
      { origin: 'null' },
      { origin: 'http://localhost.evil.example.com' },
      { host: 'evil.example.com' },
      { host: `evil.example.com:${port}` },
      { host: `127.0.0.1.evil.example.com:${port}` },
    ];
    for (const headers of foreign) {
      for (const [method, path, body] of routes) {
        const r = await raw(`${edge.url}${path}`, { method, headers: { ...MCP_HEADERS, ...headers }, body });
        assert.equal(r.status, 403, `${method} ${path} ${JSON.stringify(headers)}: ${r.text}`);
        assert.match(r.text, /is not allowed/);
      }
    }
    assert.equal(await text('guarded', 'a.txt'), 'one\n');
    // Loopback by name and by address, with any port; or no Origin at all.
    const local = [
      { origin: 'http://localhost:5173' },
      { origin: 'https://127.0.0.1' },
      { origin: 'http://[::1]:3000' },
      { host: `localhost:${port}` },
      { host: `127.0.0.2:${port}` },
      { host: `[::1]:${port}` },
      {},
    ];
    for (const headers of local) {
      const r = await raw(`${edge.url}/mcp/guarded`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: TOOLS_LIST });
      assert.equal(r.status, 200, `${JSON.stringify(headers)}: ${r.text}`);
      assert.match(r.text, /"name":"read"/);
    }
    const page = await connect(
      new StreamableHTTPClientTransport(new URL(`${edge.url}/mcp/guarded`), { requestInit: { headers: { origin: 'http://localhost:5173' } } }),
    );
    assert.equal((await call(page, 'read', { file_path: 'a.txt' })).code, null);
  });

  test('answers a tool it does not offer as an unknown tool, as `dsh-fs mcp` does', async () => {
    const worker = await mcp('unoffered');
    const unknown = await call(local, 'delete', { file_path: 'a.txt' });
    assert.equal(unknown.code, 'UNKNOWN_TOOL');
    assert.deepEqual(await call(worker, 'delete', { file_path: 'a.txt' }), unknown);
    const odd = `no such "tool"\n\t\u0001\u007f ${'é'.repeat(70)}`;
    assert.deepEqual(await call(worker, odd, {}), await call(local, odd, {}));
    await call(worker, 'write', { file_path: 'a.txt', content: 'one\n' });
    // The component has these, but the Worker does not offer them.
    const calls = {
      checkpoint: { label: 'x' },
      changes: {},
      revert: { to: 1 },
      multi_edit: { file_path: 'a.txt', edits: [{ old_string: 'one', new_string: 'two' }] },
    };
    for (const [name, args] of Object.entries(calls)) {
      const named = (t) => t.replace('"delete"', JSON.stringify(name));
      assert.deepEqual(await call(worker, name, args), { text: named(unknown.text), code: 'UNKNOWN_TOOL', message: named(unknown.message) });
    }
    assert.equal(await text('unoffered', 'a.txt'), 'one\n');
  });

  test('takes a write of 5 MB through MCP, and refuses a message past the component\'s limit', async () => {
    const worker = await mcp('large-write');
    const content = 'a line of a write larger than 4 MiB\n'.repeat(Math.ceil(5e6 / 36));
    const written = await call(worker, 'write', { file_path: 'big.txt', content });
    assert.equal(written.code, null, written.text);
    assert.equal(await text('large-write', 'big.txt'), content);
    // Past 16 MiB of arguments and 64 KiB for the message around them, as
    // `dsh-fs mcp` takes: 413 on the declared length, before a byte is read.
    const limit = 16 * MIB + 64 * 1024;
    const start = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"file_path":"over.txt","content":"';
    const refused = await raw(`${edge.url}/mcp/large-write`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'content-length': String(limit + 1) },
      body: start,
    });
    assert.equal(refused.status, 413);
    assert.match(refused.text, new RegExp(`must not exceed ${limit} bytes`));
    assert.equal(await get('large-write', 'over.txt'), null);
  });

  test('answers 400 to a path with a malformed %-escape, changing nothing', async () => {
    await put('escapes', 'kept.txt', 'kept\n');
    for (const [method, path] of [
      ['GET', '%zz'],
      ['GET', '100%'],
      ['PUT', 'a%E0%A4%A.txt'],
      ['PUT', 'dir/%ED%A0%80.txt'],
      ['PUT', 'kept.txt%'],
    ]) {
      const r = await fetch(`${edge.url}/files/escapes/${path}`, { method, body: method === 'PUT' ? 'x' : undefined });
      const answer = await r.text();
      assert.equal(r.status, 400, `${method} ${path}: ${answer}`);
      assert.match(answer, /not a percent-encoded UTF-8 path/);
    }
    const worker = await mcp('escapes');
    assert.equal((await call(worker, 'glob', { pattern: '**' })).text.trim(), 'kept.txt');
    assert.equal(await text('escapes', 'kept.txt'), 'kept\n');
  });

  test('refuses at PUT a name no tool can address', async () => {
    await put('names', 'kept.txt', 'kept\n');
    for (const [path, why] of [
      ['a%00b.txt', /NUL/],
      ['dir%00/x.txt', /NUL/],
      ['kept.txt%00', /NUL/],
      [`${'d/'.repeat(2000)}${'x'.repeat(100)}`, /4096/],
    ]) {
      const r = await fetch(`${edge.url}/files/names/${path}`, { method: 'PUT', body: 'x' });
      const answer = await r.text();
      assert.equal(r.status, 400, `${path}: ${answer}`);
      assert.match(answer, why);
    }
    const worker = await mcp('names');
    assert.equal((await call(worker, 'glob', { pattern: '**' })).text.trim(), 'kept.txt');
    assert.equal(await text('names', 'kept.txt'), 'kept\n');
  });

  test('streams a file of several rows back byte for byte', async () => {
    const bytes = randomBytes(3 * MIB + 12_345);
    await put('stream', 'blob.bin', bytes);
    const r = await fetch(`${edge.url}/files/stream/blob.bin`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-length'), String(bytes.length));
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(bytes), 'the bytes read back differ');
    await put('stream', 'empty.bin', new Uint8Array(0));
    const empty = await fetch(`${edge.url}/files/stream/empty.bin`);
    assert.equal(empty.status, 200);
    assert.equal((await empty.arrayBuffer()).byteLength, 0);
  });

  test(`holds one row of a ${GET_MIB} MiB file at a time while a GET streams it`, async () => {
    const size = GET_MIB * MIB;
    const pid = edge.process.pid;
    // What any first GETs cost (the runtime's caches), on a small file.
    await put('held', 'small.bin', Buffer.alloc(4 * MIB, 'a line of a small file\n'));
    for (let i = 0; i < 3; i++) assert.equal((await get('held', 'small.bin')).length, 4 * MIB);
    await put('held', 'big.bin', Buffer.alloc(size, 'a line of a large file\n'));
    // The peak from here on: the PUT's own is forgotten.
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = memory(pid).rss;
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${edge.url}/files/held/big.bin`);
      let read = 0;
      for await (const chunk of r.body) read += chunk.byteLength;
      assert.equal(read, size);
    }
    const grown = memory(pid).peak - before;
    console.log(`workerd: ${(before / MIB).toFixed(0)} MiB resident, ${(grown / MIB).toFixed(1)} MiB more at the peak of 3 GETs of ${GET_MIB} MiB`);
    // Held whole, a file cost about four times its size here (1.2 GB for 300 MiB).
    assert.ok(grown < 64 * MIB, `workerd grew by ${(grown / MIB).toFixed(1)} MiB reading a ${GET_MIB} MiB file`);
  });

  test('runs the calls of one workspace one at a time', async () => {
    const worker = await mcp('serial');
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
    await call(worker, 'write', { file_path: 'f.txt', content: lines });
    // Twenty edits at once, each on a connection of its own: none may be lost.
    const clients = await Promise.all(Array.from({ length: 20 }, () => mcp('serial')));
    const answers = await Promise.all(
      clients.map((c, i) => call(c, 'edit', { file_path: 'f.txt', old_string: `line ${i}\n`, new_string: `LINE ${i}\n` })),
    );
    assert.deepEqual(answers.map((a) => a.code), Array(20).fill(null), answers.map((a) => a.text).join('\n'));
    assert.equal(await text('serial', 'f.txt'), Array.from({ length: 20 }, (_, i) => `LINE ${i}\n`).join(''));
  });
});

test('deploys with the wrangler.jsonc of docs/hosts/edge.md, unchanged', async () => {
  // The documented config, as written; its `main` re-exports the Worker as the
  // comment on that line says (by path here: the package is not installed).
  const docs = fs.readFileSync(here('../../../docs/hosts/edge.md'), 'utf8');
  const jsonc = /```jsonc\n([\s\S]*?)```/.exec(docs)[1];
  const dir = join(scratch, 'wrangler');
  fs.mkdirSync(join(dir, 'src'), { recursive: true });
  fs.writeFileSync(join(dir, 'wrangler.jsonc'), jsonc.replace(/^\/\/.*\n/, ''));
  const main = /"main": "([^"]+)",\s*\/\/ (.*)$/m.exec(jsonc);
  fs.writeFileSync(join(dir, main[1]), `${main[2].replace('@dsh-fs/host/worker', here('../src/worker/index.js'))}\n`);
  const server = await serveWrangler(join(dir, 'wrangler.jsonc'));
  servers.push(server);
  const client = await connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/deployed`)));
  assert.equal((await call(client, 'write', { file_path: 'a.txt', content: 'one\n' })).code, null);
  await server.restart();
  const again = await connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/deployed`)));
  assert.equal((await call(again, 'edit', { file_path: 'a.txt', old_string: 'one', new_string: 'two' })).code, null);
  const r = await fetch(`${server.url}/files/deployed/a.txt`);
  assert.equal(await r.text(), 'two\n');
});

describe('the Worker configured by its vars', () => {
  let server;

  before(async () => {
    server = await serveWorker({
      dir: join(scratch, 'configured'),
      worker: join(EDGE, 'worker.js'),
      wasmDirs: [EDGE],
      objects: { Workspace: 'WORKSPACES' },
      vars: {
        DSH_FS_ALLOWED_HOSTS: '127.0.0.1, dsh-fs.example.com',
        DSH_FS_ALLOWED_ORIGINS: 'https://app.example.com',
        DSH_FS_EXTRA_TOOLS: 'checkpoint,changes,revert',
      },
    });
    servers.push(server);
  });

  test('takes the hosts and origins it lists, and only those', async () => {
    const { port } = new URL(server.url);
    const answer = async (headers) =>
      (await raw(`${server.url}/mcp/listed`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: TOOLS_LIST })).status;
    assert.equal(await answer({ host: 'dsh-fs.example.com' }), 200);
    assert.equal(await answer({ host: `dsh-fs.example.com:${port}`, origin: 'https://app.example.com' }), 200);
    assert.equal(await answer({}), 200);
    // Loopback is the default, no longer allowed once the lists are set.
    assert.equal(await answer({ host: `localhost:${port}` }), 403);
    assert.equal(await answer({ origin: 'http://localhost:5173' }), 403);
    assert.equal(await answer({ origin: 'http://app.example.com' }), 403);
    assert.equal(await answer({ host: 'evil.example.com' }), 403);
  });

  test('offers the undo tools its DSH_FS_EXTRA_TOOLS names', async () => {
    const client = await connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/undo`)));
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ['read', 'write', 'edit', 'glob', 'grep', 'checkpoint', 'changes', 'revert']);
    assert.match(client.getInstructions(), /\n\ncheckpoint: /);
    assert.equal((await call(client, 'write', { file_path: 'a.txt', content: 'one\n' })).code, null);
    assert.equal((await call(client, 'revert', { to: 1 })).code, null);
    assert.equal((await fetch(`${server.url}/files/undo/a.txt`)).status, 404);
    assert.equal((await call(client, 'multi_edit', { file_path: 'a.txt', edits: [] })).code, 'UNKNOWN_TOOL');
  });
});

describe('the DurableObjectStore inside workerd', () => {
  let contract;
  let names;

  before(async () => {
    const dir = join(scratch, 'contract');
    fs.mkdirSync(dir, { recursive: true });
    await bundleWorker(here('./workerd/contract-worker.js'), join(dir, 'bundle.js'));
    contract = await serveWorker({
      dir,
      worker: join(dir, 'bundle.js'),
      wasmDirs: [here('./generated/contract/')],
      objects: { ContractStore: 'CONTRACT' },
    });
    servers.push(contract);
    names = await (await fetch(`${contract.url}/checks`)).json();
  });

  test('keeps the byte-store contract', async () => {
    assert.ok(names.length >= 16, names.join(' '));
    const failed = [];
    for (const name of names) {
      const r = await fetch(`${contract.url}/run/${encodeURIComponent(name)}`, { method: 'POST' });
      if (r.status !== 200) failed.push(`${name}: ${await r.text()}`);
    }
    assert.deepEqual(failed, [], `${failed.join('\n')}\n${contract.log}`);
  });
});
