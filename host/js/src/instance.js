// The transpiled component (the tools composed with the text layer, which
// imports `dsh:fs/store`): `load` compiles its core modules up front
// (asynchronously, which browsers require for modules this size), so each
// session can then be instantiated synchronously. No bare module specifiers
// here: a worker, which has no import map, imports this module too.

export { bind, wasiFrom } from './imports.js';

const GENERATED = new URL('../generated/', import.meta.url);

/**
 * The transpiled component whose jco module is `entry` (the package's own
 * by default), its core modules (listed in `core-modules.js` beside it)
 * compiled.
 */
export async function load(entry = new URL('dsh-fs-tools.js', GENERATED)) {
  let transpiled;
  let manifest;
  try {
    transpiled = await import(entry.href);
    manifest = await import(new URL('core-modules.js', entry).href);
  } catch (e) {
    throw new Error(`cannot load the transpiled component ${entry.href} (run \`npm run build\` first): ${e.message}`);
  }
  const compiled = new Map();
  await Promise.all(
    manifest.coreModules.map(async (name) => {
      compiled.set(name, await compile(new URL(name, entry)));
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
