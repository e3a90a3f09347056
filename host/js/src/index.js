// dsh-fs for JavaScript: the transpiled tools component (`read`, `write`, `edit`,
// `glob`, `grep`, with the text layer) over a byte store written in JS. Works in
// Node.js and in browsers; `@dsh-fs/host/node` adds a store over `node:fs`,
// `@dsh-fs/host/opfs` sessions over the browser's Origin Private File System.

import { instantiate } from './component.js';
import { openSession } from './session.js';

export { MemoryStore, MemoryStore as MemoryProvider } from './store/memory.js';
export { ERROR_CODES, FsError } from './error.js';

/** Opens a session over `options.store` (a fresh MemoryStore by default). */
export function createSession(options) {
  return openSession(instantiate, options);
}
