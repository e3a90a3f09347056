// NodeStore: a byte store over `node:fs`, confined to one root directory.
// Keys are canonicalized inside the root (a symbolic link that leads out is
// `sandbox-denied`); every use then walks from the root through held
// directories, never through a link (node-dir.js), so a link swapped into a
// parent after the resolve is refused rather than followed. Files are opened
// with O_NONBLOCK and O_NOFOLLOW and type-checked on the open descriptor, so
// a FIFO never blocks. A replacement is a temp file in the held directory,
// written and fsynced, checked to be still ours and still inside the root,
// then renamed over the name under a per-name lock with its guard checked
// right before (a create is a hard link, which refuses an existing name
// atomically); temp files of killed writers are never listed and are swept
// (node-aside.js). What node:fs leaves open is said in those two files.

import * as fs from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FsError } from '../error.js';
import { MIN_LEFT, startAhead } from './node-ahead.js';
import { isAside, lock, sweep, tempName } from './node-aside.js';
import { Dir, fail, lstatOf } from './node-dir.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NONBLOCK = 0, O_NOFOLLOW = 0, O_NOCTTY = 0, W_OK } = fs.constants;
const OPEN_FLAGS = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY;
const TEMP_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
/** Most bytes a copy moves at once. */
const COPY_CHUNK = 1 << 20;
/** Most links followed while resolving one path. */
const MAX_LINKS = 40;
const fatal = new TextDecoder('utf-8', { fatal: true });

/** A directory of the local disk, as a byte store. */
export class NodeStore {
  #root;
  #roots;
  /** The root's dev and ino: a root replaced after construction is refused. */
  #id;

  /**
   * The store of the directory `root` (which must exist); absolute model
   * paths are accepted under it, as given or with its links resolved.
   */
  constructor(root) {
    const given = resolve(root);
    this.#root = fs.realpathSync.native(given);
    const st = fs.statSync(this.#root, { bigint: true });
    if (!st.isDirectory()) throw new Error(`${root} is not a directory`);
    this.#id = { dev: st.dev, ino: st.ino };
    this.#roots = [...new Set([given, this.#root])];
  }

  /** The root directory, links resolved. */
  get root() {
    return this.#root;
  }

  roots() {
    return this.#roots;
  }

  /**
   * The key of `rel` with every link inside the root resolved; leaving the
   * root is refused. Only a name: each use walks the key again (`#dir`), so
   * a link swapped in after this returns is refused there.
   */
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
      const st = lstatOf(next, shown);
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
    if (key === '') {
      const root = this.#dir([], shown);
      try {
        const st = root.stat(shown);
        return { kind: 'directory', size: st.size, token: token(st) };
      } finally {
        root.close();
      }
    }
    const [parts, name] = split(key);
    let dir;
    try {
      dir = this.#dir(parts, shown);
    } catch (e) {
      if (e.code === 'not-found') return null;
      throw e;
    }
    try {
      const st = lstatOf(dir.at(name), shown);
      if (!st) return null;
      // A canonical key names no link: one swapped in since is not followed.
      if (st.isSymbolicLink()) throw FsError.sandboxDenied(shown);
      dir.check(shown);
      const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
      // The size the disk reports for any kind, as the Rust local store does.
      return { kind, size: st.size, token: token(st) };
    } finally {
      dir.close();
    }
  }

  open({ key, shown }) {
    if (key === '') throw FsError.isDirectory(shown);
    const [parts, name] = split(key);
    const dir = this.#dir(parts, shown);
    try {
      const reader = NodeReader.open(dir.at(name), shown);
      try {
        dir.check(shown);
      } catch (e) {
        reader.close();
        throw e;
      }
      return reader;
    } finally {
      dir.close();
    }
  }

