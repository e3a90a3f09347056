// `@dsh-fs/host/opfs`: sessions over a directory of the browser's Origin
// Private File System. The component runs in a dedicated worker beside the
// store (synchronous access handles exist only there), so a call here is a
// message, and `execute` returns a promise.

/**
 * Opens the OPFS directory `directory` (created if missing) in a new worker.
 * Returns `{ createSession(options), close() }`; each session's `execute`
 * and `definitions` return promises of what `createSession`'s would.
 */
export async function openOpfs({ directory = 'dsh-fs', root = '/workspace' } = {}) {
  const worker = new Worker(new URL('./opfs/worker.js', import.meta.url), { type: 'module' });
  const pending = new Map();
  let next = 0;
  worker.onmessage = ({ data }) => {
    const { resolve, reject } = pending.get(data.id);
    pending.delete(data.id);
    if ('error' in data) reject(new Error(data.error));
    else resolve(data.value);
  };
  worker.onerror = (e) => {
    for (const { reject } of pending.values()) reject(new Error(e.message));
    pending.clear();
  };
  const send = (message) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  // The worker has no import map: the shims are resolved here, by the page's.
  const shims = Object.fromEntries(
    ['cli', 'clocks', 'io', 'random'].map((m) => [m, import.meta.resolve(`@bytecodealliance/preview2-shim/${m}`)]),
  );
  await send({ open: { directory, root, shims } });
  let sessions = 0;
  return {
    async createSession({ observationPolicy = true, journalBytes } = {}) {
      const session = ++sessions;
      await send({ session, options: { observationPolicy, journalBytes } });
      return {
        execute: (tool, args = {}) =>
          send({ session, tool: String(tool), args: typeof args === 'string' ? args : JSON.stringify(args) }),
        definitions: () => send({ session, definitions: true }),
      };
    },
    async close() {
      await send({ close: true });
      worker.terminate();
    },
  };
}
