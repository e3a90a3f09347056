// workerd, started for a test: a Worker's modules copied into a scratch
// directory with a config written beside them (127.0.0.1, a port workerd
// picks and reports on its control descriptor, the Durable Objects' storage
// in the scratch directory), restartable on the same storage.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { workerdConfig } from '../../scripts/workerd.mjs';

const require = createRequire(import.meta.url);

/** The workerd binary the npm package carries. */
export const WORKERD = require.resolve('@cloudflare/workerd-linux-64/bin/workerd');

/**
 * Copies `worker` (the bundled module) and the `.wasm` files of each
 * directory in `wasmDirs` into `dir`, writes the config there, and starts
 * workerd. `objects`: `{ className: binding }`; `vars`: `{ NAME: text }`.
 */
export async function serveWorker({ dir, worker, wasmDirs, objects, vars }) {
  fs.mkdirSync(join(dir, 'storage'), { recursive: true });
  fs.copyFileSync(worker, join(dir, 'worker.js'));
  const coreModules = [];
  for (const from of wasmDirs) {
    for (const name of fs.readdirSync(from).filter((f) => f.endsWith('.wasm'))) {
      fs.copyFileSync(join(from, name), join(dir, name));
      coreModules.push(name);
    }
  }
  const config = join(dir, 'workerd.capnp');
  fs.writeFileSync(config, workerdConfig({ coreModules, port: 0, storage: join(dir, 'storage'), objects, vars }));
  return served(['serve', config]);
}

/**
 * workerd serving `config`, a wrangler.json(c) in a directory of its own:
 * its `main` bundled by workerd with esbuild as wrangler bundles it, the
 * Durable Objects' storage under that directory (`.wrangler/`).
 */
export async function serveWrangler(config) {
  const esbuild = require.resolve('esbuild/bin/esbuild');
  return served(['serve', config, '--socket-addr', 'http=127.0.0.1:0'], { ...process.env, WORKERD_ESBUILD: esbuild });
}

async function served(args, env = process.env) {
  const server = { port: 0, process: null, log: '' };
  server.start = async () => {
    const started = await start(args, env, (text) => (server.log += text));
    server.process = started.child;
    server.port = started.port;
    server.url = `http://127.0.0.1:${started.port}`;
  };
  server.stop = () => stop(server.process);
  server.restart = async () => {
    await server.stop();
    await server.start();
  };
  await server.start();
  return server;
}

/** Starts workerd with `args`; resolves with the child and its port once it listens. */
function start(args, env, log) {
  const child = spawn(WORKERD, [...args, '--control-fd=3'], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env,
  });
  child.stdout.on('data', (d) => log(d.toString()));
  child.stderr.on('data', (d) => log(d.toString()));
  return new Promise((resolve, reject) => {
    let control = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('workerd did not start listening within 30 s'));
    }, 30_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`workerd exited (${code ?? signal}) before listening`));
    });
    child.stdio[3].on('data', (d) => {
      control += d.toString();
      for (const line of control.split('\n')) {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.event === 'listen' && message.socket === 'http') {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          resolve({ child, port: message.port });
        }
      }
    });
  });
}

function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}