  listDir({ key, shown }) {
    const dir = this.#dir(key === '' ? [] : key.split('/'), shown, { listing: true });
    try {
      let dirents;
      try {
        dirents = fs.readdirSync(dir.path, { withFileTypes: true, encoding: 'buffer' });
      } catch (e) {
        throw fail(e, shown);
      }
      dir.check(shown);
      const entries = [];
      const asides = [];
      let skipped = 0;
      for (const d of dirents) {
        let name;
        try {
          name = fatal.decode(d.name);
        } catch {
          skipped++;
          continue;
        }
        if (isAside(name)) {
          asides.push(name);
          continue;
        }
        const kind = d.isFile() ? 'file' : d.isDirectory() ? 'directory' : d.isSymbolicLink() ? 'symlink' : 'other';
        const st = lstatOf(dir.at(name), shown);
        entries.push({ name, kind, size: kind === 'file' ? (st?.size ?? 0) : 0, modified: st?.mtimeNs ?? null });
      }
      sweep(dir, asides);
      let at = 0;
      return { next: (max) => entries.slice(at, (at += Math.max(max, 1))), skipped: () => skipped };
    } finally {
      dir.close();
    }
  }

  replace({ key, shown }, createParents) {
    if (key === '') throw new FsError('not-regular-file', `${shown} is the workspace root, a directory`);
    const [parts, name] = split(key);
    const dir = this.#dir(parts, shown, { create: createParents });
    let current;
    try {
      current = NodeReader.open(dir.at(name), shown);
    } catch (e) {
      if (e.code !== 'not-found') {
        dir.close();
        throw e;
      }
    }
    return [new NodeReplacement(dir, name, shown, current), current];
  }

  /** The directory `parts` below the root, held (see node-dir.js). */
  #dir(parts, shown, options) {
    return Dir.open(this.#root, this.#id, parts, shown, options);
  }
}

/** One open regular file. */
class NodeReader {
  #fd;
  #meta;
  /** The buffer every read fills: its bytes are valid until the next read (the binding hands them
   *  to the component, which copies them at once); a fresh buffer per read cost a third of a large
   *  read's time. */
  #buf;
  /** Where the last read ended: a read there goes on with a pass from the start. */
  #next = 0;
  /** The worker's pass reading this file ahead, if any (node-ahead.js). */
  #ahead = null;

  constructor(fd, st) {
    this.#fd = fd;
    this.#meta = { kind: 'file', size: st.size, token: token(st), mode: Number(st.mode) & 0o7777 };
  }

