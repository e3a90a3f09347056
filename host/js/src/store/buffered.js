// A replacement for stores that hold a file's bytes whole: the chunks the
// component writes, joined into one array at the commit, which the store's
// own `commit(bytes, guard)` puts in place.

/** Largest buffered replacement (dsh_fs_core::MAX_IN_MEMORY_BYTES). */
export const MAX_IN_MEMORY_BYTES = 16 * 1024 * 1024;

export class BufferedReplacement {
  #chunks = [];
  #commit;

  #remove;

  /**
   * `commit(bytes, guard)` checks the guard, stores the bytes, returns the
   * new token; `remove(guard)`, when given, checks it and removes the file.
   */
  constructor(commit, remove) {
    this.#commit = commit;
    this.#remove = remove;
    if (!remove) this.remove = undefined;
  }

  write(bytes) {
    // The component's buffer is reused after the call: keep a copy.
    this.#chunks.push(bytes.slice());
  }

  commit(guard) {
    const bytes = new Uint8Array(this.#chunks.reduce((n, c) => n + c.length, 0));
    this.#chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
    return this.#commit(bytes, guard);
  }

  remove(guard) {
    this.#remove(guard);
  }
}
