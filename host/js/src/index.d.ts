// The package's API: sessions of the tools component, their definitions and
// results, and the provider a session serves files from (MemoryProvider, or
// any object of the Provider shape).

/** The five tools, in the order `definitions()` lists them. */
export type ToolName = 'read' | 'write' | 'edit' | 'glob' | 'grep';

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
  /** What the tool does, including the read-before-change policy. */
  description: string;
  /** Advice for the system prompt: when and how to use the tool. */
  guidance: string;
  /** JSON Schema (draft 2020-12) of the arguments object, as JSON text. */
  parameters: string;
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
export interface Session<P extends Provider<any> = Provider<any>> {
  /** The provider the session serves files from. */
  readonly provider: P;
  /**
   * Runs one tool call; `args` is the arguments object or its JSON text.
   * Never throws for a failed call: it is a result with `isError`.
   */
  execute<T extends string>(
    tool: T,
    args?: (T extends ToolName ? ToolArguments[T] : Record<string, unknown>) | string,
  ): ToolResult;
  /** The tool definitions, in a stable order. */
  definitions(): ToolDefinition[];
}

export interface SessionOptions<P extends Provider<any>> {
  /** Enforce read-before-change and stale-version checks (default true). */
  observationPolicy?: boolean;
  /** Where the files live (default: a fresh MemoryProvider). */
  provider?: P;
}

/** Opens a session over `provider`. */
export function createSession<P extends Provider<any> = MemoryProvider>(
  options?: SessionOptions<P>,
): Session<P>;

// --- Providers ---

/** A provider's error codes (`dsh:fs/types.error-code`). */
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

/** A provider failure; thrown by a provider, the component sees `code` and `message`. */
export class FsError extends Error {
  /** Any code outside ERROR_CODES becomes `io-error`. */
  constructor(code: ErrorCode, message: string);
  readonly code: ErrorCode;
  static notFound(path: string): FsError;
  static sandboxDenied(path: string): FsError;
  static stale(path: string): FsError;
  static notText(path: string, why: string): FsError;
  /** `stale-version` for a file that is gone. */
  static vanished(path: string): FsError;
}

/** An opaque freshness token a provider makes; the tools only hand it back. */
export type Version = string;

/** What `resolve` returns; the provider may keep more in it. */
export interface Target {
  /** The path as the model should see it. */
  displayPath: string;
  /** Identity of the target: two paths naming one file have one key. */
  key: string;
}

export interface Stat {
  version: Version;
  kind: 'file' | 'directory' | 'other';
  size: number | bigint | null;
}

/** A file's text in chunks of whole characters. */
export interface TextStream {
  /** The next chunk of at most `maxBytes` bytes of UTF-8; null at the end. */
  next(maxBytes: number): string | null;
  /** The version of everything streamed, once `next` returned null; else null. */
  version(): Version | null;
}

export type WriteIntent =
  | null
  | { tag: 'create-if-absent' }
  | { tag: 'replace-if-version'; val: Version };

export interface EditRequest {
  oldString: string;
  newString: string;
  replaceAll: boolean;
}

export interface DirEntry {
  name: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
  /** Bytes for files, 0 otherwise. */
  size: number | bigint;
  /** Nanoseconds since the Unix epoch, or null when unknown. */
  modified: number | bigint | null;
}

/** A directory's entries in byte order of their names, handed out in pages. */
export interface Listing {
  /** The next at most `max` entries; [] at the end. */
  next(max: number): DirEntry[];
  /** How many names could not be listed (not UTF-8). */
  skipped?(): number;
}

/**
 * A backend for `dsh:fs/provider`: the methods the component calls, each
 * throwing FsError for a failure (anything else thrown becomes `io-error`).
 * `src/binding.js` documents the contract of each.
 */
export interface Provider<T extends Target = Target> {
  resolve(path: string): T;
  stat(target: T): Stat | null;
  readText(target: T, maxBytes: number): { text: string; version: Version };
  streamText(target: T, start: number): TextStream;
  writeText(
    target: T,
    content: string,
    intent: WriteIntent,
  ): { operation: 'created' | 'updated'; version: Version };
  editText(
    target: T,
    edit: EditRequest,
    expected: Version | null,
  ): { replacements: number; version: Version; firstLine: number | bigint };
  listDir(target: T): Listing;
  /**
   * Optional native search: the text the component's own `glob`/`grep` would
   * render for `query` below `target`, byte for byte, or null to let the
   * component search through `listDir` and `streamText`.
   */
  search?(target: T, query: SearchQuery): string | null;
}

/** A glob or grep a provider may run natively (`Provider.search`). */
export type SearchQuery =
  | { tag: 'glob'; val: string }
  | { tag: 'grep'; val: { pattern: string; include?: string | null } };

/** An in-memory workspace; absolute paths are accepted under `root` (default `/workspace`). */
export class MemoryProvider implements Provider {
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

  resolve(path: string): Target;
  stat(target: Target): Stat | null;
  readText(target: Target, maxBytes: number): { text: string; version: Version };
  streamText(target: Target, start?: number): TextStream;
  writeText(
    target: Target,
    content: string,
    intent: WriteIntent,
  ): { operation: 'created' | 'updated'; version: Version };
  editText(
    target: Target,
    edit: EditRequest,
    expected: Version | null,
  ): { replacements: number; version: Version; firstLine: number };
  listDir(target: Target): Listing;
}
