// The package's API: sessions of the tools component, their definitions and
// results, and the byte store a session serves files from (MemoryStore,
// NodeStore from `@dsh-fs/host/node`, or any object of the Store shape).

/** The five tools, in the order `definitions()` lists them. */
export type ToolName = 'read' | 'write' | 'edit' | 'glob' | 'grep';

/** Tools a host may offer besides the five: several edits of one file in one atomic change. */
export type ExtraToolName = 'multi_edit';

/** `read`: numbered lines of one file, a window of it with `offset` and `limit`. */
export interface ReadArguments {
  file_path: string;
  /** First line, 1-based (default 1). */
  offset?: number;
  /** Lines to return, at most 2000 (default 2000). */
  limit?: number;
}

/** `write`: create a file, or replace one this session read. */
export interface WriteArguments {
  file_path: string;
  content: string;
}

/** `edit`: a literal replacement in a file this session read. */
export interface EditArguments {
  file_path: string;
  /** Exact text to replace; not empty. */
  old_string: string;
  /** Its replacement; `""` deletes `old_string`. */
  new_string: string;
  /** Replace every occurrence instead of requiring exactly one (default false). */
  replace_all?: boolean;
}

/** `glob`: file paths matching a pattern, newest first. */
export interface GlobArguments {
  pattern: string;
  /** Directory to search (default: the root). */
  path?: string;
}

/** `grep`: lines matching a regular expression. */
export interface GrepArguments {
  pattern: string;
  /** File or directory to search (default: the root). */
  path?: string;
  /** File names to search, e.g. `*.{ts,tsx}`. */
  include?: string;
}

/** The arguments object of each tool. */
export interface ToolArguments {
  read: ReadArguments;
  write: WriteArguments;
  edit: EditArguments;
  glob: GlobArguments;
  grep: GrepArguments;
}

/** One tool as a model sees it. */
export interface ToolDefinition {
  name: ToolName;
  /** A short title for people: `Read file`. */
  title: string;
  /** What the tool does, including the read-before-change policy. */
  description: string;
  /** Advice for the system prompt: when and how to use the tool. */
  guidance: string;
  /** JSON Schema (draft 2020-12) of the arguments object, as JSON text. */
  parameters: string;
  /** What it may do to the workspace (MCP's tool annotations). */
  hints: { readOnly: boolean; destructive: boolean; idempotent: boolean };
}

/** The stable code of a failed call: the component's, or INTERNAL_ERROR from this host. */
export type ToolErrorCode =
  | 'INVALID_ARGS'
  | 'UNKNOWN_TOOL'
  | 'FS_NOT_FOUND'
  | 'FS_NOT_TEXT'
  | 'FS_NOT_REGULAR_FILE'
  | 'FS_NOT_DIRECTORY'
  | 'FS_STALE_VERSION'
  | 'FS_NOT_OBSERVED'
  | 'FS_AMBIGUOUS_EDIT'
  | 'FS_EDIT_NOT_FOUND'
  | 'FS_SANDBOX_DENIED'
  | 'FS_PERMISSION_DENIED'
  | 'FS_TOO_LARGE'
  | 'FS_IO_ERROR'
  | 'FS_ABORTED'
  | 'FS_INVALID_INPUT'
  | 'FS_BUSY'
  | 'INTERNAL_ERROR';

/** Why a call failed: a stable code and one line saying what to do next. */
export interface ToolError {
  code: ToolErrorCode;
  message: string;
}

/** The answer to one call; `text` is what the model should see either way. */
export type ToolResult =
  | { text: string; isError: false; error: null }
  | { text: string; isError: true; error: ToolError };

/** One agent session: the owner of what was read, on its own instance of the component. */
export interface Session<S extends Store = Store> {
  /** The store the session serves files from. */
  readonly store: S;
  /** @deprecated The store, by its former name. */
  readonly provider: S;
  /**
   * Runs one tool call; `args` is the arguments object or its JSON text.
   * Never throws for a failed call: it is a result with `isError`.
   */
  execute<T extends string>(
    tool: T,
    args?: (T extends ToolName ? ToolArguments[T] : Record<string, unknown>) | string,
  ): ToolResult;
  /**
   * The tool definitions, in a stable order; `extra` adds the extra tools
   * named (`multi_edit`) after the five. The session runs them either way.
   */
  definitions(options?: { extra?: ExtraToolName[] }): ToolDefinition[];
}

