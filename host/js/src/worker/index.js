// The tools at the edge: a Cloudflare Worker (workerd) that serves `read`,
// `write`, `edit`, `glob` and `grep` over MCP's Streamable HTTP transport,
// one workspace per Durable Object. The object keeps the workspace's files
// (DurableObjectStore) and its session's read-before-edit observations
// (`dsh:fs/memory`) in its SQLite storage, so both survive between requests
// and across restarts of the isolate; the runtime runs one object's requests
// one at a time, and every tool call runs to its end without yielding.
//
// Routes (WORKSPACE: 1-64 of A-Z a-z 0-9 . _ -):
//   POST /mcp/WORKSPACE            MCP (JSON responses, no server-side MCP session)
//   GET  /files/WORKSPACE/PATH     the bytes of a file, streamed a stored row at a time
//                                  (404 when there is none)
//   PUT  /files/WORKSPACE/PATH     replaces a file with the request body, past every check:
//                                  how a deployment seeds a workspace or plays another writer
//   GET  /stats/WORKSPACE          { wasmMemoryBytes }: the linear memory its instances hold now
//                                  (they count against the isolate's memory limit)
// A request whose Host, or whose Origin (a browser's page), is not allowed
// gets 403 on every route: a page of another site, or a name of its own
// rebound to the Worker's address, reaches nothing. With a `DSH_FS_TOKEN`
// secret set, every request needs `Authorization: Bearer <token>`.
//
// Bindings: `WORKSPACES`, a Durable Object namespace of class `Workspace`
// with SQLite storage (wrangler: `new_sqlite_classes`; workerd: `enableSql`).
// Vars, each a comma-separated list:
//   DSH_FS_ALLOWED_HOSTS    the Host names it answers (NAME, NAME:PORT, `loopback` or `*`);
//                           `loopback` by default: localhost, 127.0.0.0/8 and [::1], any port
//   DSH_FS_ALLOWED_ORIGINS  the origins whose pages it answers (scheme://host[:port],
//                           `loopback` or `*`); `loopback` by default. No Origin: not a page
//   DSH_FS_EXTRA_TOOLS      extra tools to offer (multi_edit, checkpoint, changes, revert),
//                           as `dsh-fs mcp --extra-tools`; none by default
//
// The component's core modules are declared modules of the Worker
// (generated/edge/worker-modules.js imports them; `npm run build:edge` makes
// them): an edge runtime instantiates compiled modules and never compiles
// WebAssembly from bytes at run time.

import { DurableObject } from 'cloudflare:workers';
import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { instantiate as transpiled } from '../../generated/edge/dsh-fs-edge.js';
import { coreModules } from '../../generated/edge/worker-modules.js';
import { FsError } from '../error.js';
import { bind, wasiFrom } from '../imports.js';
import { describe, MAX_MESSAGE_BYTES, mcpServer } from '../mcp.js';
import { openSession } from '../session.js';
import { DurableObjectStore, durableMemory } from '../store/durable.js';

export { DurableObjectStore, durableMemory };

const component = { instantiate: transpiled, compiled: new Map(Object.entries(coreModules)) };
const wasi = wasiFrom({ cli, clocks, io, random });
const WORKSPACE = /^[A-Za-z0-9._-]{1,64}$/;
/** The tools of the change journal: with one of them offered, the session keeps a journal. */
const UNDO = ['checkpoint', 'changes', 'revert'];

/** One workspace: its files, its session, its MCP endpoint. */
export class Workspace extends DurableObject {
  #store;
  #session;
  #listing;
  /** The linear memories of the current instance. */
  #memories = [];
  /** Why the object cannot serve (a var it cannot use), or null. */
  #broken = null;

