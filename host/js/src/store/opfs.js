// OpfsStore: a byte store over a directory of the browser's Origin Private
// File System, for a dedicated worker (the only place synchronous access
// handles exist). The component calls a store synchronously, but OPFS can
// open, create and list only asynchronously, so `OpfsStore.open` walks the
// directory once and keeps every file's FileSystemSyncAccessHandle open
// (exclusive: no other tab or worker touches these files meanwhile, and
// tokens are generations this store counts). Reads and replaces of
// existing files then run on the handles, synchronously; a file created
// during a call is held in memory until `settle()`, which the worker awaits
// after each call, creates it (with its parents) on disk; a file removed is
// forgotten at once and removed from disk there.
//
// A replace rewrites the file in place through its handle, but first puts
// the whole new content in a journal (`.dsh-fs-journal`, hidden from the
// workspace) and flushes it: a crash during the rewrite is repaired by the
// next `OpfsStore.open`, which finishes the journaled write. Readers see
// the old bytes or the new, and other contexts cannot open the files at all.

import { FsError } from '../error.js';
import { BufferedReplacement, MAX_IN_MEMORY_BYTES } from './buffered.js';

/** The journal's name in the store's directory; never listed, never opened as a file. */
const JOURNAL = '.dsh-fs-journal';
/** Ends a complete journal record. */
const DONE = 0x454e4f44; // "DONE"
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The store of one OPFS directory; `await OpfsStore.open(directoryHandle)`. */
export class OpfsStore {
  #root;
  #dir;
  /** key -> { access, generation } on disk, or { bytes, generation } until settled. */
  #files = new Map();
  /** key -> FileSystemDirectoryHandle, or null until settled. */
  #dirs = new Map();
  #generation = 0;
  #journal;
  /** Keys of files removed on disk at the next `settle()`. */
  #removed = new Set();

  constructor(dir, root) {
    this.#dir = dir;
    this.#root = root;
    this.#dirs.set('', dir);
  }

  /** Opens the store of `dir`, taking every file's access handle; absolute paths live under `root`. */
  static async open(dir, { root = '/workspace' } = {}) {
    const store = new OpfsStore(dir, root);
    const journal = await (await dir.getFileHandle(JOURNAL, { create: true })).createSyncAccessHandle();
    const pending = replay(journal);
    if (pending) {
      // The last rewrite did not finish: finish it before anything reads.
      const file = await store.#handle(pending.key);
      const access = await file.createSyncAccessHandle();
      overwrite(access, pending.bytes);
      access.close();
    }
    journal.truncate(0);
    journal.flush();
    store.#journal = journal;
    await store.#walk(dir, '');
    return store;
  }

