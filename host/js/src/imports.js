// The import object of an instance of the component, and the instance: no
// loading here and no platform module, so a Worker, whose core modules come
// declared with its code, binds instances with the same two functions as
// Node and browsers (src/instance.js loads the modules there).

import { storeImport } from './binding.js';

/**
 * A fresh instance of `component` bound to `store`, with `wasi` as its WASI
 * imports (and `more`: the `dsh:fs/memory` of the Worker's component): its
 * exports (`tools` for the package's component). `instantiateCore(module,
 * imports)`, when given, makes each core instance (jco's default is
 * `new WebAssembly.Instance`).
 */
export function bind(component, store, wasi, more = {}, instantiateCore = undefined) {
  const exports = component.instantiate(
    (name) => component.compiled.get(name),
    {
      ...wasi,
      'dsh:fs/types': {},
      'dsh:fs/store': storeImport(store),
      ...more,
    },
    instantiateCore,
  );
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