  /** Opens the regular file at `path` without blocking on FIFOs or devices, nor following a link. */
  static open(path, shown) {
    let fd;
    try {
      fd = fs.openSync(path, OPEN_FLAGS);
    } catch (e) {
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
    if (this.#ahead !== null) {
      const bytes = this.#ahead.take(offset, len);
      if (bytes !== null) {
        this.#next = offset + bytes.length;
        return bytes;
      }
      this.#ahead = null;
    }
    const size = Number(this.#meta.size);
    const want = Math.min(len, Math.max(size - offset, 0) + 1);
    if (this.#buf === undefined || this.#buf.length < want) this.#buf = Buffer.allocUnsafe(want);
    const n = fs.readSync(this.#fd, this.#buf, 0, want, offset);
    // A pass from the start with much left to read: the worker reads on.
    const onward = offset === this.#next;
    this.#next = offset + n;
    if (onward && n === want && size - this.#next > MIN_LEFT) this.#ahead = startAhead(this.#fd, this.#next);
    return this.#buf.subarray(0, n);
  }

  tokenNow() {
    return token(fs.fstatSync(this.#fd, { bigint: true }));
  }

  /** The descriptor, for a replacement's copy. */
  get fd() {
    return this.#fd;
  }

  close() {
    // The worker reads this descriptor: its pass ends, and it is idle, before the close.
    this.#ahead?.stop();
    this.#ahead = null;
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/**
 * The new content of one name: a temp file in its held directory, renamed
 * over it at the commit. Owns the directory, closed with it.
 */
class NodeReplacement {
  #dir;
  #name;
  #shown;
  #current;
  #temp;
  #fd;

  constructor(dir, name, shown, current) {
    this.#dir = dir;
    this.#name = name;
    this.#shown = shown;
    this.#current = current;
  }

  checkWritable() {
    if (!this.#current) return;
    try {
      fs.accessSync(this.#dir.at(this.#name), W_OK);
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
    const dir = this.#dir;
    const shown = this.#shown;
    const temp = dir.at(this.#temp);
    const target = dir.at(this.#name);
    try {
      if (this.#current) fs.fchmodSync(fd, this.#current.meta().mode);
      fs.fsyncSync(fd);
    } catch (e) {
      throw fail(e, shown);
    }
    this.#checkTemp(fd);
    if (guard.tag === 'absent') {
      // A hard link refuses an existing name: the create is atomic.
      try {
        fs.linkSync(temp, target);
      } catch (e) {
        throw e.code === 'EEXIST' ? FsError.createdMeanwhile(shown) : fail(e, shown);
      }
      // The temp name goes before the token is taken: dropping the second
      // link changes the file's ctime, and a read must see the token the
      // commit returns. The file is created either way; close() retries.
      try {
        fs.unlinkSync(temp);
        this.#temp = undefined;
      } catch {
        // Left for close().
      }
    } else {
      // Another NodeStore's commit of this name waits here, so the guard
      // checked below still holds at the rename, unless a writer that takes
      // no lock changes the file in the two system calls between.
      const release = guard.tag === 'unchanged' ? lock(dir, this.#name, shown) : undefined;
      try {
        if (guard.tag === 'unchanged') {
          const now = lstatOf(target, shown);
          if (!now) throw FsError.vanished(shown);
          if (token(now) !== guard.val) throw FsError.stale(shown);
        }
        dir.check(shown);
        try {
          fs.renameSync(temp, target);
        } catch (e) {
          throw fail(e, shown);
        }
        this.#temp = undefined;
      } finally {
        release?.();
      }
    }
    dir.sync();
    sweep(dir);
    // The file put in place, whatever may since have replaced it.
    return token(fs.fstatSync(fd, { bigint: true }));
  }

  /**
   * Removes the file if `guard` holds, under the same per-name lock as the
   * commits of NodeStores (a writer that takes none is caught only by the
   * check right before the unlink).
   */
  remove(guard) {
    const dir = this.#dir;
    const shown = this.#shown;
    const target = dir.at(this.#name);
    const release = lock(dir, this.#name, shown);
    try {
      const now = lstatOf(target, shown);
      if (!now) throw FsError.vanished(shown);
      if (guard.tag !== 'unchanged' || token(now) !== guard.val) throw FsError.stale(shown);
      dir.check(shown);
      try {
        fs.unlinkSync(target);
      } catch (e) {
        throw fail(e, shown);
      }
    } finally {
      release();
    }
    dir.sync();
  }

  /** Closes the temp file, removes it if it was not renamed, and lets the directory go. */
  close() {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    if (this.#temp !== undefined && this.#dir) fs.rmSync(this.#dir.at(this.#temp), { force: true });
    this.#dir?.close();
    this.#current = this.#fd = this.#temp = this.#dir = undefined;
  }

  /**
   * `sandbox-denied` unless the temp name still holds the file written and
   * its directory is still inside the root.
   */
  #checkTemp(fd) {
    const shown = this.#shown;
    const named = lstatOf(this.#dir.at(this.#temp), shown);
    const mine = fs.fstatSync(fd, { bigint: true });
    if (!named || named.ino !== mine.ino || named.dev !== mine.dev) {
      throw new FsError('sandbox-denied', `the temporary file for ${shown} was replaced by another process; nothing was changed`);
    }
    this.#dir.check(shown);
  }

  /** The temp file, created on first use with the mode of the file it replaces. */
  #file() {
    if (this.#fd === undefined) {
      const temp = tempName(this.#name);
      try {
        this.#fd = fs.openSync(this.#dir.at(temp), TEMP_FLAGS, this.#current?.meta().mode ?? 0o666);
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

/** A key's parent names and its last name. */
function split(key) {
  const parts = key.split('/');
  const name = parts.pop();
  return [parts, name];
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
