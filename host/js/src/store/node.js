// NodeStore: a byte store over `node:fs`, confined to one root directory.
// Paths are canonicalized inside the root (a symbolic link that leads out is
// `sandbox-denied`); files are opened with O_NONBLOCK and type-checked on the
// open descriptor, so a FIFO never blocks; a replacement is a temp file in
// the same directory, written, fsynced and renamed over the name right after
// its guard is checked (a create is a hard link, which refuses an existing
// name atomically). node:fs has no directory locks and no `openat`: two
// writers of one name may interleave between the guard check and the
// rename, and a link swapped into a parent between a resolve and an open is
// caught only for the last component (O_NOFOLLOW).

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FsError } from '../error.js';

const { O_RDONLY, O_NONBLOCK = 0, O_NOFOLLOW = 0, O_NOCTTY = 0, W_OK } = fs.constants;
const OPEN_FLAGS = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY;
/** Most bytes a copy moves at once. */
const COPY_CHUNK = 1 << 20;
/** Most links followed while resolving one path. */
const MAX_LINKS = 40;
const fatal = new TextDecoder('utf-8', { fatal: true });

/** A directory of the local disk, as a byte store. */
export class NodeStore {
  #root;
  #roots;

  /**
   * The store of the directory `root` (which must exist); absolute model
   * paths are accepted under it, as given or with its links resolved.
   */
  constructor(root) {
    const given = resolve(root);
    this.#root = fs.realpathSync.native(given);
    if (!fs.statSync(this.#root).isDirectory()) throw new Error(`${root} is not a directory`);
    this.#roots = [...new Set([given, this.#root])];
  }

  /** The root directory, links resolved. */
  get root() {
    return this.#root;
  }

  roots() {
    return this.#roots;
  }

  /** The key of `rel` with every link inside the root resolved; leaving the root is refused. */
  identity(rel, shown) {
    let real = this.#root;
    const pending = rel === '' ? [] : rel.split('/');
    for (let links = 0; pending.length > 0; ) {
      const part = pending.shift();
      if (part === '.' || part === '') continue;
      if (part === '..') {
        if (real === this.#root) throw FsError.sandboxDenied(shown);
        real = dirname(real);
        continue;
      }
      const next = join(real, part);
      const st = lstat(next, shown);
      if (!st?.isSymbolicLink()) {
        real = next;
        if (!st) return keyOf(relative(this.#root, real), pending);
        continue;
      }
      if (++links > MAX_LINKS) {
        throw new FsError('invalid-input', `${shown} goes through a symbolic link loop`);
      }
      const target = fs.readlinkSync(next);
      if (target.startsWith('/')) {
        const inside = relative(this.#root, target);
        if (inside.startsWith('..') || inside.startsWith(sep)) throw FsError.sandboxDenied(shown);
        real = this.#root;
        pending.unshift(...inside.split(sep));
      } else {
        pending.unshift(...target.split(sep));
      }
    }
    return relative(this.#root, real).split(sep).join('/');
  }

  stat({ key, shown }) {
    let st;
    try {
      st = fs.statSync(this.#path(key), { bigint: true, throwIfNoEntry: false });
    } catch (e) {
      // Below a file is `not-directory`, as on the Rust disk stores.
      throw fail(e, shown);
    }
    if (!st) return null;
    const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
    // The size the disk reports for any kind, as the Rust local store does.
    return { kind, size: st.size, token: token(st) };
  }

  open({ key, shown }) {
    return NodeReader.open(this.#path(key), shown);
  }

  listDir({ key, shown }) {
    const dir = this.#path(key);
    let dirents;
    try {
      dirents = fs.readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch (e) {
      if (e.code === 'ENOTDIR') {
        throw lstat(dir, shown) ? FsError.notDirectory(shown) : FsError.parentNotDirectory(shown);
      }
      throw fail(e, shown);
    }
    const entries = [];
    let skipped = 0;
    for (const d of dirents) {
      let name;
      try {
        name = fatal.decode(d.name);
      } catch {
        skipped++;
        continue;
      }
      const kind = d.isFile() ? 'file' : d.isDirectory() ? 'directory' : d.isSymbolicLink() ? 'symlink' : 'other';
      const st = fs.lstatSync(join(dir, name), { bigint: true, throwIfNoEntry: false });
      entries.push({ name, kind, size: kind === 'file' ? (st?.size ?? 0) : 0, modified: st?.mtimeNs ?? null });
    }
    let at = 0;
    return { next: (max) => entries.slice(at, (at += Math.max(max, 1))), skipped: () => skipped };
  }

  replace({ key, shown }, createParents) {
    if (key === '') throw new FsError('not-regular-file', `${shown} is the workspace root, a directory`);
    const path = this.#path(key);
    const dir = dirname(path);
    if (createParents) {
      try {
        fs.mkdirSync(dir, { recursive: true });
      } catch (e) {
        throw ['ENOTDIR', 'EEXIST'].includes(e.code) ? FsError.parentNotDirectory(shown) : fail(e, shown);
      }
    } else if (!lstat(dir, shown)) {
      throw FsError.notFound(shown);
    }
    let current;
    try {
      current = NodeReader.open(path, shown);
    } catch (e) {
      if (e.code !== 'not-found') throw e;
    }
    return [new NodeReplacement(path, shown, current), current];
  }

  /** The absolute path of a key. */
  #path(key) {
    return key === '' ? this.#root : join(this.#root, ...key.split('/'));
  }
}

/** One open regular file. */
class NodeReader {
  #fd;
  #meta;

  constructor(fd, st) {
    this.#fd = fd;
    this.#meta = { kind: 'file', size: st.size, token: token(st), mode: Number(st.mode) & 0o7777 };
  }

  /** Opens the regular file at `path` without blocking on FIFOs or devices. */
  static open(path, shown) {
    let fd;
    try {
      fd = fs.openSync(path, OPEN_FLAGS);
    } catch (e) {
      if (e.code === 'ELOOP') throw FsError.sandboxDenied(shown);
      throw fail(e, shown);
    }
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) {
      fs.closeSync(fd);
      if (st.isDirectory()) throw FsError.isDirectory(shown);
      throw new FsError('not-regular-file', `${shown} is not a regular file (FIFO, socket or device)`);
    }
    if (st.nlink > 1n) {
      fs.closeSync(fd);
      throw new FsError(
        'sandbox-denied',
        `${shown} has ${st.nlink} hard links, and a linked copy may lie outside the workspace`,
      );
    }
    return new NodeReader(fd, st);
  }

  meta() {
    return this.#meta;
  }

  read(offset, len) {
    const buf = Buffer.allocUnsafe(Math.min(len, Math.max(Number(this.#meta.size) - offset, 0) + 1));
    const n = fs.readSync(this.#fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n);
  }

  tokenNow() {
    return token(fs.fstatSync(this.#fd, { bigint: true }));
  }

  /** The descriptor, for a replacement's copy. */
  get fd() {
    return this.#fd;
  }

  close() {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** The new content of one name: a temp file beside it, renamed over it at the commit. */
class NodeReplacement {
  #path;
  #shown;
  #current;
  #temp;
  #fd;

  constructor(path, shown, current) {
    this.#path = path;
    this.#shown = shown;
    this.#current = current;
  }

  checkWritable() {
    if (!this.#current) return;
    try {
      fs.accessSync(this.#path, W_OK);
    } catch (e) {
      if (e.code === 'EACCES' || e.code === 'EPERM') {
        throw new FsError('permission-denied', `${this.#shown} is write-protected; nothing was changed`);
      }
      throw fail(e, this.#shown);
    }
  }

  write(bytes) {
    const fd = this.#file();
    for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at, bytes.length - at);
  }

  copy(offset, len) {
    const buf = Buffer.allocUnsafe(Math.min(len, COPY_CHUNK));
    for (let at = offset, end = offset + len; at < end; ) {
      const n = fs.readSync(this.#current.fd, buf, 0, Math.min(buf.length, end - at), at);
      if (n === 0) break;
      this.write(buf.subarray(0, n));
      at += n;
    }
  }

  commit(guard) {
    const fd = this.#file();
    const shown = this.#shown;
    try {
      if (this.#current) fs.fchmodSync(fd, this.#current.meta().mode);
      fs.fsyncSync(fd);
    } catch (e) {
      throw fail(e, shown);
    }
    if (guard.tag === 'absent') {
      // A hard link refuses an existing name: the create is atomic.
      try {
        fs.linkSync(this.#temp, this.#path);
      } catch (e) {
        throw e.code === 'EEXIST' ? FsError.createdMeanwhile(shown) : fail(e, shown);
      }
      // The temp name goes before the token is taken: dropping the second
      // link changes the file's ctime, and a read must see the token the
      // commit returns. The file is created either way; close() retries.
      try {
        fs.unlinkSync(this.#temp);
        this.#temp = undefined;
      } catch {
        // Left for close().
      }
    } else {
      if (guard.tag === 'unchanged') {
        const now = lstat(this.#path, shown);
        if (!now) throw FsError.vanished(shown);
        if (token(now) !== guard.val) throw FsError.stale(shown);
      }
      try {
        fs.renameSync(this.#temp, this.#path);
      } catch (e) {
        throw fail(e, shown);
      }
      this.#temp = undefined;
    }
    syncDir(dirname(this.#path));
    return token(lstat(this.#path, shown));
  }

  /** Closes the temp file and removes it if it was not renamed. */
  close() {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    if (this.#temp !== undefined) fs.rmSync(this.#temp, { force: true });
    this.#fd = this.#temp = undefined;
  }

  /** The temp file, created on first use with the mode of the file it replaces. */
  #file() {
    if (this.#fd === undefined) {
      const name = this.#path.slice(dirname(this.#path).length + 1).slice(0, 200);
      const temp = join(dirname(this.#path), `.${name}.dsh-fs-${randomBytes(8).toString('hex')}.tmp`);
      try {
        this.#fd = fs.openSync(temp, 'wx', this.#current?.meta().mode ?? 0o666);
      } catch (e) {
        throw fail(e, this.#shown);
      }
      this.#temp = temp;
    }
    return this.#fd;
  }
}

/** Metadata that changes whenever the bytes may have: inode, size, mtime, ctime. */
function token(st) {
  return [st.ino, st.size, st.mtimeNs, st.ctimeNs].map((n) => n.toString(16)).join('.');
}

/** `lstat`, or undefined when nothing is there. */
function lstat(path, shown) {
  try {
    return fs.lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (e) {
    if (e.code === 'ENOTDIR') return undefined;
    throw fail(e, shown);
  }
}

/** The key of a path inside the root that does not exist yet: its real part, then the rest. */
function keyOf(real, rest) {
  const parts = real === '' ? [] : real.split(sep);
  for (const part of rest) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}

/** Makes a rename in `dir` durable. */
function syncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, O_RDONLY);
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems cannot sync a directory; the rename itself is done.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A node:fs error as the store's error. */
function fail(e, shown) {
  switch (e.code) {
    case 'ENOENT':
      return FsError.notFound(shown);
    case 'EACCES':
    case 'EPERM':
      return new FsError('permission-denied', `access to ${shown} was denied`);
    case 'ENOTDIR':
      return FsError.parentNotDirectory(shown);
    case 'EISDIR':
      return FsError.isDirectory(shown);
    case 'ENAMETOOLONG':
      return new FsError('invalid-input', `${shown}: a name is too long`);
    case 'EROFS':
      return new FsError('permission-denied', `${shown} is on a read-only filesystem`);
    case 'ENOSPC':
      return new FsError('io-error', `no space left to write ${shown}`);
    default:
      return new FsError('io-error', `${shown}: ${e.message}`);
  }
}
