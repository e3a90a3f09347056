// DurableObjectStore: a byte store in a SQLite-backed Durable Object's storage
// (`ctx.storage`), for the Worker (src/worker/) and any Durable Object of
// yours. The storage API is synchronous and transactional, as the byte-store
// seam is:
//
// - a file's bytes are an immutable blob of rows of CHUNK bytes (a row must
//   stay under the storage's 2 MB limit); a replacement writes a new blob
//   as the component streams it, so no file is ever held whole in memory;
// - the commit checks the guard and points the name at the new blob inside
//   one storage transaction, then drops the old blob: a reader sees its own
//   version or fails, never a mix; the token is the blob's number, which
//   is never reused;
// - directories are rows of their own (made by writes that create parents,
//   or by createDir), listed page by page in byte order;
// - a replacement closed without a commit, or left by an instance that
//   ended mid-write, leaves nothing: its rows are dropped then, or when the
//   store is next opened.
//
// One store per Durable Object instance: construct it once (in the object's
// constructor) over `ctx.storage`.

import { FsError } from '../error.js';
import { seedingKey } from './seeding.js';

/** Bytes per stored row of a file. */
export const CHUNK = 1 << 20;

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS dsh_fs_entries (
     key TEXT PRIMARY KEY,
     parent TEXT NOT NULL,
     name TEXT NOT NULL,
     kind TEXT NOT NULL,
     blob INTEGER,
     size INTEGER NOT NULL DEFAULT 0,
     modified INTEGER
   )`,
  'CREATE INDEX IF NOT EXISTS dsh_fs_children ON dsh_fs_entries (parent, name)',
  // committed = 0 while a replacement writes it.
  `CREATE TABLE IF NOT EXISTS dsh_fs_blobs (
     blob INTEGER PRIMARY KEY AUTOINCREMENT,
     committed INTEGER NOT NULL DEFAULT 0
   )`,
  `CREATE TABLE IF NOT EXISTS dsh_fs_chunks (
     blob INTEGER NOT NULL,
     seq INTEGER NOT NULL,
     bytes BLOB NOT NULL,
     PRIMARY KEY (blob, seq)
   ) WITHOUT ROWID`,
];

const encoder = new TextEncoder();

/** The files of one workspace in a Durable Object's SQLite storage. */
export class DurableObjectStore {
  #storage;
  #sql;
  #root;
  #maxObjectBytes;

  /**
   * The store in `storage` (a Durable Object's `ctx.storage`, SQLite-backed);
   * absolute paths are accepted under `root`. `maxObjectBytes` is the
   * largest file it takes (1 GiB by default; see the README for what a
   * Worker's limits allow).
   */
  constructor(storage, { root = '/workspace', maxObjectBytes = 2 ** 30 } = {}) {
    if (!storage?.sql) throw new TypeError('DurableObjectStore needs a SQLite-backed Durable Object storage (ctx.storage.sql)');
    this.#storage = storage;
    this.#sql = storage.sql;
    this.#root = root;
    this.#maxObjectBytes = maxObjectBytes;
    for (const statement of SCHEMA) this.#sql.exec(statement);
    // Replacements an earlier instance left unfinished.
    this.#storage.transactionSync(() => {
      this.#sql.exec('DELETE FROM dsh_fs_chunks WHERE blob IN (SELECT blob FROM dsh_fs_blobs WHERE committed = 0)');
      this.#sql.exec('DELETE FROM dsh_fs_blobs WHERE committed = 0');
    });
  }

  /**
   * Puts `content` (a string, stored as UTF-8, bytes, or an async iterable
   * of byte chunks such as a request body) at `path`, creating parents and
   * bypassing every check: how a host seeds the workspace or plays another
   * writer. Async only when `content` is an iterable; the file changes at
   * the end, all at once.
   */
  put(path, content) {
    const key = this.#key(path);
    const [replacement] = this.replace({ key, shown: path }, true);
    const finish = () => replacement.commit({ tag: 'none' });
    try {
      if (typeof content === 'string') content = encoder.encode(content);
      if (content instanceof Uint8Array || content instanceof ArrayBuffer) {
        replacement.write(new Uint8Array(content));
        return finish();
      }
    } catch (e) {
      replacement.close();
      throw e;
    }
    return (async () => {
      try {
        for await (const chunk of content) replacement.write(chunk);
        return finish();
      } finally {
        replacement.close();
      }
    })();
  }

  /**
   * The bytes at `path`, whole in memory, or undefined if it is not a file;
   * `stream` reads a large file without holding it.
   */
  get(path) {
    const file = this.#row(this.#key(path));
    if (file?.kind !== 'file') return undefined;
    const bytes = new Uint8Array(file.size);
    for (const { seq, bytes: chunk } of this.#sql.exec('SELECT seq, bytes FROM dsh_fs_chunks WHERE blob = ? ORDER BY seq', file.blob)) {
      bytes.set(new Uint8Array(chunk), seq * CHUNK);
    }
    return bytes;
  }

  /**
   * The file at `path` as `{ size, body }`, body a ReadableStream that reads
   * one stored row each time it is pulled, so the file is never held whole;
   * undefined if it is not a file. The stream gives the version it opened
   * or errors (stale-version) once that version is replaced.
   */
  stream(path) {
    const file = this.#row(this.#key(path));
    if (file?.kind !== 'file') return undefined;
    const sql = this.#sql;
    const rows = Math.ceil(file.size / CHUNK);
    let seq = 0;
    const body = new ReadableStream(
      {
        pull(controller) {
          if (seq === rows) return controller.close();
          const row = sql.exec('SELECT bytes FROM dsh_fs_chunks WHERE blob = ? AND seq = ?', file.blob, seq).toArray()[0];
          if (!row) return controller.error(FsError.stale(path));
          seq += 1;
          // The row's buffer is the runtime's, which the isolate's collector
          // does not count: copied into one it counts, and let go at once.
          // Left to the collector, they piled up: 1.2 GB for a 300 MiB GET.
          const chunk = new Uint8Array(row.bytes.byteLength);
          chunk.set(new Uint8Array(row.bytes));
          row.bytes.transfer?.(0);
          controller.enqueue(chunk);
          if (seq === rows) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return { size: file.size, body };
  }

  /** Creates a directory and its parents. */
  createDir(path) {
    this.#storage.transactionSync(() => this.#addDirs(this.#key(path)));
  }

  // --- dsh:fs/store (see binding.js) ---

  roots() {
    return [this.#root];
  }

  maxObjectBytes() {
    return this.#maxObjectBytes;
  }

  stat({ key, shown }) {
    if (key === '') return { kind: 'directory', size: null, token: 'dir' };
    const row = this.#row(key);
    if (row) return meta(row);
    this.#checkParents(key, shown);
    return null;
  }

  open({ key, shown }) {
    return new BlobReader(this.#sql, this.#file(key, shown), shown);
  }

  listDir({ key, shown }) {
    if (key !== '') {
      const row = this.#row(key);
      if (row?.kind === 'file') throw FsError.notDirectory(shown);
      if (!row) {
        this.#checkParents(key, shown);
        throw FsError.notFound(shown);
      }
    }
    const sql = this.#sql;
    let after = null;
    return {
      next(max) {
        const page = sql
          .exec(
            'SELECT name, kind, size, modified FROM dsh_fs_entries WHERE parent = ? AND (? IS NULL OR name > ?) ORDER BY name LIMIT ?',
            key,
            after,
            after,
            Math.max(1, max),
          )
          .toArray();
        if (page.length > 0) after = page[page.length - 1].name;
        return page.map(({ name, kind, size, modified }) => ({
          name,
          kind,
          size: kind === 'file' ? size : 0,
          modified: modified == null ? null : modified * 1e6,
        }));
      },
    };
  }

  replace({ key, shown }, createParents) {
    let current = null;
    const row = key === '' ? { kind: 'directory' } : this.#row(key);
    if (row?.kind === 'directory') throw FsError.isDirectory(shown);
    if (row) current = row;
    else {
      this.#checkParents(key, shown);
      if (!createParents && !this.#isDir(parentOf(key))) throw FsError.notFound(shown);
    }
    const blob = this.#sql.exec('INSERT INTO dsh_fs_blobs (committed) VALUES (0) RETURNING blob').one().blob;
    const commit = (size, guard) =>
      this.#storage.transactionSync(() => {
        const now = this.#row(key);
        if (now?.kind === 'directory') throw FsError.isDirectory(shown);
        if (guard.tag === 'absent' && now) throw FsError.createdMeanwhile(shown);
        if (guard.tag === 'unchanged') {
          if (!now) throw FsError.vanished(shown);
          if (token(now) !== guard.val) throw FsError.stale(shown);
        }
        if (createParents) this.#addDirs(parentOf(key));
        else if (!this.#isDir(parentOf(key))) throw FsError.vanished(shown);
        this.#sql.exec(
          `INSERT INTO dsh_fs_entries (key, parent, name, kind, blob, size, modified) VALUES (?, ?, ?, 'file', ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET blob = excluded.blob, size = excluded.size, modified = excluded.modified`,
          key,
          parentOf(key),
          nameOf(key),
          blob,
          size,
          Date.now(),
        );
        this.#sql.exec('UPDATE dsh_fs_blobs SET committed = 1 WHERE blob = ?', blob);
        if (now) this.#drop(now.blob);
        return `d${blob}`;
      });
    const remove = (guard) =>
      this.#storage.transactionSync(() => {
        const now = this.#row(key);
        if (!now || now.kind === 'directory') throw FsError.vanished(shown);
        if (guard.tag !== 'unchanged' || token(now) !== guard.val) throw FsError.stale(shown);
        this.#sql.exec('DELETE FROM dsh_fs_entries WHERE key = ?', key);
        this.#drop(now.blob);
      });
    const replacement = new BlobWriter(this.#sql, blob, commit, () => this.#drop(blob), remove);
    return [replacement, current ? new BlobReader(this.#sql, current, shown) : undefined];
  }

  // --- Storage ---

  #key(path) {
    return seedingKey(this.#root, path);
  }

  #row(key) {
    return this.#sql.exec('SELECT kind, blob, size FROM dsh_fs_entries WHERE key = ?', key).toArray()[0];
  }

  #isDir(key) {
    return key === '' || this.#row(key)?.kind === 'directory';
  }

  /** Makes `key` and its parents directories (inside the caller's transaction). */
  #addDirs(key) {
    for (let at = key; at !== ''; at = parentOf(at)) {
      const row = this.#row(at);
      if (row?.kind === 'directory') return;
      if (row) throw FsError.parentNotDirectory(at);
      this.#sql.exec(
        "INSERT INTO dsh_fs_entries (key, parent, name, kind, size) VALUES (?, ?, ?, 'directory', 0)",
        at,
        parentOf(at),
        nameOf(at),
      );
    }
  }

  #drop(blob) {
    this.#sql.exec('DELETE FROM dsh_fs_chunks WHERE blob = ?', blob);
    this.#sql.exec('DELETE FROM dsh_fs_blobs WHERE blob = ?', blob);
  }

  /** The file at `key`, or the error a disk would give for it. */
  #file(key, shown) {
    const row = key === '' ? { kind: 'directory' } : this.#row(key);
    if (row?.kind === 'file') return row;
    if (row) throw FsError.isDirectory(shown);
    this.#checkParents(key, shown);
    throw FsError.notFound(shown);
  }

  #checkParents(key, shown) {
    for (let at = parentOf(key); at !== ''; at = parentOf(at)) {
      const row = this.#row(at);
      if (row?.kind === 'file') throw FsError.parentNotDirectory(shown);
      if (row) return;
    }
  }
}

function parentOf(key) {
  const slash = key.lastIndexOf('/');
  return slash === -1 ? '' : key.slice(0, slash);
}

function nameOf(key) {
  return key.slice(key.lastIndexOf('/') + 1);
}

function token(row) {
  return `d${row.blob}`;
}

function meta(row) {
  return row.kind === 'file'
    ? { kind: 'file', size: row.size, token: token(row) }
    : { kind: 'directory', size: null, token: 'dir' };
}

/** One version of a file: reads come from its blob, or fail once it is gone. */
class BlobReader {
  #sql;
  #row;
  #shown;

  constructor(sql, row, shown) {
    this.#sql = sql;
    this.#row = row;
    this.#shown = shown;
  }

  meta() {
    return meta(this.#row);
  }

  read(offset, len) {
    const end = Math.min(offset + len, this.#row.size);
    if (end <= offset) return new Uint8Array(0);
    const first = Math.floor(offset / CHUNK);
    const last = Math.floor((end - 1) / CHUNK);
    const rows = this.#sql
      .exec('SELECT seq, bytes FROM dsh_fs_chunks WHERE blob = ? AND seq BETWEEN ? AND ? ORDER BY seq', this.#row.blob, first, last)
      .toArray();
    if (rows.length !== last - first + 1) throw FsError.stale(this.#shown);
    if (rows.length === 1) {
      const at = first * CHUNK;
      return new Uint8Array(rows[0].bytes, offset - at, end - offset);
    }
    const bytes = new Uint8Array(end - offset);
    for (const { seq, bytes: chunk } of rows) {
      const at = seq * CHUNK;
      const from = Math.max(offset, at);
      const to = Math.min(end, at + chunk.byteLength);
      bytes.set(new Uint8Array(chunk, from - at, to - from), from - offset);
    }
    return bytes;
  }
}

/** A new blob, written row by row as the bytes come. */
class BlobWriter {
  #sql;
  #blob;
  #commit;
  #discard;
  #pending = new Uint8Array(CHUNK);
  #filled = 0;
  #seq = 0;
  #size = 0;
  #done = false;

  #remove;

  constructor(sql, blob, commit, discard, remove) {
    this.#sql = sql;
    this.#blob = blob;
    this.#commit = commit;
    this.#discard = discard;
    this.#remove = remove;
  }

  write(bytes) {
    for (let at = 0; at < bytes.length; ) {
      const n = Math.min(bytes.length - at, CHUNK - this.#filled);
      this.#pending.set(bytes.subarray(at, at + n), this.#filled);
      this.#filled += n;
      at += n;
      if (this.#filled === CHUNK) this.#flush();
    }
    this.#size += bytes.length;
  }

  commit(guard) {
    if (this.#filled > 0) this.#flush();
    const made = this.#commit(this.#size, guard);
    this.#done = true;
    return made;
  }

  /** Removes the file instead; the blob begun for new content is dropped at close. */
  remove(guard) {
    this.#remove(guard);
  }

  close() {
    if (!this.#done) {
      this.#done = true;
      this.#discard();
    }
  }

  #flush() {
    this.#sql.exec(
      'INSERT INTO dsh_fs_chunks (blob, seq, bytes) VALUES (?, ?, ?)',
      this.#blob,
      this.#seq++,
      this.#pending.slice(0, this.#filled).buffer,
    );
    this.#filled = 0;
  }
}

/**
 * The `dsh:fs/memory` a tools session keeps its observations in, in the
 * same storage: at most `limit` values, the least recently kept forgotten
 * first.
 */
export function durableMemory(storage, { limit = 1024 } = {}) {
  const sql = storage.sql;
  sql.exec('CREATE TABLE IF NOT EXISTS dsh_fs_memory (key TEXT PRIMARY KEY, value TEXT NOT NULL, seq INTEGER NOT NULL)');
  sql.exec('CREATE INDEX IF NOT EXISTS dsh_fs_memory_age ON dsh_fs_memory (seq)');
  return {
    recall(key) {
      return sql.exec('SELECT value FROM dsh_fs_memory WHERE key = ?', key).toArray()[0]?.value;
    },
    remember(key, value) {
      sql.exec(
        `INSERT INTO dsh_fs_memory (key, value, seq) VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM dsh_fs_memory))
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, seq = excluded.seq`,
        key,
        value,
      );
      sql.exec(
        'DELETE FROM dsh_fs_memory WHERE seq <= (SELECT max(seq) FROM dsh_fs_memory) - ?',
        limit,
      );
    },
  };
}
