// dsh-fs for JavaScript: the transpiled tools component (`read`, `write`, `edit`,
// `glob`, `grep`, with the text layer) over a byte store written in JS. Works in
// Node.js and in browsers; `@dsh-fs/host/node` adds a store over `node:fs`.

export { createSession } from './session.js';
export { MemoryStore, MemoryStore as MemoryProvider } from './store/memory.js';
export { ERROR_CODES, FsError } from './error.js';
