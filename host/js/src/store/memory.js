// MemoryStore: a byte store held in memory, the JS twin of the Rust
// `MemoryStore` (core/src/store/memory.rs): files are immutable snapshots
// with a generation, directories are implied by the files under them (or
// made with createDir). The component's text layer does everything else.

import { FsError } from '../error.js';
import { seedingKey } from './seeding.js';
import { BufferedReplacement, MAX_IN_MEMORY_BYTES } from './buffered.js';

const encoder = new TextEncoder();

/** One stored file; its bytes are never mutated (a change stores a new File). */
class File {
  constructor(bytes, generation) {
    this.bytes = bytes;
    this.generation = generation;
  }

  get meta() {
    return { kind: 'file', size: this.bytes.length, token: `m${this.generation.toString(16)}` };
  }
}

/** A virtual workspace: files and directories held in memory. */
export class MemoryStore {
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
   * workspace or plays another writer.
   */
  insert(path, content) {
    const bytes = typeof content === 'string' ? encoder.encode(content) : Uint8Array.from(content);
    this.#put(this.#key(path), bytes);
  }

  /** A copy of the bytes at `path`, or undefined if it is not a file. */
  get(path) {
    return this.#files.get(this.#key(path))?.bytes.slice();
  }

  /** Creates a directory and its parents. */
  createDir(path) {
    this.#addDirs(this.#key(path));
  }

  /** Removes the file at `path`; whether there was one. */
  remove(path) {
    return this.#files.delete(this.#key(path));
  }

  // --- dsh:fs/store (see binding.js) ---

  roots() {
    return [this.#root];
  }

  /** Files and replacements are held in memory: 16 MiB, as in Rust's MemoryStore. */
  maxObjectBytes() {
    return MAX_IN_MEMORY_BYTES;
  }

  stat({ key, shown }) {
    const file = this.#files.get(key);
    if (file) return file.meta;
    if (this.#isDir(key)) return { kind: 'directory', size: null, token: 'dir' };
    this.#checkParents(key, shown);
    return null;
  }

  open({ key, shown }) {
    return new Snapshot(this.#file(key, shown));
  }

  listDir({ key, shown }) {
    if (this.#files.has(key)) throw FsError.notDirectory(shown);
    if (!this.#isDir(key)) {
      this.#checkParents(key, shown);
      throw FsError.notFound(shown);
    }
    const prefix = key === '' ? '' : `${key}/`;
    const child = (k) => {
      const rest = k.startsWith(prefix) ? k.slice(prefix.length) : '';
      return rest !== '' && !rest.includes('/') ? rest : null;
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
    return entries;
  }

  replace({ key, shown }, createParents) {
    let current = null;
    try {
      current = this.#file(key, shown);
    } catch (e) {
      if (e.code !== 'not-found') throw e;
      const slash = key.lastIndexOf('/');
      if (!createParents && !this.#isDir(slash === -1 ? '' : key.slice(0, slash))) throw e;
    }
    const commit = (bytes, guard) => {
      const now = this.#files.get(key);
      if (guard.tag === 'absent' && now) throw FsError.createdMeanwhile(shown);
      if (guard.tag === 'unchanged') {
        if (!now) throw FsError.vanished(shown);
        if (now.meta.token !== guard.val) throw FsError.stale(shown);
      }
      return this.#put(key, bytes).meta.token;
    };
    const remove = (guard) => {
      const now = this.#files.get(key);
      if (!now) throw FsError.vanished(shown);
      if (guard.tag !== 'unchanged' || now.meta.token !== guard.val) throw FsError.stale(shown);
      this.#files.delete(key);
    };
    return [new BufferedReplacement(commit, remove), current ? new Snapshot(current) : undefined];
  }

  // --- Storage ---

  #key(path) {
    return seedingKey(this.#root, path);
  }

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
    if (this.#isDir(key)) throw FsError.isDirectory(shown);
    this.#checkParents(key, shown);
    throw FsError.notFound(shown);
  }

  #checkParents(key, shown) {
    for (let at = key.lastIndexOf('/'); at > 0; at = key.lastIndexOf('/', at - 1)) {
      if (this.#files.has(key.slice(0, at))) throw FsError.parentNotDirectory(shown);
    }
  }
}

/** One file's bytes as they were when opened. */
class Snapshot {
  #file;

  constructor(file) {
    this.#file = file;
  }

  meta() {
    return this.#file.meta;
  }

  read(offset, len) {
    return this.#file.bytes.subarray(offset, offset + len);
  }
}
