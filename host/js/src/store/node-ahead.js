// Reading ahead while a large file is read from start to end: a worker thread
// `pread`s the next blocks while the component decodes and scans the last
// one, so the kernel's copy (two fifths of a first read of a large file in
// Node) runs on another core instead of before that work. The Rust local
// store does the same with a thread (stores/local/src/ahead.rs).
//
// Only bytes move to the worker: what they mean, their hash and the version
// stay the component's, in order, as without it. One worker serves the
// process, one pass at a time, through a ring of blocks in shared memory; it
// is started by the first pass that wants it, and until it is up, and for
// every other reader meanwhile, reads stay on the caller's thread. It reads
// the caller's descriptor (threads share them), so a pass is always stopped,
// and the worker seen idle, before that descriptor is closed. The worker
// holds no event loop open: a process exits as if it were not there.

import { Worker } from 'node:worker_threads';

/** Bytes the worker reads at a time: the component's stream chunk. */
const BLOCK = 256 << 10;
/** Blocks in the ring: the one the caller is taking from and up to seven read ahead. */
const SLOTS = 8;
/**
 * Free blocks a full ring waits for before the worker reads on: it is woken
 * once per four blocks rather than for each, and the caller still has four
 * read ahead while it wakes.
 */
const REFILL = 4;
/** Most bytes a pass reads ahead of what the caller has taken; for tests. */
export const AHEAD_BYTES = SLOTS * BLOCK;
/**
 * Bytes left below which no pass starts: a short rest is not worth the
 * hand-offs (a 1 MiB file is read whole in well under a millisecond).
 */
export const MIN_LEFT = 2 << 20;

// The control words shared with the worker (Int32 indices).
/** 1 once the worker waits for passes. */
const READY = 0;
/** 1 while a pass runs; the worker sets it back to 0 when it stops. */
const STATE = 1;
/** Set by the caller to end the pass. */
const STOP = 2;
/** Bumped by the caller at each block released and at a stop: the worker waits on it. */
const TICK = 3;
/** Blocks the caller has released. */
const RELEASED = 4;
/** Blocks the worker has read: the caller waits on it. */
const READ = 5;
/** The descriptor of the pass. */
const FD = 6;
/** While the worker waits for slots to be released, the count of released blocks it waits for; else 0. */
const WAITING = 7;
/** Bytes read into each slot (one word per slot), -1 for a failed read. */
const LENGTH = 8;
/** 1 once the worker has ended (it never should): every wait gives up. After the lengths. */
const GONE = LENGTH + SLOTS;
/** Float64 index of the pass's first offset, after the Int32 words. */
const START = Math.ceil((GONE + 1) / 2);
const CONTROL_BYTES = (START + 1) * 8;
/**
 * Longest single wait on the worker: a wake-up it sends is never missed, but
 * a worker that ended between the check and the wait is seen at the next try.
 */
const PATIENCE_MS = 50;

// The worker: waits for a pass, then fills free slots in order until the
// file ends, a read fails or the caller stops it.
const WORKER = `
const { workerData } = require('node:worker_threads');
const { readSync } = require('node:fs');
const { BLOCK, SLOTS, REFILL, READY, STATE, STOP, TICK, RELEASED, READ, FD, WAITING, LENGTH, GONE, START } = workerData.at;
const ctl = new Int32Array(workerData.control);
const start = new Float64Array(workerData.control);
const blocks = new Uint8Array(workerData.blocks);
Atomics.store(ctl, READY, 1);
try {
  for (;;) {
    while (Atomics.load(ctl, STATE) !== 1) Atomics.wait(ctl, STATE, 0);
    const fd = ctl[FD];
    let offset = start[START];
    for (let i = 0; ; ) {
      const tick = Atomics.load(ctl, TICK);
      if (Atomics.load(ctl, STOP) === 1) break;
      if (i - Atomics.load(ctl, RELEASED) >= SLOTS) {
        // A release after \`tick\` was read ends the wait at once: none is missed.
        Atomics.store(ctl, WAITING, i - SLOTS + REFILL);
        Atomics.wait(ctl, TICK, tick);
        Atomics.store(ctl, WAITING, 0);
        continue;
      }
      const slot = i % SLOTS;
      let n;
      try {
        n = readSync(fd, blocks, slot * BLOCK, BLOCK, offset);
      } catch {
        n = -1;
      }
      ctl[LENGTH + slot] = n;
      Atomics.store(ctl, READ, ++i);
      Atomics.notify(ctl, READ);
      if (n < BLOCK) break;
      offset += n;
    }
    Atomics.store(ctl, STATE, 0);
    Atomics.notify(ctl, STATE);
  }
} finally {
  Atomics.store(ctl, GONE, 1);
  Atomics.store(ctl, STATE, 0);
  Atomics.notify(ctl, STATE);
  Atomics.notify(ctl, READ);
}
`;

