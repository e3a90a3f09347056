// What every JS provider shares, so freshness and errors mean the same thing
// in each backend: the FsError a provider throws, lexical path confinement,
// version tokens (metadata, then content hash) and the guarded-write and
// edit checks of the provider contract.

import { SpliceError, apply } from '../core/splice.js';
import { NotText } from '../core/text.js';

/** Every `dsh:fs/types.error-code`. */
export const ERROR_CODES = Object.freeze([
  'not-found',
  'not-text',
  'not-regular-file',
  'not-directory',
  'stale-version',
  'not-observed',
  'ambiguous-edit',
  'edit-not-found',
  'sandbox-denied',
  'permission-denied',
  'too-large',
  'io-error',
  'aborted',
  'invalid-input',
  'busy',
]);

/**
 * A provider failure: `code` is one of ERROR_CODES. Thrown by a provider, it
 * reaches the component as the `err` case of the operation's result.
 */
export class FsError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'FsError';
    this.code = ERROR_CODES.includes(code) ? code : 'io-error';
    // The value handed to the component (jco lowers a thrown `payload`).
    this.payload = { code: this.code, message };
  }

  static notFound(path) {
    return new FsError('not-found', `${path} does not exist`);
  }

  static sandboxDenied(path) {
    return new FsError('sandbox-denied', `${path} is outside the workspace root`);
  }

  static stale(path) {
    return new FsError('stale-version', `${path} changed since it was last read`);
  }

  static notText(path, why) {
    return new FsError('not-text', `${path} is not UTF-8 text (${why})`);
  }

  /** `stale-version` for a file that is gone. */
  static vanished(path) {
    return new FsError(
      'stale-version',
      `${path} no longer exists (it was deleted or moved since it was read)`,
    );
  }
}

/**
 * A model path as a root-relative key with `/` separators, purely lexically:
 * `.` and empty parts dropped, `..` applied, absolute paths accepted only
 * under `root`. Leaving the root is `sandbox-denied`.
 */
export function normalize(path, root) {
  if (typeof path !== 'string' || path.length === 0) {
    throw new FsError('invalid-input', 'the path is empty');
  }
  if (path.includes('\0')) throw new FsError('invalid-input', 'the path contains a NUL byte');
  let relative = path;
  if (path.startsWith('/')) {
    const parts = components(path);
    const prefix = components(root);
    if (prefix.some((p, i) => parts[i] !== p)) throw FsError.sandboxDenied(path);
    relative = parts.slice(prefix.length).join('/');
  }
  const parts = [];
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) throw FsError.sandboxDenied(path);
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

function components(absolute) {
  return absolute.split('/').filter((p) => p !== '' && p !== '.');
}

/** The display form of a root-relative key. */
export function display(key) {
  return key === '' ? '.' : key;
}

/** A version token: backend metadata, then the content hash. */
export function version(meta, hash) {
  return `${meta}:${hash}`;
}

/**
 * Whether `expected` still describes a file with metadata `meta` whose
 * content hashes to `hash`: the hash decides when the token has one (a
 * rewrite with the same bytes is not a change); a metadata-only token (from
 * `stat`) must match exactly.
 */
export function stillFresh(expected, meta, hash) {
  const at = expected.lastIndexOf(':');
  return at === -1 ? expected === meta : expected.slice(at + 1).toLowerCase() === hash;
}

/**
 * The checks of a write under `intent` (none, `{ tag: 'create-if-absent' }`
 * or `{ tag: 'replace-if-version', val }`), given the current file as
 * `{ meta, hash }` or null when it does not exist.
 */
export function checkWriteIntent(path, intent, current) {
  if (!intent) return;
  if (intent.tag === 'create-if-absent') {
    if (current) {
      throw new FsError(
        'not-observed',
        `${path} already exists and has not been read in this session`,
      );
    }
    return;
  }
  if (!current) throw FsError.vanished(path);
  if (!stillFresh(intent.val, current.meta, current.hash)) throw FsError.stale(path);
}

/**
 * An edit once the current bytes are loaded: the version check (before any
 * matching), then the byte-faithful splice. `{ bytes, replacements, firstLine }`.
 */
export function spliceChecked(path, bytes, current, edit, expected) {
  if (expected != null && !stillFresh(expected, current.meta, current.hash)) {
    throw FsError.stale(path);
  }
  try {
    return apply(bytes, edit);
  } catch (e) {
    if (e instanceof NotText) throw FsError.notText(path, String(e));
    if (e instanceof SpliceError) throw new FsError(e.code, e.message(path));
    throw e;
  }
}

/** Most entries one directory may have to be listed; more is `too-large`. */
export const MAX_LIST_ENTRIES = 1_000_000;
/** Most entries one listing page carries, whatever the caller asks for. */
export const MAX_LIST_PAGE = 4096;

/** Orders two names by their UTF-8 bytes (code point order, not UTF-16 units). */
export function compareNames(a, b) {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return (p.done ? 0 : 1) - (q.done ? 0 : 1);
    const d = p.value.codePointAt(0) - q.value.codePointAt(0);
    if (d !== 0) return d;
  }
}

/**
 * A listing over `entries` (`{ name, kind, size, modified }`, any order):
 * sorted by name, handed out `next(max)` at a time, `too-large` beyond
 * MAX_LIST_ENTRIES. `skipped` counts names a backend could not decode.
 */
export class SortedListing {
  #entries;
  #at = 0;
  #skipped;

  constructor(shown, entries, skipped = 0) {
    if (entries.length + skipped > MAX_LIST_ENTRIES) {
      throw new FsError(
        'too-large',
        `${shown} has more than ${MAX_LIST_ENTRIES} entries, too many to list`,
      );
    }
    this.#entries = entries
      .filter((e) => e.name !== '' && e.name !== '.' && e.name !== '..')
      .sort((a, b) => compareNames(a.name, b.name));
    this.#skipped = skipped;
  }

  /** The next at most `max` entries (at least one while any remain); [] at the end. */
  next(max) {
    const n = Math.min(Math.max(Number(max), 1), MAX_LIST_PAGE);
    const page = this.#entries.slice(this.#at, this.#at + n);
    this.#at += page.length;
    return page;
  }

  skipped() {
    return this.#skipped;
  }
}
