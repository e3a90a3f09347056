// OpfsStore: a byte store over a directory of the browser's Origin Private
// File System, for a dedicated worker (the only place synchronous access
// handles exist). The component calls a store synchronously, but OPFS can
// open, create and list only asynchronously, so `OpfsStore.open` walks the
// directory once and keeps every file's FileSystemSyncAccessHandle open
// (exclusive: no other tab or worker touches these files meanwhile, and
// tokens are generations this store counts). Reads and replaces of
// existing files then run on the handles, synchronously; a file created
// during a call is held in memory until `settle()`, which the worker awaits
// after each call, creates it (with its parents) on disk.
//
// A replace rewrites the file in place through its handle (truncate, write,
// flush): no other context can see it half-written, but a crash of the
// browser during those few writes can leave it torn.

import { FsError } from '../error.js';

/** The store of one OPFS directory; `await OpfsStore.open(directoryHandle)`. */
export class OpfsStore {
  #root;
  #dir;
  /** key -> { access, generation } on disk, or { bytes, generation } until settled. */
  #files = new Map();
  /** key -> FileSystemDirectoryHandle, or null until settled. */
  #dirs = new Map();
  #generation = 0;

  constructor(dir, root) {
    this.#dir = dir;
    this.#root = root;
    this.#dirs.set('', dir);
  }

  /** Opens the store of `dir`, taking every file's access handle; absolute paths live under `root`. */
  static async open(dir, { root = '/workspace' } = {}) {
    const store = new OpfsStore(dir, root);
    await store.#walk(dir, '');
    return store;
  }

  async #walk(dir, prefix) {
    for await (const [name, handle] of dir.entries()) {
      const key = prefix + name;
      if (handle.kind === 'directory') {
        this.#dirs.set(key, handle);
        await this.#walk(handle, `${key}/`);
      } else {
        this.#files.set(key, { access: await handle.createSyncAccessHandle(), generation: ++this.#generation });
      }
    }
  }

  /** Puts on disk what this call created; awaited between calls. */
  async settle() {
    for (const [key, file] of this.#files) {
      if (!file.bytes) continue;
      const slash = key.lastIndexOf('/');
      const parent = await this.#directory(slash === -1 ? '' : key.slice(0, slash));
      const handle = await parent.getFileHandle(key.slice(slash + 1), { create: true });
      const access = await handle.createSyncAccessHandle();
      access.truncate(0);
      access.write(file.bytes, { at: 0 });
      access.flush();
      this.#files.set(key, { access, generation: file.generation });
    }
  }

  /** Releases every access handle: the files are free for other contexts again. */
  close() {
    for (const file of this.#files.values()) file.access?.close();
    this.#files.clear();
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

  stat({ key }) {
    const file = this.#files.get(key);
    if (file) return meta(file);
    return this.#dirs.has(key) ? { kind: 'directory', size: null, token: 'dir' } : null;
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
        now.access.truncate(0);
        now.access.write(bytes, { at: 0 });
        now.access.flush();
        now.generation = generation;
      } else {
        this.#files.set(key, { bytes, generation });
        for (let at = key.lastIndexOf('/'); at > 0; at = key.lastIndexOf('/', at - 1)) {
          if (!this.#dirs.has(key.slice(0, at))) this.#dirs.set(key.slice(0, at), null);
        }
      }
      return `g${generation.toString(16)}`;
    };
    return [new Replacement(commit), current];
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

/** The new content of one name: chunks, joined at the commit. */
class Replacement {
  #chunks = [];
  #commit;

  constructor(commit) {
    this.#commit = commit;
  }

  write(bytes) {
    this.#chunks.push(bytes.slice());
  }

  commit(guard) {
    const bytes = new Uint8Array(this.#chunks.reduce((n, c) => n + c.length, 0));
    this.#chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
    return this.#commit(bytes, guard);
  }
}
