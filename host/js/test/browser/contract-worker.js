// The byte-store contract against the OpfsStore, in a dedicated worker (where
// synchronous access handles exist): each check on a fresh OPFS directory.
// The page sends the URLs of preview2-shim's modules (a worker has no import
// map) and gets `{ names, failures }` back.

import { bind, load, wasiFrom } from '/src/instance.js';
import { OpfsStore } from '/src/store/opfs.js';

self.onmessage = async ({ data: shims }) => {
  try {
    const [component, cli, clocks, io, random] = await Promise.all([
      load(new URL('/test/generated/contract/store-contract.js', self.location.href)),
      import(shims.cli),
      import(shims.clocks),
      import(shims.io),
      import(shims.random),
    ]);
    const wasi = wasiFrom({ cli, clocks, io, random });
    const origin = await navigator.storage.getDirectory();
    await origin.removeEntry('contract', { recursive: true }).catch(() => {});
    const base = await origin.getDirectoryHandle('contract', { create: true });
    const names = bind(component, await OpfsStore.open(base), wasi).storeContract.checks();
    const failures = [];
    for (const name of names) {
      const store = await OpfsStore.open(await base.getDirectoryHandle(name, { create: true }));
      try {
        bind(component, store, wasi).storeContract.run(name);
      } catch (e) {
        failures.push(`${name}: ${e.payload ?? e}`);
      } finally {
        store.close();
      }
    }
    self.postMessage({ names, failures });
  } catch (e) {
    self.postMessage({ error: String(e?.stack ?? e) });
  }
};