  async #walk(dir, prefix) {
    for await (const [name, handle] of dir.entries()) {
      if (prefix === '' && name === JOURNAL) continue;
      const key = prefix + name;
      if (handle.kind === 'directory') {
        this.#dirs.set(key, handle);
        await this.#walk(handle, `${key}/`);
      } else {
        this.#files.set(key, { access: await handle.createSyncAccessHandle(), generation: ++this.#generation });
      }
    }
  }

  /** Puts on disk what this call created and removes what it removed; awaited between calls. */
  async settle() {
    for (const key of this.#removed) {
      const slash = key.lastIndexOf('/');
      const parent = await this.#directory(slash === -1 ? '' : key.slice(0, slash));
      await parent.removeEntry(key.slice(slash + 1));
    }
    this.#removed.clear();
    for (const [key, file] of this.#files) {
      if (!file.bytes) continue;
      const access = await (await this.#handle(key)).createSyncAccessHandle();
      this.#rewrite(key, access, file.bytes);
      this.#files.set(key, { access, generation: file.generation });
    }
  }

  /** Releases every access handle: the files are free for other contexts again. */
  close() {
    for (const file of this.#files.values()) file.access?.close();
    this.#files.clear();
    this.#journal?.close();
    this.#journal = undefined;
  }

  /** The file handle of `key`, created with its parents. */
  async #handle(key) {
    const slash = key.lastIndexOf('/');
    const parent = await this.#directory(slash === -1 ? '' : key.slice(0, slash));
    return parent.getFileHandle(key.slice(slash + 1), { create: true });
  }

  /** Replaces the content behind `access` by `bytes`, journaled first. */
  #rewrite(key, access, bytes) {
    const name = encoder.encode(key);
    const head = new DataView(new ArrayBuffer(12));
    head.setUint32(0, name.length, true);
    head.setFloat64(4, bytes.length, true);
    const tail = new DataView(new ArrayBuffer(4));
    tail.setUint32(0, DONE, true);
    const journal = this.#journal;
    journal.truncate(0);
    let at = 0;
    for (const part of [new Uint8Array(head.buffer), name, bytes, new Uint8Array(tail.buffer)]) {
      at += journal.write(part, { at });
    }
    journal.flush();
    overwrite(access, bytes);
    journal.truncate(0);
    journal.flush();
  }

  async #directory(key) {
    let handle = this.#dirs.get(key);
    if (!handle) {
      const slash = key.lastIndexOf('/');
      const parent = await this.#directory(slash === -1 ? '' : key.slice(0, slash));
      handle = await parent.getDirectoryHandle(key.slice(slash + 1), { create: true });
      this.#dirs.set(key, handle);
    }
    return handle;
  }

  // --- dsh:fs/store (see binding.js) ---

  roots() {
    return [this.#root];
  }

  /** A replacement is buffered in memory before it is written. */
  maxObjectBytes() {
    return MAX_IN_MEMORY_BYTES;
  }

  identity(rel, shown) {
    if (rel === JOURNAL) throw FsError.sandboxDenied(shown);
    return rel;
  }

  stat({ key, shown }) {
    const file = this.#files.get(key);
    if (file) return meta(file);
    if (this.#dirs.has(key)) return { kind: 'directory', size: null, token: 'dir' };
    this.#checkParents(key, shown);
    return null;
  }

  open({ key, shown }) {
    return new Reader(this.#file(key, shown), () => this.#files.get(key));
  }

  listDir({ key, shown }) {
    if (this.#files.has(key)) throw FsError.notDirectory(shown);
    if (!this.#dirs.has(key)) {
      this.#checkParents(key, shown);
      throw FsError.notFound(shown);
    }
    const prefix = key === '' ? '' : `${key}/`;
    const entries = [];
    const child = (k) => k.startsWith(prefix) && k.length > prefix.length && !k.slice(prefix.length).includes('/');
    for (const k of this.#dirs.keys()) {
      if (child(k)) entries.push({ name: k.slice(prefix.length), kind: 'directory', size: 0 });
    }
    for (const [k, file] of this.#files) {
      if (child(k)) entries.push({ name: k.slice(prefix.length), kind: 'file', size: size(file) });
    }
    return entries;
  }

  replace({ key, shown }, createParents) {
    let current;
    try {
      current = this.open({ key, shown });
    } catch (e) {
      if (e.code !== 'not-found') throw e;
      const slash = key.lastIndexOf('/');
      if (!createParents && !this.#dirs.has(slash === -1 ? '' : key.slice(0, slash))) throw e;
    }
    const commit = (bytes, guard) => {
      const now = this.#files.get(key);
      if (guard.tag === 'absent' && now) throw FsError.createdMeanwhile(shown);
      if (guard.tag === 'unchanged') {
        if (!now) throw FsError.vanished(shown);
        if (meta(now).token !== guard.val) throw FsError.stale(shown);
      }
      const generation = ++this.#generation;
      if (now?.access) {
        this.#rewrite(key, now.access, bytes);
        now.generation = generation;
      } else {
        this.#files.set(key, { bytes, generation });
        for (let at = key.lastIndexOf('/'); at > 0; at = key.lastIndexOf('/', at - 1)) {
          if (!this.#dirs.has(key.slice(0, at))) this.#dirs.set(key.slice(0, at), null);
        }
      }
      return `g${generation.toString(16)}`;
    };
    const remove = (guard) => {
      const now = this.#files.get(key);
      if (!now) throw FsError.vanished(shown);
      if (guard.tag !== 'unchanged' || meta(now).token !== guard.val) throw FsError.stale(shown);
      now.access?.close();
      this.#files.delete(key);
      if (now.access) this.#removed.add(key);
    };
    return [new BufferedReplacement(commit, remove), current];
  }

  #file(key, shown) {
    const file = this.#files.get(key);
    if (file) return file;
    if (this.#dirs.has(key)) throw FsError.isDirectory(shown);
    this.#checkParents(key, shown);
    throw FsError.notFound(shown);
  }

  #checkParents(key, shown) {
    for (let at = key.lastIndexOf('/'); at > 0; at = key.lastIndexOf('/', at - 1)) {
      if (this.#files.has(key.slice(0, at))) throw FsError.parentNotDirectory(shown);
    }
  }
}

/** Writes `bytes` as the whole content behind `access`, durably. */
function overwrite(access, bytes) {
  access.truncate(0);
  for (let at = 0; at < bytes.length; ) at += access.write(bytes.subarray(at), { at });
  access.flush();
}

/** The complete record in the journal (`{ key, bytes }`), or null when there is none. */
function replay(journal) {
  const size = journal.getSize();
  if (size < 16) return null;
  const all = new Uint8Array(size);
  journal.read(all, { at: 0 });
  const view = new DataView(all.buffer);
  const nameLength = view.getUint32(0, true);
  const length = view.getFloat64(4, true);
  const end = 12 + nameLength + length;
  if (!Number.isSafeInteger(length) || end + 4 !== size || view.getUint32(end, true) !== DONE) return null;
  return { key: decoder.decode(all.subarray(12, 12 + nameLength)), bytes: all.subarray(12 + nameLength, end) };
}

function size(file) {
  return file.bytes ? file.bytes.length : file.access.getSize();
}

function meta(file) {
  return { kind: 'file', size: size(file), token: `g${file.generation.toString(16)}` };
}

/** One file as opened: its token then, read through its handle (or its bytes). */
class Reader {
  #file;
  #meta;
  #now;

  constructor(file, now) {
    this.#file = file;
    this.#meta = meta(file);
    this.#now = now;
  }

  meta() {
    return this.#meta;
  }

  read(offset, len) {
    const file = this.#file;
    if (file.bytes) return file.bytes.subarray(offset, offset + len);
    const buf = new Uint8Array(Math.max(0, Math.min(len, file.access.getSize() - offset)));
    const n = buf.length === 0 ? 0 : file.access.read(buf, { at: offset });
    return buf.subarray(0, n);
  }

  /** A replace rewrites the file in place: the generation tells. */
  tokenNow() {
    const file = this.#now();
    return file ? meta(file).token : this.#meta.token;
  }
}
