// The transpiled component (the tools composed with the text layer, which
// imports `dsh:fs/store`): `load` compiles its core modules up front
// (asynchronously, which browsers require for modules this size), so each
// session can then be instantiated synchronously. No bare module specifiers
// here: a worker, which has no import map, imports this module too.

import { storeImport } from './binding.js';

const GENERATED = new URL('../generated/', import.meta.url);

/**
 * The transpiled component whose jco module is `entry` (the package's own
 * by default), its core modules (listed in `core-modules.js` beside it)
 * compiled.
 */
export async function load(entry = new URL('dsh-fs-tools.js', GENERATED)) {
  let transpiled;
  let manifest;
  try {
    transpiled = await import(entry.href);
    manifest = await import(new URL('core-modules.js', entry).href);
  } catch (e) {
    throw new Error(`cannot load the transpiled component ${entry.href} (run \`npm run build\` first): ${e.message}`);
  }
  const compiled = new Map();
  await Promise.all(
    manifest.coreModules.map(async (name) => {
      compiled.set(name, await compile(new URL(name, entry)));
    }),
  );
  return { instantiate: transpiled.instantiate, compiled };
}

async function compile(url) {
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return WebAssembly.compile(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`fetching ${url.href} failed: HTTP ${response.status}`);
  return WebAssembly.compileStreaming(response);
}

/**
 * A fresh instance of `component` bound to `store`, with `wasi` as its WASI
 * imports: its exports (`tools` for the package's component).
 */
export function bind(component, store, wasi) {
  const exports = component.instantiate((name) => component.compiled.get(name), {
    ...wasi,
    'dsh:fs/types': {},
    'dsh:fs/store': storeImport(store),
  });
  return exports;
}

/**
 * The WASI entries of the component's import object (jco keys them without
 * versions), from preview2-shim's `cli`, `clocks`, `io` and `random` modules.
 * The tools use only what Rust's std carries in (stdio, environment, exit,
 * the hash-map seed, the clocks) and the monotonic clock a search's time
 * budget reads; the environment is emptied, so the component is granted
 * nothing: no variables, no arguments, no working directory.
 */
export function wasiFrom({ cli, clocks, io, random }) {
  return {
    'wasi:cli/environment': { getEnvironment: () => [], getArguments: () => [], initialCwd: () => undefined },
    'wasi:cli/exit': cli.exit,
    'wasi:cli/stdin': cli.stdin,
    'wasi:cli/stdout': cli.stdout,
    'wasi:cli/stderr': cli.stderr,
    'wasi:cli/terminal-input': cli.terminalInput,
    'wasi:cli/terminal-output': cli.terminalOutput,
    'wasi:cli/terminal-stdin': cli.terminalStdin,
    'wasi:cli/terminal-stdout': cli.terminalStdout,
    'wasi:cli/terminal-stderr': cli.terminalStderr,
    'wasi:clocks/monotonic-clock': clocks.monotonicClock,
    'wasi:clocks/wall-clock': clocks.wallClock,
    'wasi:io/error': io.error,
    'wasi:io/poll': io.poll,
    'wasi:io/streams': io.streams,
    'wasi:random/insecure-seed': random.insecureSeed,
  };
}
