// What a NodeStore keeps beside a file while replacing it: the temp file the
// new content goes to (`.NAME.dsh-fs-HOST-PID-NONCE.tmp`) and the lock its
// commit takes (`.NAME.dsh-fs.lock`, a symbolic link whose target names the
// holder, made in one step). Listings never show either (nor the Rust local
// store's `.NAME.dsh-fs-NONCE.tmp`); one whose process is gone is removed by
// the next listing in its directory, or the next commit there.
//
// What remains with node:fs (no `flock`, no `O_TMPFILE` with `linkat`, no
// `RENAME_EXCHANGE`):
// - The lock serialises commits by NodeStores only. The Rust local store
//   locks the directory with `flock`, which this is not; a writer that takes
//   no lock at all (an editor) is seen only by the guard checked right
//   before the rename, and a save of its in the two system calls between is
//   overwritten (the Rust store exchanges and puts such a save back).
// - A process is judged gone by its pid, on the machine its HOST tag names;
//   a live holder in another pid namespace of the same host name would be
//   judged gone (its temp file removed: its commit fails; its lock broken:
//   two commits may overlap). Others' entries only age out (FOREIGN_STALE_MS).
// - The new content has a name from its first byte, so a kill leaves a
//   visible file until the next sweep (never listed meanwhile).

import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { FsError } from '../error.js';
import { fail, lstatOf } from './node-dir.js';

/** This machine, as temp and lock names carry it: a pid means something only here. */
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
/** Longest part of the file's name a temp or lock name repeats, in UTF-8 bytes (NAME_MAX is 255). */
const NAME_BYTES = 180;
/** How long a commit waits for the lock of its name. */
const LOCK_WAIT_MS = 10_000;
/** A lock older than this is stale even if its process seems alive (the pid was reused). */
const LOCK_STALE_MS = 30_000;
/** A temp or lock of another machine (or of the Rust store) is stale after this long unchanged. */
const FOREIGN_STALE_MS = 60 * 60_000;
/** A commit sweeps its directory at most this often (a listing always does). */
const SWEEP_EVERY_MS = 10_000;

const TEMP = /^\.[^]+\.dsh-fs-(?:([0-9a-f]{8})-(\d+)-[0-9a-f]{12}|[0-9a-f]{16})\.tmp$/u;
const LOCK = /^\.[^]+\.dsh-fs\.lock$/u;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** When each directory (dev:ino) was last swept by a commit. */
const swept = new Map();

/** Whether `name` is a temp file or a lock of a dsh-fs store, never shown. */
export function isAside(name) {
  return TEMP.test(name) || LOCK.test(name);
}

