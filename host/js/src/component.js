// The transpiled component (the tools composed with the text layer, which
// imports `dsh:fs/store`), loaded once per process or page: its core modules
// are compiled up front (asynchronously, which browsers require for modules
// this size), so each session can then be instantiated synchronously.

import { wasiImports } from './wasi.js';
import { storeImport } from './binding.js';

const GENERATED = new URL('../generated/', import.meta.url);

async function load() {
  let transpiled;
  let manifest;
  try {
    transpiled = await import(new URL('dsh-fs-tools.js', GENERATED).href);
    manifest = await import(new URL('core-modules.js', GENERATED).href);
  } catch (e) {
    throw new Error(
      `cannot load the transpiled component from ${GENERATED.href} (run \`npm run build\` first): ${e.message}`,
    );
  }
  const compiled = new Map();
  await Promise.all(
    manifest.coreModules.map(async (name) => {
      compiled.set(name, await compile(new URL(name, GENERATED)));
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

const component = await load();

/** A fresh instance of the component bound to `store`: its `dsh:fs/tools` exports. */
export function instantiate(store) {
  const exports = component.instantiate((name) => component.compiled.get(name), {
    ...wasiImports,
    'dsh:fs/types': {},
    'dsh:fs/store': storeImport(store),
  });
  return exports.tools;
}
