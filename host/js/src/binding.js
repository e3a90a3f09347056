// Serves the component's `dsh:fs/provider` import from a JS provider object:
// the `target`, `text-stream` and `listing` resources as classes private to one
// instance, u64s as BigInts, and every failure as the `err` case the WIT
// declares.
//
// A JS provider implements (plain values, numbers, null for none):
//   resolve(path)                        -> target: { displayPath, key, ... }
//   stat(target)                         -> { version, kind: 'file'|'directory'|'other', size } | null
//   readText(target, maxBytes)           -> { text, version }
//   streamText(target, start)            -> { next(maxBytes) -> string | null, version() -> string | null }
//                                           (start: text offset past any BOM, a Number; 0 or where
//                                           a chunk of an earlier stream of the same version began)
//   writeText(target, content, intent)   -> { operation: 'created'|'updated', version }
//       intent: null | { tag: 'create-if-absent' } | { tag: 'replace-if-version', val: version }
//   editText(target, { oldString, newString, replaceAll }, expected: version | null)
//                                        -> { replacements, version, firstLine }
//   listDir(target)                      -> { next(max) -> [{ name, kind, size, modified }], skipped() -> number }
//       kind: 'file'|'directory'|'symlink'|'other'; size in bytes for files, 0 otherwise;
//       modified: ns since the Unix epoch or null; entries in byte order of their names,
//       at most `max` per call, [] at the end (SortedListing in provider/contract.js does this)
//   search(target, query)                -> string | null   (optional; null or absent: the
//       component searches through listDir and streamText; a string must be byte for byte
//       what that search renders; query: { tag: 'glob', val: pattern } |
//       { tag: 'grep', val: { pattern, include } })
// and throws FsError for every failure; any other exception becomes `io-error`.
// A value of the wrong shape cannot be lowered: the call fails like a trap
// (see session.js).

import { FsError } from './provider/contract.js';

/** The import object entry for `dsh:fs/provider` over `provider`. */
export function providerImport(provider) {
  // The provider's own targets and streams, behind handles the component
  // cannot forge: only `resolve` and `streamText` below make them.
  const inner = new WeakMap();

  class Target {
    displayPath() {
      return inner.get(this).displayPath;
    }

    key() {
      return inner.get(this).key;
    }
  }

  class TextStream {
    next(maxBytes) {
      return guard(() => inner.get(this).next(maxBytes) ?? undefined);
    }

    version() {
      return inner.get(this).version() ?? undefined;
    }
  }

  class Listing {
    next(max) {
      return guard(() =>
        inner
          .get(this)
          .next(max)
          .map((e) => ({
            name: e.name,
            kind: e.kind,
            size: BigInt(e.size ?? 0),
            modified: u64(e.modified),
          })),
      );
    }

    skipped() {
      return BigInt(inner.get(this).skipped?.() ?? 0);
    }
  }

  const wrap = (Class, value) => {
    const handle = new Class();
    inner.set(handle, value);
    return handle;
  };
  const target = (t) => inner.get(t);

  return {
    Target,
    TextStream,
    Listing,
    resolve: (path) => guard(() => wrap(Target, provider.resolve(path))),
    stat: (t) =>
      guard(() => {
        const info = provider.stat(target(t));
        if (info == null) return undefined;
        return { version: info.version, kind: info.kind, size: u64(info.size) };
      }),
    readText: (t, maxBytes) => guard(() => provider.readText(target(t), Number(maxBytes))),
    streamText: (t, start) =>
      guard(() => wrap(TextStream, provider.streamText(target(t), Number(start)))),
    writeText: (t, content, intent) =>
      guard(() => provider.writeText(target(t), content, intent ?? null)),
    editText: (t, edit, expected) =>
      guard(() => {
        const outcome = provider.editText(target(t), edit, expected ?? null);
        return { ...outcome, firstLine: u64(outcome.firstLine) };
      }),
    listDir: (t) => guard(() => wrap(Listing, provider.listDir(target(t)))),
    search: (t, query) =>
      guard(() => (provider.search ? (provider.search(target(t), query) ?? undefined) : undefined)),
  };
}

function u64(n) {
  return n == null ? undefined : BigInt(n);
}

/** Runs a provider call; anything thrown that is not an FsError becomes `io-error`. */
function guard(call) {
  try {
    return call();
  } catch (e) {
    if (e instanceof FsError) throw e;
    throw new FsError('io-error', `the provider failed: ${e?.message ?? String(e)}`);
  }
}
