// MemoryProvider: the provider contract over an in-memory workspace, with
// the same codes, version semantics (metadata generation + content hash) and
// byte-faithful edits as the Rust host's MemoryProvider. Directories are
// implied by the files under them (or made with createDir).

import { contentHash } from '../core/hash.js';
import { NotText, StreamDecoder, bomLength, decode } from '../core/text.js';
import {
  FsError,
  SortedListing,
  checkWriteIntent,
  display,
  normalize,
  spliceChecked,
  version,
} from './contract.js';

const encoder = new TextEncoder();
/** Largest chunk a stream hands out, whatever the caller asks for. */
const MAX_CHUNK = 8 << 20;

/** One stored file; its bytes are never mutated (a change stores a new File). */
class File {
  #hash = null;

  constructor(bytes, generation) {
    this.bytes = bytes;
    this.generation = generation;
  }

  /** Metadata part of the version: changes on every store, even of the same bytes. */
  get meta() {
    return `m${this.generation.toString(16)}`;
  }

  get hash() {
    this.#hash ??= contentHash(this.bytes);
    return this.#hash;
  }

  get version() {
    return version(this.meta, this.hash);
  }
}

/** A virtual workspace: files and directories held in memory. */
export class MemoryProvider {
  #root;
  #files = new Map();
  #dirs = new Set();
  #generation = 0;

  /** An empty workspace; absolute paths are accepted under `root`. */
  constructor({ root = '/workspace' } = {}) {
    this.#root = root;
  }

  /**
   * Puts `content` (a string, stored as UTF-8, or bytes) at `path`, creating
   * parent directories and bypassing every check: how a host seeds the
   * workspace or simulates another writer.
   */
  insert(path, content) {
    const bytes =
      typeof content === 'string' ? encoder.encode(content) : Uint8Array.from(content);
    this.#put(normalize(path, this.#root), bytes);
  }

  /** A copy of the bytes at `path`, or undefined if it is not a file. */
  get(path) {
    return this.#files.get(normalize(path, this.#root))?.bytes.slice();
  }

  /** Creates a directory and its parents. */
  createDir(path) {
    this.#addDirs(normalize(path, this.#root));
  }

  /** Removes the file at `path`; whether there was one. */
  remove(path) {
    return this.#files.delete(normalize(path, this.#root));
  }

  // --- The provider interface (see binding.js for the shape) ---

