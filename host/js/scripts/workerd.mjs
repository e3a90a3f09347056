// The Worker's bundle and a workerd config for it: shared by
// `npm run build:edge` and the workerd tests.

import { build } from 'esbuild';

/**
 * Bundles the Worker module `entry` into `outfile`, one ES module: no Node
 * built-ins (a Worker has none; a `node:` import fails the build), the
 * `cloudflare:` modules the runtime provides, and the `.wasm` modules left
 * as imports for the runtime to provide compiled.
 */
export async function bundleWorker(entry, outfile) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:*', '*.wasm'],
    minify: true,
    logLevel: 'warning',
  });
}

/**
 * A workerd config (Cap'n Proto text) serving the Worker whose module
 * `worker.js` and `.wasm` modules (`coreModules`, which it imports) are in
 * the directory `modules`, given relative to where the config is written
 * (workerd embeds files by paths relative to the config). Listens on
 * 127.0.0.1:`port`; Durable Objects of the classes in `objects`
 * (`{ className: binding }`, SQLite storage) keep their storage in the
 * existing directory `storage` (absolute). `vars`: `{ NAME: text }`, the
 * Worker's text bindings (what wrangler's `vars` are).
 */
export function workerdConfig({ coreModules, port, storage, objects = { Workspace: 'WORKSPACES' }, vars = {}, modules: dir = '.' }) {
  const at = (name) => JSON.stringify(`${dir}/${name}`);
  const modules = [
    `(name = "worker.js", esModule = embed ${at('worker.js')})`,
    ...coreModules.map((m) => `(name = ${JSON.stringify(m)}, wasm = embed ${at(m)})`),
  ];
  const classes = Object.keys(objects).map(
    (c) => `(className = ${JSON.stringify(c)}, uniqueKey = ${JSON.stringify(`dsh-fs-${c}`)}, enableSql = true)`,
  );
  const bound = [
    ...Object.entries(objects).map(([c, name]) => `(name = ${JSON.stringify(name)}, durableObjectNamespace = ${JSON.stringify(c)})`),
    ...Object.entries(vars).map(([name, text]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(text)})`),
  ];
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "storage", disk = (path = ${JSON.stringify(storage)}, writable = true)),
  ],
  sockets = [(name = "http", address = ${JSON.stringify(`127.0.0.1:${port}`)}, http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    ${modules.join(',\n    ')},
  ],
  compatibilityDate = "2026-11-01",
  durableObjectNamespaces = [
    ${classes.join(',\n    ')},
  ],
  durableObjectStorage = (localDisk = "storage"),
  bindings = [
    ${bound.join(',\n    ')},
  ],
);
`;
}
