// `@dsh-fs/host/opfs`: sessions over the browser's Origin Private File System.

import type { ToolDefinition, ToolName, ToolArguments, ToolResult } from './index.js';

/** A session whose component runs in the OPFS worker: every call is a promise. */
export interface OpfsSession {
  execute<T extends string>(
    tool: T,
    args?: (T extends ToolName ? ToolArguments[T] : Record<string, unknown>) | string,
  ): Promise<ToolResult>;
  definitions(): Promise<ToolDefinition[]>;
}

/** The OPFS directory of a worker; its files stay locked to it until `close`. */
export interface Opfs {
  createSession(options?: { observationPolicy?: boolean; journalBytes?: number }): Promise<OpfsSession>;
  /** Releases every file and ends the worker. */
  close(): Promise<void>;
}

/**
 * Opens `directory` of the Origin Private File System (created if missing)
 * in a dedicated worker; absolute model paths live under `root`
 * (default `/workspace`). Browsers only.
 */
export function openOpfs(options?: { directory?: string; root?: string }): Promise<Opfs>;
