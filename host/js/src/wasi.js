// The WASI imports Rust's std carries into the component (stdio, environment,
// exit, the hash-map seed, the clocks) and the monotonic clock a search's time
// budget reads. The tools use nothing else of them; they are linked from
// preview2-shim with the environment emptied, so the component is granted
// nothing: no variables, no arguments, no working directory.

import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';

const environment = {
  getEnvironment: () => [],
  getArguments: () => [],
  initialCwd: () => undefined,
};

/** The WASI entries of the component's import object (jco keys them without versions). */
export const wasiImports = {
  'wasi:cli/environment': environment,
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
