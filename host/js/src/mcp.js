// A session's tools as an MCP server (the official TypeScript SDK's low-level
// `Server`), listed and answered as `dsh-fs mcp` lists and answers them: the
// component's definitions with their titles and behaviour hints, the guidance
// in the server's instructions, and a failure as `isError` with its code
// and message as structured content; a call of a tool it does not list is
// answered as an unknown tool, never run. Nothing here knows a tool by name.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** What `dsh-fs mcp` says of itself (host/rust/src/mcp). */
const SERVER = { name: 'dsh-fs', version: '0.1.0' };
/**
 * The largest MCP message `dsh-fs mcp` takes (its MAX_LINE_BYTES): the
 * component's largest arguments, 16 MiB (dsh_fs_core::MAX_ARGUMENT_BYTES),
 * and 64 KiB for the message around them.
 */
export const MAX_MESSAGE_BYTES = (16 << 20) + (64 << 10);
const PREAMBLE =
  'Tools for UTF-8 text files in one workspace. An error starts with its CODE and says what to do next.';

/**
 * The tools of `session` (an `openSession` result) as MCP lists them, and
 * the server's instructions; `extra` names the extra tools to offer after
 * the five (see `session.definitions`), as `dsh-fs mcp --extra-tools` does.
 */
export function describe(session, { extra = [] } = {}) {
  const definitions = session.definitions({ extra });
  return {
    instructions: definitions.reduce((text, d) => `${text}\n\n${d.name}: ${d.guidance}`, PREAMBLE),
    tools: definitions.map((d) => {
      const title = d.title || d.name;
      const h = d.hints ?? {};
      return {
        name: d.name,
        title,
        description: d.description,
        inputSchema: JSON.parse(d.parameters),
        annotations: {
          title,
          readOnlyHint: Boolean(h.readOnly),
          destructiveHint: Boolean(h.destructive),
          idempotentHint: Boolean(h.idempotent),
          openWorldHint: false,
        },
      };
    }),
  };
}

/**
 * The result of a call of a tool not offered: what the component answers
 * for a name it does not have (guest/tools ToolError::unknown_tool).
 */
export function unknownTool(name) {
  const message = `there is no tool named ${quoted(Array.from(String(name)).slice(0, 64).join(''))}; the tools are read, write, edit, glob and grep.`;
  return { text: `UNKNOWN_TOOL: ${message}`, isError: true, error: { code: 'UNKNOWN_TOOL', message } };
}

/** `text` quoted as Rust's `{:?}` quotes a string. */
function quoted(text) {
  const escapes = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' };
  let out = '"';
  for (const c of text) {
    const n = c.codePointAt(0);
    if (escapes[c]) out += escapes[c];
    else if (n < 0x20 || (n >= 0x7f && n < 0xa0) || (n >= 0xd800 && n < 0xe000)) out += `\\u{${n.toString(16)}}`;
    else out += c;
  }
  return `${out}"`;
}

/** The MCP form of a tool result. */
export function toMcp(result) {
  const answer = { content: [{ type: 'text', text: result.text }], isError: Boolean(result.isError) };
  if (result.isError && result.error) answer.structuredContent = { error: result.error };
  return answer;
}

/**
 * An MCP server whose calls run on `session()` (a function, so a host can
 * hand out the session it holds at the time of each call); `listing` is
 * `describe(session)`, made once.
 */
export function mcpServer(session, listing) {
  const server = new Server(SERVER, {
    capabilities: { tools: {} },
    instructions: listing.instructions,
    // The SDK validates JSON Schemas only for elicitation, which this server
    // never asks for; its default validator compiles code at run time, which
    // an edge runtime forbids.
    jsonSchemaValidator: { getValidator: () => (input) => ({ valid: true, data: input, errorMessage: undefined }) },
  });
  const offered = new Set(listing.tools.map((tool) => tool.name));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing.tools }));
  server.setRequestHandler(CallToolRequestSchema, ({ params: { name, arguments: args } }) =>
    toMcp(offered.has(name) ? session().execute(name, args ?? {}) : unknownTool(name)),
  );
  return server;
}