/** The process's worker (its control words and ring), null where none can start. */
let shared;
/** The pass using the worker, if any. */
let owner = null;

function worker() {
  if (shared !== undefined) return shared;
  try {
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const blocks = new SharedArrayBuffer(SLOTS * BLOCK);
    const at = { BLOCK, SLOTS, REFILL, READY, STATE, STOP, TICK, RELEASED, READ, FD, WAITING, LENGTH, GONE, START };
    const thread = new Worker(WORKER, { eval: true, workerData: { control, blocks, at }, name: 'dsh-fs read-ahead' });
    thread.unref();
    // A worker that fails to start leaves READY at 0: reads stay on the caller's thread.
    thread.on('error', () => {});
    shared = { ctl: new Int32Array(control), start: new Float64Array(control), blocks: new Uint8Array(blocks) };
  } catch {
    // No worker threads here (a permission model that refuses them): reads stay on the caller's thread.
    shared = null;
  }
  return shared;
}

/** Resolves once the worker is up (starting it), false where it cannot start; for tests. */
export async function aheadReady() {
  const w = worker();
  if (w === null) return false;
  while (Atomics.load(w.ctl, READY) !== 1) await new Promise((resolve) => setTimeout(resolve, 2));
  return true;
}

/**
 * A pass reading the descriptor `fd` ahead from `offset`, or null when the
 * worker is busy with another pass or not up yet (it is then started, for a
 * later pass).
 */
export function startAhead(fd, offset) {
  if (owner !== null) return null;
  const w = worker();
  // No owner: the last pass was stopped, so the worker is idle (or gone).
  if (w === null || Atomics.load(w.ctl, READY) !== 1 || Atomics.load(w.ctl, GONE) === 1) return null;
  const { ctl } = w;
  ctl[FD] = fd;
  w.start[START] = offset;
  ctl[STOP] = 0;
  ctl[RELEASED] = 0;
  ctl[READ] = 0;
  Atomics.store(ctl, STATE, 1);
  Atomics.notify(ctl, STATE);
  owner = new ReadAhead(w, offset);
  return owner;
}

/** Blocks handed out by passes since the process started; for tests. */
export let blocksTaken = 0;

class ReadAhead {
  #w;
  /** File offset of the next byte handed out. */
  #at;
  /** Blocks taken from the ring; the current one is the last of them. */
  #taken = 0;
  /** Where the rest of the current block starts in the ring, and its length. */
  #from = 0;
  #left = 0;
  /** The current block is the file's last (shorter than a block). */
  #last = false;

  constructor(w, at) {
    this.#w = w;
    this.#at = at;
  }

  /**
   * At most `len` bytes at `offset` from the blocks read ahead, valid until
   * the next call; shorter at a block's end. Null, and the pass stopped,
   * when `offset` is not where the last read ended, at the file's end (the
   * caller's own read then says what is there) or after a failed read.
   */
  take(offset, len) {
    if (offset !== this.#at) {
      this.stop();
      return null;
    }
    if (this.#left === 0) {
      if (this.#last || !this.#next()) {
        this.stop();
        return null;
      }
    }
    const n = Math.min(len, this.#left);
    const bytes = this.#w.blocks.subarray(this.#from, this.#from + n);
    this.#from += n;
    this.#left -= n;
    this.#at += n;
    return bytes;
  }

  /** Moves to the next block, releasing the current one; false at the end or on a failed read. */
  #next() {
    const { ctl } = this.#w;
    const i = this.#taken;
    if (i > 0) {
      Atomics.store(ctl, RELEASED, i);
      Atomics.add(ctl, TICK, 1);
      const wake = Atomics.load(ctl, WAITING);
      if (wake !== 0 && i >= wake) Atomics.notify(ctl, TICK);
    }
    for (let read; (read = Atomics.load(ctl, READ)) <= i; ) {
      if (Atomics.load(ctl, GONE) === 1) return false;
      Atomics.wait(ctl, READ, read, PATIENCE_MS);
    }
    const slot = i % SLOTS;
    const n = ctl[LENGTH + slot];
    this.#taken = i + 1;
    if (n <= 0) return false;
    blocksTaken++;
    this.#from = slot * BLOCK;
    this.#left = n;
    this.#last = n < BLOCK;
    return true;
  }

  /** Ends the pass and waits for the worker to be idle: the descriptor may then be closed. */
  stop() {
    if (owner !== this) return;
    const { ctl } = this.#w;
    Atomics.store(ctl, STOP, 1);
    Atomics.add(ctl, TICK, 1);
    Atomics.notify(ctl, TICK);
    for (let state; (state = Atomics.load(ctl, STATE)) !== 0 && Atomics.load(ctl, GONE) !== 1; ) {
      Atomics.wait(ctl, STATE, state, PATIENCE_MS);
    }
    owner = null;
  }
}