  constructor(ctx, env) {
    super(ctx, env);
    this.#store = new DurableObjectStore(ctx.storage);
    const extra = list(env.DSH_FS_EXTRA_TOOLS);
    const journaled = extra.some((name) => UNDO.includes(name));
    const memory = durableMemory(ctx.storage);
    const instantiate = (store) => {
      this.#memories = [];
      const core = (module, imports) => {
        const instance = new WebAssembly.Instance(module, imports);
        if (instance.exports.memory instanceof WebAssembly.Memory) this.#memories.push(instance.exports.memory);
        return instance;
      };
      return bind(component, store, wasi, { 'dsh:fs/memory': memory }, core).tools;
    };
    // No journal unless an undo tool is offered: an edit keeps no old text.
    this.#session = openSession(instantiate, { store: this.#store, journalBytes: journaled ? undefined : 0 });
    try {
      this.#listing = describe(this.#session, { extra });
    } catch (e) {
      this.#broken = `DSH_FS_EXTRA_TOOLS: ${e.message}`;
      return;
    }
    // As `dsh-fs mcp`: checkpoint 1 is the session's start, for `revert`.
    if (journaled) this.#session.execute('checkpoint', { label: 'session start' });
  }

  async fetch(request) {
    if (this.#broken) return new Response(`${this.#broken}\n`, { status: 500 });
    const url = new URL(request.url);
    const [, route, , ...rest] = url.pathname.split('/');
    if (route === 'mcp') return this.#mcp(request);
    if (route === 'files') {
      let path;
      try {
        path = rest.map(decodeURIComponent).join('/');
      } catch {
        return new Response(`${url.pathname} is not a percent-encoded UTF-8 path (a % must start %XX, of UTF-8 bytes); nothing was done\n`, {
          status: 400,
        });
      }
      return this.#files(request, path);
    }
    if (route === 'stats') {
      return Response.json({ wasmMemoryBytes: this.#memories.reduce((n, m) => n + m.buffer.byteLength, 0) });
    }
    return new Response('not found\n', { status: 404 });
  }

  async #mcp(request) {
    // Stateless: every request is whole in itself, so a client survives a
    // restart of the object; the observations live in its storage.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_MESSAGE_BYTES,
    });
    const server = mcpServer(() => this.#session, this.#listing);
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  }

  async #files(request, path) {
    try {
      if (request.method === 'GET') {
        const file = this.#store.stream(path);
        if (!file) return new Response('no such file\n', { status: 404 });
        // A stream of known length: workerd sends it with its Content-Length,
        // so a reader can tell a whole file from a cut one.
        const { readable, writable } = new FixedLengthStream(file.size);
        file.body.pipeTo(writable).catch(() => {});
        return new Response(readable);
      }
      if (request.method === 'PUT') {
        await this.#store.put(path, request.body ?? new Uint8Array(0));
        return new Response(null, { status: 204 });
      }
      return new Response('GET or PUT\n', { status: 405, headers: { allow: 'GET, PUT' } });
    } catch (e) {
      if (e instanceof FsError) return new Response(`${e.code}: ${e.message}\n`, { status: 400 });
      throw e;
    }
  }
}