export interface SessionOptions<S extends Store> {
  /** Enforce read-before-change and stale-version checks (default true). */
  observationPolicy?: boolean;
  /**
   * Most bytes of old text the change journal keeps for `checkpoint` and
   * `revert` (default 32 MiB); 0 keeps no journal.
   */
  journalBytes?: number;
  /** Where the files live (default: a fresh MemoryStore). */
  store?: S;
  /** @deprecated `store`, by its former name. */
  provider?: S;
}

/** Opens a session over `store`. */
export function createSession<S extends Store = MemoryStore>(options?: SessionOptions<S>): Session<S>;

// --- Stores ---

/** A store's error codes (`dsh:fs/types.error-code`). */
export type ErrorCode =
  | 'not-found'
  | 'not-text'
  | 'not-regular-file'
  | 'not-directory'
  | 'stale-version'
  | 'not-observed'
  | 'ambiguous-edit'
  | 'edit-not-found'
  | 'sandbox-denied'
  | 'permission-denied'
  | 'too-large'
  | 'io-error'
  | 'aborted'
  | 'invalid-input'
  | 'busy';

/** Every ErrorCode. */
export const ERROR_CODES: readonly ErrorCode[];

/** A store failure; thrown by a store, the component sees `code` and `message`. */
export class FsError extends Error {
  /** Any code outside ERROR_CODES becomes `io-error`. */
  constructor(code: ErrorCode, message: string);
  readonly code: ErrorCode;
  /** `not-found`: `PATH does not exist`. */
  static notFound(path: string): FsError;
  /** `sandbox-denied`: the path leaves the root. */
  static sandboxDenied(path: string): FsError;
  /** `stale-version`: a guard found other bytes than the ones read. */
  static stale(path: string): FsError;
  /** `stale-version` for a file that is gone. */
  static vanished(path: string): FsError;
  /** `not-observed`: an `absent` guard found a file someone else created. */
  static createdMeanwhile(path: string): FsError;
  /** `not-regular-file` for a directory. */
  static isDirectory(path: string): FsError;
  /** `not-directory` for a listing of a file. */
  static notDirectory(path: string): FsError;
  /** `not-directory` for a path through a file. */
  static parentNotDirectory(path: string): FsError;
}

/** Where an operation works: the canonical key (root-relative, `/`-separated) and the path to name in messages. */
export interface Place {
  key: string;
  shown: string;
}

/** What a store knows of one entry without reading it. */
export interface ObjectMeta {
  /** One of these three (a plain `string` type, so JavaScript literals check). */
  kind: 'file' | 'directory' | 'other' | (string & {});
  /** Bytes, when known (always for files). */
  size?: number | bigint | null;
  /** Changes whenever the bytes may have changed; equal tokens promise equal bytes. */
  token: string;
}

/** One open regular file, read by ranges. */
export interface Reader {
  /** Its metadata when it was opened. */
  meta(): ObjectMeta;
  /** At most `len` bytes from `offset`; empty at the end. Used before the next call to `read`, so a
   *  reader may fill the same buffer each time. */
  read(offset: number, len: number): Uint8Array;
  /** Its token now (default: `meta().token`, for a reader of a snapshot). */
  tokenNow?(): string;
  /** Called when the component is done with it. */
  close?(): void;
}

export interface DirEntry {
  name: string;
  /** One of these four (a plain `string` type, so JavaScript literals check). */
  kind: 'file' | 'directory' | 'symlink' | 'other' | (string & {});
  /** Bytes for files, 0 otherwise. */
  size: number | bigint;
  /** Nanoseconds since the Unix epoch, or null when unknown. */
  modified?: number | bigint | null;
}

