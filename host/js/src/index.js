// dsh-fs for JavaScript: the transpiled tools component (`read`, `write`, `edit`,
// `glob`, `grep`) with a provider written in JS. Works in Node.js and in browsers.

export { createSession } from './session.js';
export { MemoryProvider } from './provider/memory.js';
export { ERROR_CODES, FsError } from './provider/contract.js';