export default {
  async fetch(request, env) {
    const [, route, workspace] = new URL(request.url).pathname.split('/');
    let refused;
    try {
      refused = refusal(request, env);
    } catch (e) {
      return new Response(`${e.message}\n`, { status: 500 });
    }
    if (refused) {
      // MCP's Streamable HTTP transport: 403, a JSON-RPC error without an id.
      if (route === 'mcp') return Response.json({ jsonrpc: '2.0', error: { code: -32000, message: refused }, id: null }, { status: 403 });
      return new Response(`${refused}\n`, { status: 403 });
    }
    if (env.DSH_FS_TOKEN && !authorized(request, env.DSH_FS_TOKEN)) {
      return new Response('unauthorized\n', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
    }
    if (!['mcp', 'files', 'stats'].includes(route) || !WORKSPACE.test(workspace ?? '')) {
      return new Response('POST /mcp/WORKSPACE, GET or PUT /files/WORKSPACE/PATH, GET /stats/WORKSPACE\n', { status: 404 });
    }
    return env.WORKSPACES.get(env.WORKSPACES.idFromName(workspace)).fetch(request);
  },
};

function authorized(request, token) {
  const given = new TextEncoder().encode(request.headers.get('authorization') ?? '');
  const wanted = new TextEncoder().encode(`Bearer ${token}`);
  return given.byteLength === wanted.byteLength && crypto.subtle.timingSafeEqual(given, wanted);
}

/** The entries of a comma-separated var, trimmed; none when it is unset or empty. */
function list(text) {
  return (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

const LOOPBACK = ['loopback'];

/**
 * Why `request` may not reach the Worker, or null: its Host is not one of
 * DSH_FS_ALLOWED_HOSTS, or it has an Origin (a browser's page) that is not
 * one of DSH_FS_ALLOWED_ORIGINS. Throws for a var it cannot read.
 */
function refusal(request, env) {
  const hosts = list(env.DSH_FS_ALLOWED_HOSTS);
  const origins = list(env.DSH_FS_ALLOWED_ORIGINS);
  const allowedHosts = (hosts.length > 0 ? hosts : LOOPBACK).map((entry) => hostEntry(entry, 'DSH_FS_ALLOWED_HOSTS'));
  const allowedOrigins = (origins.length > 0 ? origins : LOOPBACK).map((entry) => originEntry(entry, 'DSH_FS_ALLOWED_ORIGINS'));
  const host = request.headers.get('host') ?? new URL(request.url).host;
  if (!allowedHosts.some((allows) => allows(host))) {
    return `the host ${JSON.stringify(host)} is not allowed (DSH_FS_ALLOWED_HOSTS lists the names this server answers); nothing was done`;
  }
  const origin = request.headers.get('origin');
  if (origin !== null && !allowedOrigins.some((allows) => allows(origin))) {
    return `the origin ${JSON.stringify(origin)} is not allowed (DSH_FS_ALLOWED_ORIGINS lists the pages this server answers); nothing was done`;
  }
  return null;
}

/** `{ name, port }` of `host[:port]` (port '' when absent, name as a URL normalises it), or null. */
function splitHost(text) {
  const m = /^([^:/?#@\\\s[\]]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/.exec(text);
  if (!m) return null;
  try {
    return { name: new URL(`http://${m[1]}`).hostname, port: m[2] ?? '' };
  } catch {
    return null;
  }
}

/** Whether a host name (as a URL normalises it) is this machine's: localhost, 127.0.0.0/8, [::1]. */
function isLoopback(name) {
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** The test of a Host header for one entry of DSH_FS_ALLOWED_HOSTS: NAME, NAME:PORT, `loopback` or `*`. */
function hostEntry(entry, variable) {
  if (entry === '*') return () => true;
  if (entry === 'loopback') return (host) => isLoopback(splitHost(host)?.name);
  const wanted = splitHost(entry.toLowerCase());
  if (!wanted) throw new Error(`${variable}: ${JSON.stringify(entry)} is not a host name (NAME or NAME:PORT, loopback, or *)`);
  return (host) => {
    const given = splitHost(host);
    return given !== null && given.name === wanted.name && (wanted.port === '' || given.port === wanted.port);
  };
}

/** The test of an Origin header for one entry of DSH_FS_ALLOWED_ORIGINS: an origin, `loopback` or `*`. */
function originEntry(entry, variable) {
  if (entry === '*') return () => true;
  if (entry === 'loopback') {
    return (origin) => {
      const url = sentOrigin(origin);
      return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && isLoopback(url.hostname);
    };
  }
  let wanted = null;
  try {
    const url = new URL(entry);
    if (url.origin !== 'null' && url.pathname === '/' && !url.search && !url.hash && !url.username) wanted = url.origin;
  } catch {}
  if (!wanted) throw new Error(`${variable}: ${JSON.stringify(entry)} is not an origin (scheme://host[:port], loopback, or *)`);
  return (origin) => origin === wanted;
}

/** The URL of an Origin header as a browser sends it (scheme://host[:port], serialised), or null. */
function sentOrigin(text) {
  try {
    const url = new URL(text);
    return url.origin !== 'null' && url.origin === text ? url : null;
  } catch {
    return null;
  }
}