/** A fresh temp name beside `name`. */
export function tempName(name) {
  return `.${cut(name)}.dsh-fs-${HOST}-${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Takes the lock on `name` in `dir`, waiting up to LOCK_WAIT_MS (then
 * `busy`); returns the function that releases it. A lock whose process is
 * gone is broken.
 */
export function lock(dir, name, shown) {
  const at = dir.at(lockName(name));
  const mine = `${HOST}-${process.pid}-${randomBytes(6).toString('hex')}`;
  const until = Date.now() + LOCK_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    if (take(at, mine, shown)) return () => release(at, mine);
    const broken = breakIfStale(dir, lockName(name));
    const left = until - Date.now();
    if (left <= 0) {
      throw new FsError('busy', `another process holds the lock on ${shown}; nothing was changed`);
    }
    if (!broken) Atomics.wait(sleeper, 0, 0, Math.min(pause, left));
  }
}

/**
 * Makes the lock `at` naming `mine`, or false when it exists: a symbolic
 * link (name and holder in one step), or where links cannot be made (Windows
 * without the privilege, FAT) a file made with O_EXCL, its holder written
 * after (a holder killed in between leaves a lock that only ages out).
 */
function take(at, mine, shown) {
  try {
    fs.symlinkSync(mine, at);
    return true;
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    if (e.code !== 'EPERM' && e.code !== 'ENOTSUP' && e.code !== 'ENOSYS') throw fail(e, shown);
  }
  let fd;
  try {
    fd = fs.openSync(at, 'wx');
    fs.writeSync(fd, mine);
    return true;
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    throw fail(e, shown);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Who holds the lock `at` (see `take`), or undefined when there is none. */
function holderOf(at) {
  try {
    return fs.readlinkSync(at);
  } catch (e) {
    if (e.code !== 'EINVAL' && e.code !== 'UNKNOWN') return undefined;
  }
  try {
    return fs.readFileSync(at, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Removes the temp files and locks in `dir` whose process is gone; `names`
 * are its entries (listed already), or undefined to list it here, at most
 * once per SWEEP_EVERY_MS per directory.
 */
export function sweep(dir, names) {
  try {
    if (names === undefined) {
      const st = dir.stat('');
      const id = `${st.dev}:${st.ino}`;
      const now = Date.now();
      if (now - (swept.get(id) ?? 0) < SWEEP_EVERY_MS) return;
      if (swept.size >= 1024) swept.clear();
      swept.set(id, now);
      names = fs.readdirSync(dir.path);
    }
    names.forEach((name) => sweepOne(dir, name));
  } catch {
    // A sweep is housekeeping: the call it rides on has succeeded.
  }
}

/** Removes the temp file or lock `name` of `dir` if its process is gone. */
function sweepOne(dir, name) {
  if (LOCK.test(name)) {
    breakIfStale(dir, name);
    return;
  }
  const m = TEMP.exec(name);
  if (!m) return;
  const at = dir.at(name);
  const stale = m[1] === HOST ? !alive(Number(m[2])) : age(at) > FOREIGN_STALE_MS;
  if (stale) unlink(at);
}

/** The lock name of `name`. */
function lockName(name) {
  return `.${cut(name)}.dsh-fs.lock`;
}

/** Drops the lock `at` if it is still the one this call took. */
function release(at, mine) {
  if (holderOf(at) === mine) unlink(at);
}

/**
 * Removes the lock `name` in `dir` if its holder is gone or it is older
 * than LOCK_STALE_MS; true when it did, or the lock is gone. The lock is
 * first moved to a temp name and checked to be the one judged stale: two
 * processes breaking one lock never remove a fresh one, though if a fresh
 * lock was moved it is put back only when its name is still free.
 */
function breakIfStale(dir, name) {
  const at = dir.at(name);
  const holder = holderOf(at);
  if (holder === undefined) return !lstatOf(at, '');
  const [host, pid] = holder.split('-');
  const stale =
    (host === HOST && pid !== undefined && !alive(Number(pid))) ||
    age(at) > (host === HOST || holder === '' ? LOCK_STALE_MS : FOREIGN_STALE_MS);
  if (!stale) return false;
  const aside = dir.at(tempName(name.slice(1, -'.dsh-fs.lock'.length)));
  try {
    fs.renameSync(at, aside);
  } catch {
    return true;
  }
  try {
    if (holderOf(aside) !== holder) fs.linkSync(aside, at);
  } catch {
    // Taken anew meanwhile: its holder's release finds it is not theirs.
  }
  unlink(aside);
  return true;
}

/** Whether the process `pid` of this machine exists. */
function alive(pid) {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Milliseconds since `at` last changed (0 when it is gone). */
function age(at) {
  const st = lstatOf(at, '');
  return st ? Date.now() - Number(st.mtimeMs) : 0;
}

function unlink(at) {
  try {
    fs.unlinkSync(at);
  } catch {
    // Gone already.
  }
}

/** `name` cut to NAME_BYTES of UTF-8, at a character boundary. */
function cut(name) {
  let bytes = 0;
  let end = 0;
  for (const ch of name) {
    bytes += Buffer.byteLength(ch);
    if (bytes > NAME_BYTES) break;
    end += ch.length;
  }
  return name.slice(0, end);
}
