// `@dsh-fs/host/node`: what only Node.js can run, the store over `node:fs`.

export { NodeStore } from './store/node.js';