  /** Like the WIT `resolve`: a target naming a normalized path inside the root. */
  resolve(path) {
    const key = normalize(path, this.#root);
    return { displayPath: display(key), key };
  }

  /** Metadata, or null when absent. Never reads content. */
  stat(target) {
    const file = this.#files.get(target.key);
    if (file) return { version: file.meta, kind: 'file', size: file.bytes.length };
    if (this.#isDir(target.key)) return { version: 'dir', kind: 'directory', size: null };
    return null;
  }

  /** The whole file as text (BOM removed) with the version of exactly those bytes. */
  readText(target, maxBytes) {
    const shown = target.displayPath;
    const file = this.#file(target.key, shown);
    if (file.bytes.length > maxBytes) {
      throw new FsError(
        'too-large',
        `${shown} has ${file.bytes.length} bytes, more than the ${maxBytes} this call reads`,
      );
    }
    return { text: decodeOrThrow(file.bytes, shown), version: file.version };
  }

  /**
   * Like readText in chunks: a reader over a snapshot of the file, from
   * `start` bytes into the text (past any BOM); a stream that starts past 0
   * reports no version.
   */
  streamText(target, start = 0) {
    return new MemoryStream(this.#file(target.key, target.displayPath), target.displayPath, start);
  }

  /**
   * Creates or replaces the whole file under `intent`: create-if-absent on an
   * existing file is not-observed; replace-if-version on a missing or changed
   * file is stale-version; none writes unconditionally.
   */
  writeText(target, content, intent) {
    const shown = target.displayPath;
    const current = this.#existing(target.key, shown);
    checkWriteIntent(shown, intent, current);
    const file = this.#put(target.key, encoder.encode(content));
    return { operation: current ? 'updated' : 'created', version: file.version };
  }

  /**
   * A missing file is stale-version; with `expected`, a changed file is
   * stale-version before any matching; then the byte-faithful splice.
   */
  editText(target, edit, expected) {
    const shown = target.displayPath;
    const current = this.#existing(target.key, shown);
    if (!current) throw FsError.vanished(shown);
    const spliced = spliceChecked(shown, current.bytes, current, edit, expected);
    const file = this.#put(target.key, spliced.bytes);
    return {
      replacements: spliced.replacements,
      version: file.version,
      firstLine: spliced.firstLine,
    };
  }

  /**
   * The directory's entries (one level) in byte order of their names:
   * not-found when missing, not-directory for a file or under one.
   */
  listDir(target) {
    const shown = target.displayPath;
    const key = target.key;
    if (this.#files.has(key)) throw new FsError('not-directory', `${shown} is not a directory`);
    if (!this.#isDir(key)) {
      this.#file(key, shown); // throws not-directory under a file, else not-found
    }
    const prefix = key === '' ? '' : `${key}/`;
    const child = (k) => {
      const rest = k.startsWith(prefix) ? k.slice(prefix.length) : null;
      return rest && !rest.includes('/') ? rest : null;
    };
    const entries = [];
    for (const dir of this.#dirs) {
      const name = child(dir);
      if (name) entries.push({ name, kind: 'directory', size: 0, modified: null });
    }
    for (const [path, file] of this.#files) {
      const name = child(path);
      if (name) entries.push({ name, kind: 'file', size: file.bytes.length, modified: null });
    }
    return new SortedListing(shown, entries);
  }

  // --- Storage ---

  #put(key, bytes) {
    const slash = key.lastIndexOf('/');
    if (slash !== -1) this.#addDirs(key.slice(0, slash));
    const file = new File(bytes, ++this.#generation);
    this.#files.set(key, file);
    return file;
  }

  #addDirs(key) {
    for (let at = key; at !== ''; at = at.slice(0, Math.max(0, at.lastIndexOf('/')))) {
      this.#dirs.add(at);
    }
  }

  #isDir(key) {
    return key === '' || this.#dirs.has(key);
  }

  /** The file at `key`, or the error a disk would give for it. */
  #file(key, shown) {
    const file = this.#files.get(key);
    if (file) return file;
    if (this.#isDir(key)) throw new FsError('not-regular-file', `${shown} is a directory`);
    for (let at = key.lastIndexOf('/'); at !== -1; at = key.lastIndexOf('/', at - 1)) {
      if (this.#files.has(key.slice(0, at))) {
        throw new FsError('not-directory', `a parent of ${shown} is not a directory`);
      }
    }
    throw FsError.notFound(shown);
  }

  /** The file at `key` if it exists, null if not; other failures throw. */
  #existing(key, shown) {
    try {
      return this.#file(key, shown);
    } catch (e) {
      if (e instanceof FsError && e.code === 'not-found') return null;
      throw e;
    }
  }
}

function decodeOrThrow(bytes, shown) {
  try {
    return decode(bytes);
  } catch (e) {
    if (e instanceof NotText) throw FsError.notText(shown, String(e));
    throw e;
  }
}

/** Streams a snapshot of one file in chunks of whole characters. */
class MemoryStream {
  #file;
  #shown;
  #at = 0;
  #decoder = new StreamDecoder();
  #done = false;
  #whole = true;

  constructor(file, shown, start) {
    this.#file = file;
    this.#shown = shown;
    if (start > 0) {
      this.#at = Math.min(bomLength(file.bytes) + start, file.bytes.length);
      this.#decoder = StreamDecoder.resume(start);
      this.#whole = false;
    }
  }

  /** The next chunk of at most `maxBytes` bytes of UTF-8; null at the end. */
  next(maxBytes) {
    const bytes = this.#file.bytes;
    try {
      for (;;) {
        if (this.#at === bytes.length) {
          if (!this.#done) {
            this.#decoder.finish();
            this.#done = true;
          }
          return null;
        }
        const want = Math.min(Math.max(maxBytes, 4), MAX_CHUNK) - this.#decoder.pending;
        const end = Math.min(this.#at + Math.max(want, 1), bytes.length);
        const text = this.#decoder.push(bytes.subarray(this.#at, end));
        this.#at = end;
        if (text.length > 0) return text;
      }
    } catch (e) {
      if (e instanceof NotText) throw FsError.notText(this.#shown, String(e));
      throw e;
    }
  }

  /** The version of everything streamed, once `next` returned null. */
  version() {
    return this.#done && this.#whole ? this.#file.version : null;
  }
}
