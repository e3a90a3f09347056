// The Vercel AI SDK adapter (`@dsh-fs/host/ai-sdk`); needs the `ai` package, 6 or 7.

import type { Tool } from 'ai';
import type { Session, ToolArguments, ToolName, ToolResult } from './index.js';

/** A session's tools, keyed by name, in the AI SDK's tool shape. */
export type AiSdkTools = { [N in ToolName]: Tool<ToolArguments[N], ToolResult> };

/**
 * The session's tools for `generateText`/`streamText`'s `tools`: each call
 * runs on `session`; the model gets the result's text, as error text when
 * `isError`.
 */
export function aiSdkTools(session: Session): AiSdkTools;
