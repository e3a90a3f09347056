// A byte store in a SQLite-backed Durable Object's storage (src/store/durable.js).

/** The part of a Durable Object's `ctx.storage` the store uses. */
export interface SqlStorageLike {
  sql: { exec(query: string, ...bindings: unknown[]): { toArray(): Record<string, unknown>[]; one(): Record<string, unknown> } };
  transactionSync<T>(fn: () => T): T;
}

/** Bytes per stored row of a file. */
export const CHUNK: number;

/** The files of one workspace in a Durable Object's SQLite storage; construct one per object. */
export class DurableObjectStore {
  constructor(storage: SqlStorageLike, options?: { root?: string; maxObjectBytes?: number });
  /** Puts `content` at `path` past every check (seeding, another writer); async for an iterable of chunks. */
  put(path: string, content: string | Uint8Array | ArrayBuffer): string;
  put(path: string, content: AsyncIterable<Uint8Array>): Promise<string>;
  /** The bytes at `path`, whole in memory, or undefined if it is not a file. */
  get(path: string): Uint8Array | undefined;
  /** The file at `path` streamed one stored row at a time, with its size; undefined if it is not a file. */
  stream(path: string): { size: number; body: ReadableStream<Uint8Array> } | undefined;
  /** Creates a directory and its parents. */
  createDir(path: string): void;
}

/** The `dsh:fs/memory` a session keeps its observations in: at most `limit` values. */
export function durableMemory(
  storage: SqlStorageLike,
  options?: { limit?: number },
): { recall(key: string): string | undefined; remember(key: string, value: string): void };
