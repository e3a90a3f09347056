// Serves the component's `dsh:fs/store` import from a JS byte store: the
// `reader`, `listing` and `replacement` resources as classes private to one
// instance, u64s as BigInts one way and Numbers the other, and every failure
// as the `err` case the WIT declares. Bytes only: every text rule (decoding,
// BOMs, hashes, versions, freshness, splices, listing order) is the
// component's.
//
// A JS store implements (plain values; a place is `{ key, shown }`: the
// canonical root-relative path and the path to name in messages):
//   roots()                         -> absolute roots a model path may begin with (optional: none)
//   maxObjectBytes()                -> the largest file it takes, asked once (optional: 1 GiB);
//                                      a store holding replacements in memory answers 16 MiB
//   identity(rel, shown)            -> the canonical key of `rel` (optional: `rel`)
//   stat(place)                     -> { kind: 'file'|'directory'|'other', size, token } | null
//   open(place)                     -> reader: the regular file there
//       reader.meta()               -> its { kind, size, token } when opened
//       reader.read(offset, len)    -> Uint8Array of at most `len` bytes from `offset`; empty at the end
//                                      (read once, before the next call: a reader may reuse it)
//       reader.tokenNow()           -> its token now (optional: meta's)
//   listDir(place)                  -> [{ name, kind, size, modified }] in any order, or
//                                      { next(max) -> entries ([] at the end), skipped() -> number }
//       kind: 'file'|'directory'|'symlink'|'other'; modified: ns since the epoch or null
//   replace(place, createParents)   -> [replacement, reader | undefined]: the new content of the
//                                      name, and the file there now
//       replacement.checkWritable() -> throws permission-denied when write-protected (optional)
//       replacement.write(bytes)    -> appends
//       replacement.copy(offset, len) -> appends bytes of the reader `replace` returned (optional)
//       replacement.commit(guard)   -> the new token, if `guard` holds now:
//           { tag: 'absent' } | { tag: 'unchanged', val: token } | { tag: 'none' }
//       replacement.remove(guard)   -> removes the file instead, if `guard` ({ tag: 'unchanged' })
//                                      holds now (optional: a store without it cannot remove files)
// and `close()` (optional) on readers, listings and replacements, called when
// the component drops them: a replacement closed without a commit leaves
// nothing behind. Failures are FsErrors; anything else thrown becomes
// `io-error`. `src/store/memory.js` is the reference.

import { ERROR_CODES, FsError } from './error.js';

const dispose = Symbol.dispose ?? Symbol.for('dispose');
/** Most bytes a default `copy` moves at once. */
const COPY_CHUNK = 1 << 20;
// What a store takes when it does not say (dsh_fs_core::MAX_FILE_BYTES).
const MAX_FILE_BYTES = 2 ** 30;

/** The import object entry for `dsh:fs/store` over `store`. */
export function storeImport(store) {
  class Reader {
    #inner;

    constructor(inner) {
      this.#inner = inner;
    }

    meta() {
      return meta(this.#inner.meta());
    }

    read(offset, len) {
      return guard(() => this.#inner.read(Number(offset), len));
    }

    tokenNow() {
      return guard(() => String(this.#inner.tokenNow?.() ?? this.#inner.meta().token));
    }

    [dispose]() {
      close(this.#inner);
    }
  }

  class Listing {
    #inner;

    constructor(inner) {
      this.#inner = Array.isArray(inner) ? pages(inner) : inner;
    }

    next(max) {
      return guard(() =>
        this.#inner.next(max).map((e) => ({
          name: e.name,
          kind: e.kind,
          size: BigInt(e.size ?? 0),
          modified: u64(e.modified),
        })),
      );
    }

    skipped() {
      return BigInt(this.#inner.skipped?.() ?? 0);
    }

    [dispose]() {
      close(this.#inner);
    }
  }

  class Replacement {
    #inner;
    #current;
    #shown;

    constructor(inner, current, shown) {
      this.#inner = inner;
      this.#current = current;
      this.#shown = shown;
    }

    checkWritable() {
      guard(() => this.#inner.checkWritable?.());
    }

    write(bytes) {
      guard(() => this.#inner.write(bytes));
    }

    copy(offset, len) {
      guard(() => {
        if (this.#inner.copy) return this.#inner.copy(Number(offset), Number(len));
        // No copy of its own: the bytes go through here.
        for (let at = Number(offset), end = at + Number(len); at < end; ) {
          const bytes = this.#current.read(at, Math.min(end - at, COPY_CHUNK));
          if (bytes.length === 0) break;
          this.#inner.write(bytes);
          at += bytes.length;
        }
      });
    }

    static commit(replacement, guardValue) {
      const inner = replacement.#inner;
      try {
        return guard(() => String(inner.commit(guardValue)));
      } finally {
        close(inner);
      }
    }

    static remove(replacement, guardValue) {
      const inner = replacement.#inner;
      const shown = replacement.#shown;
      try {
        guard(() => {
          if (!inner.remove) {
            throw new FsError('invalid-input', `${shown} was left in place: this store cannot remove files`);
          }
          inner.remove(guardValue);
        });
      } finally {
        close(inner);
      }
    }

    [dispose]() {
      close(this.#inner);
    }
  }

  return {
    Reader,
    Listing,
    Replacement,
    roots: () => (store.roots?.() ?? []).map(String),
    maxObjectBytes: () => BigInt(store.maxObjectBytes?.() ?? MAX_FILE_BYTES),
    identity: (rel, shown) => guard(() => (store.identity ? String(store.identity(rel, shown)) : rel)),
    stat: (place) =>
      guard(() => {
        const found = store.stat(place);
        return found == null ? undefined : meta(found);
      }),
    open: (place) => guard(() => new Reader(store.open(place))),
    listDir: (place) => guard(() => new Listing(store.listDir(place))),
    replace: (place, createParents) =>
      guard(() => {
        const [replacement, current] = store.replace(place, createParents);
        return [new Replacement(replacement, current, place.shown), current == null ? undefined : new Reader(current)];
      }),
  };
}

function meta({ kind, size, token }) {
  return { kind, size: u64(size), token: String(token) };
}

function u64(n) {
  return n == null ? undefined : BigInt(n);
}

/** A listing over an array: `max` entries at a time. */
function pages(entries) {
  let at = 0;
  return {
    next(max) {
      const page = entries.slice(at, at + Math.max(max, 1));
      at += page.length;
      return page;
    },
  };
}

/** Closes a store's reader, listing or replacement; a failure to close is not the call's. */
function close(inner) {
  try {
    inner?.close?.();
  } catch {
    // Nothing to tell the component: it is done with the object.
  }
}

/** Runs a store call; anything thrown that is not an FsError becomes `io-error`. */
function guard(call) {
  try {
    return call();
  } catch (e) {
    // An FsError, also one of another copy of this package.
    if (e instanceof FsError || ERROR_CODES.includes(e?.payload?.code)) throw e;
    throw new FsError('io-error', `the provider failed: ${e?.message ?? String(e)}`);
  }
}