/** A directory's entries in any order, handed out in pages; [] at the end. */
export interface Listing {
  next(max: number): DirEntry[];
  /** How many names could not be listed (not UTF-8). */
  skipped?(): number;
  close?(): void;
}

/** What must hold when a replacement commits. */
export type Guard = { tag: 'absent' } | { tag: 'unchanged'; val: string } | { tag: 'none' };

/** The new content of one name, written front to back, then committed. */
export interface Replacement {
  /** Throws `permission-denied` when the existing file is write-protected. */
  checkWritable?(): void;
  /** Appends bytes (copy them if you keep them: the buffer is reused). */
  write(bytes: Uint8Array): void;
  /** Appends `len` bytes of the file `replace` opened, from `offset` (default: read, then write). */
  copy?(offset: number, len: number): void;
  /**
   * Puts the content in place if `guard` holds now, atomically; the new
   * token. A failed guard is `stale-version` (changed or vanished) or
   * `not-observed` (created meanwhile).
   */
  commit(guard: Guard): string;
  /**
   * Removes the file at the name instead, if `guard` (`unchanged`) holds
   * now; without it the store cannot remove files (a revert leaves a file
   * the session created in place).
   */
  remove?(guard: Guard): void;
  /** Called when the component is done with it; without a commit it must leave nothing behind. */
  close?(): void;
}

/**
 * A byte store (`dsh:fs/store`): the methods the component's text layer
 * calls, each throwing FsError for a failure (anything else thrown becomes
 * `io-error`). Bytes only: decoding, versions, freshness and edits are the
 * component's. `src/binding.js` documents each method.
 */
export interface Store {
  /** Absolute spellings of the root a model path may begin with (default: none). */
  roots?(): string[];
  /**
   * The largest file this store takes (default: 1 GiB): larger results are
   * `too-large` before any byte is written. Stores holding replacements in
   * memory answer 16 MiB.
   */
  maxObjectBytes?(): number;
  /** The canonical key of the normalized path `rel` (default: `rel`); `sandbox-denied` when it leaves the root. */
  identity?(rel: string, shown: string): string;
  /** Metadata, or null when nothing is there. */
  stat(place: Place): ObjectMeta | null | undefined;
  /** The regular file at `place`: `not-found`, `not-regular-file`, `not-directory`. */
  open(place: Place): Reader;
  /** The directory's entries, one level deep: `not-found`, `not-directory`. */
  listDir(place: Place): DirEntry[] | Listing;
  /**
   * Begins replacing `place`: `[replacement, reader]`, the reader being the
   * file there now (undefined when none). Typed as an array too, as
   * JavaScript infers the literal.
   */
  replace(
    place: Place,
    createParents: boolean,
  ): [Replacement, Reader | undefined | null] | (Replacement | Reader | undefined | null)[];
}

/** An in-memory workspace of bytes; absolute paths are accepted under `root` (default `/workspace`). */
export class MemoryStore implements Store {
  constructor(options?: { root?: string });
  /**
   * Puts `content` (a string, stored as UTF-8, or bytes) at `path`, creating
   * parent directories and bypassing every check: how a host seeds the
   * workspace or plays another writer.
   */
  insert(path: string, content: string | Uint8Array | ArrayLike<number>): void;
  /** A copy of the bytes at `path`, or undefined if it is not a file. */
  get(path: string): Uint8Array | undefined;
  /** Creates a directory and its parents. */
  createDir(path: string): void;
  /** Removes the file at `path`; whether there was one. */
  remove(path: string): boolean;

  roots(): string[];
  /** 16 MiB: files and replacements are held in memory. */
  maxObjectBytes(): number;
  stat(place: Place): ObjectMeta | null;
  open(place: Place): Reader;
  listDir(place: Place): DirEntry[];
  replace(place: Place, createParents: boolean): [Replacement, Reader | undefined];
}

/** @deprecated MemoryStore, by its former name. */
export const MemoryProvider: typeof MemoryStore;
/** @deprecated MemoryStore, by its former name. */
export type MemoryProvider = MemoryStore;
