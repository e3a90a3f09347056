// The dedicated worker behind `@dsh-fs/host/opfs`: the component and an
// OpfsStore live here, where synchronous access handles exist. Messages:
//   { id, open: { directory, root, shims } } -> opens the store (shims: the
//       URLs of preview2-shim's cli, clocks, io and random; a worker has no
//       import map, so the page resolves them)
//   { id, session: n, options }               -> opens session n
//   { id, session: n, tool, args }             -> one call; the store settles before the answer
//   { id, session: n, definitions: true }      -> the definitions
//   { id, close: true }                        -> releases every file
// Each answer is { id, value } or { id, error }.

import { bind, load, wasiFrom } from '../instance.js';
import { openSession } from '../session.js';
import { OpfsStore } from '../store/opfs.js';

let store;
let instantiate;
const sessions = new Map();

async function handle(message) {
  if (message.open) {
    const { directory, root, shims } = message.open;
    const [component, cli, clocks, io, random] = await Promise.all([
      load(),
      import(shims.cli),
      import(shims.clocks),
      import(shims.io),
      import(shims.random),
    ]);
    const wasi = wasiFrom({ cli, clocks, io, random });
    let dir = await navigator.storage.getDirectory();
    for (const name of directory.split('/').filter(Boolean)) {
      dir = await dir.getDirectoryHandle(name, { create: true });
    }
    store = await OpfsStore.open(dir, { root });
    instantiate = (s) => bind(component, s, wasi).tools;
    return null;
  }
  if (message.close) {
    store?.close();
    store = undefined;
    return null;
  }
  if (message.options) {
    sessions.set(message.session, openSession(instantiate, { ...message.options, store }));
    return null;
  }
  const session = sessions.get(message.session);
  if (message.definitions) return session.definitions();
  const result = session.execute(message.tool, message.args);
  await store.settle();
  return result;
}

// One message at a time, in order: a call and its settle never interleave with another.
let queue = Promise.resolve();
self.onmessage = ({ data }) => {
  queue = queue.then(async () => {
    try {
      self.postMessage({ id: data.id, value: await handle(data) });
    } catch (e) {
      self.postMessage({ id: data.id, error: String(e?.stack ?? e) });
    }
  });
};
