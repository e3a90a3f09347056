// The directories a NodeStore works in, held open while it uses them: a
// key's directory is opened from the root one name at a time, each relative
// to the directory opened before it and never through a symbolic link, and
// every later name (the file read, the temp file, the lock, the rename) is
// looked up in the held directory itself. node:fs has no `openat`; on Linux
// the path `/proc/self/fd/N/name` stands in for it, since the kernel
// resolves `/proc/self/fd/N` to the directory open as N, whatever its path
// has become. A link swapped into a parent is then never followed.
//
// What remains racy with node:fs:
// - A neighbour who *moves* a held directory out of the root (a rename on
//   the same filesystem, rather than a link swapped in) takes our next
//   operation in it along, as a held `openat` handle would. `check` reads
//   the directory's current path back from /proc before each read and
//   commit, so only a move in the one or two system calls between the check
//   and the operation goes unseen.
// - `NodeStore.identity` resolves by path: through a parent swapped for a
//   link it may lstat and readlink outside the root (metadata, never
//   content); the key it returns is walked again here, so nothing is opened.
// - Without /proc (macOS, Windows) directories are reached by path, each
//   name checked with lstat and the whole with realpath: a link swapped into
//   a parent between that check and the operation is followed.

import * as fs from 'node:fs';
import { join, sep } from 'node:path';
import { FsError } from '../error.js';

const { O_RDONLY, O_DIRECTORY = 0, O_NOFOLLOW = 0 } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** Whether `/proc/self/fd/N/name` reaches `name` in the directory open as N. */
export const HELD = (() => {
  let fd;
  try {
    fd = fs.openSync('/', DIR_FLAGS);
    const via = fs.statSync(`/proc/self/fd/${fd}/.`);
    const st = fs.fstatSync(fd);
    return via.ino === st.ino && via.dev === st.dev;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
})();

/** One directory inside the root, open (with /proc) or checked by path (without). */
export class Dir {
  #fd;
  #path;
  #root;

  constructor(fd, path, root) {
    this.#fd = fd;
    this.#path = path;
    this.#root = root;
  }

  /**
   * Opens the directory `parts` (names, no `.` or `..`) below `root`, an
   * absolute real path whose dev and ino are `id`; a name that is a link is
   * `sandbox-denied` (keys are canonical: a link there was swapped in after
   * the resolve). Missing directories are made when `create`. `listing`:
   * `parts` is the directory listed, so a file at its end is `not-directory`
   * for itself rather than for a parent.
   */
  static open(root, id, parts, shown, { create = false, listing = false } = {}) {
    if (!HELD) return Dir.#byPath(root, parts, shown, create, listing);
    let fd;
    try {
      fd = fs.openSync(root, DIR_FLAGS);
    } catch (e) {
      throw fail(e, shown);
    }
    const st = fs.fstatSync(fd, { bigint: true });
    if (st.dev !== id.dev || st.ino !== id.ino) {
      fs.closeSync(fd);
      throw new FsError('sandbox-denied', `the workspace root was replaced; ${shown} was not reached`);
    }
    for (let i = 0; i < parts.length; i++) {
      const base = `/proc/self/fd/${fd}`;
      const name = parts[i];
      let next;
      try {
        checkName(name, shown);
        next = openChild(base, name, shown, create, listing && i === parts.length - 1);
      } finally {
        fs.closeSync(fd);
      }
      fd = next;
    }
    return new Dir(fd, undefined, root);
  }

  /** Without /proc: each name checked with lstat, the result with realpath. */
  static #byPath(root, parts, shown, create, listing) {
    let path = root;
    for (let i = 0; i < parts.length; i++) {
      checkName(parts[i], shown);
      path = join(path, parts[i]);
      let st = lstatOf(path, shown);
      if (!st && create) {
        try {
          fs.mkdirSync(path);
        } catch (e) {
          if (e.code !== 'EEXIST') throw fail(e, shown);
        }
        st = lstatOf(path, shown);
      }
      if (!st) throw FsError.notFound(shown);
      if (st.isSymbolicLink()) throw FsError.sandboxDenied(shown);
      if (!st.isDirectory()) {
        throw listing && i === parts.length - 1 ? FsError.notDirectory(shown) : FsError.parentNotDirectory(shown);
      }
    }
    const dir = new Dir(undefined, path, root);
    dir.check(shown);
    return dir;
  }

  /** The path of `name` in this directory. */
  at(name) {
    return this.#fd === undefined ? join(this.#path, name) : `/proc/self/fd/${this.#fd}/${name}`;
  }

  /** The path of this directory itself (to list it). */
  get path() {
    return this.#fd === undefined ? this.#path : `/proc/self/fd/${this.#fd}`;
  }

  /** `sandbox-denied` unless this directory is still inside the root. */
  check(shown) {
    let now;
    try {
      now = this.#fd === undefined ? fs.realpathSync.native(this.#path) : fs.readlinkSync(this.path);
    } catch (e) {
      throw fail(e, shown);
    }
    const prefix = this.#root.endsWith(sep) ? this.#root : this.#root + sep;
    const inside = this.#fd === undefined ? now === this.#path : now === this.#root || now.startsWith(prefix);
    if (!inside) {
      throw new FsError('sandbox-denied', `a directory of ${shown} was moved out of the workspace; nothing was done`);
    }
  }

  /** Makes a rename in this directory durable. */
  sync() {
    let fd = this.#fd;
    try {
      fd ??= fs.openSync(this.#path, O_RDONLY);
      fs.fsyncSync(fd);
    } catch {
      // Some filesystems cannot sync a directory; the rename itself is done.
    } finally {
      if (this.#fd === undefined && fd !== undefined) fs.closeSync(fd);
    }
  }

  /** Its own metadata (bigint). */
  stat(shown) {
    try {
      return this.#fd === undefined ? fs.lstatSync(this.#path, { bigint: true }) : fs.fstatSync(this.#fd, { bigint: true });
    } catch (e) {
      throw fail(e, shown);
    }
  }

  close() {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
    this.#path = undefined;
  }
}

/** Opens the directory `name` in the held directory `base`, never through a link. */
function openChild(base, name, shown, create, listed) {
  const path = `${base}/${name}`;
  for (let made = false; ; made = true) {
    try {
      return fs.openSync(path, DIR_FLAGS);
    } catch (e) {
      if (e.code === 'ENOENT' && create && !made) {
        try {
          fs.mkdirSync(path);
        } catch (e) {
          if (e.code !== 'EEXIST') throw fail(e, shown);
        }
        continue;
      }
      if (e.code === 'ELOOP') throw FsError.sandboxDenied(shown);
      if (e.code !== 'ENOTDIR') throw fail(e, shown);
      // O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a link too.
      const st = lstatOf(path, shown);
      if (st?.isSymbolicLink()) throw FsError.sandboxDenied(shown);
      throw listed && st ? FsError.notDirectory(shown) : FsError.parentNotDirectory(shown);
    }
  }
}

/** Keys are canonical: a name that could step elsewhere is a bug or an attack. */
function checkName(name, shown) {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes(sep)) {
    throw FsError.sandboxDenied(shown);
  }
}

/** `lstat` (bigint), or undefined when nothing is there. */
export function lstatOf(path, shown) {
  try {
    return fs.lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (e) {
    if (e.code === 'ENOTDIR') return undefined;
    throw fail(e, shown);
  }
}

/** A node:fs error as the store's error. */
export function fail(e, shown) {
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
    case 'ELOOP':
      return FsError.sandboxDenied(shown);
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
