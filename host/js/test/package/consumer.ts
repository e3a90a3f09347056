// A TypeScript program written against the installed package the way the
// README uses it; package.test.js type-checks it (tsc --noEmit) together with
// the README's blocks. The @ts-expect-error lines are misuses the declarations
// must reject.

import {
  createSession,
  ERROR_CODES,
  FsError,
  MemoryProvider,
  type ErrorCode,
  type Provider,
  type Session,
  type Target,
  type ToolDefinition,
  type ToolErrorCode,
  type ToolName,
  type ToolResult,
} from '@dsh-fs/host';
import { aiSdkTools, type AiSdkTools } from '@dsh-fs/host/ai-sdk';
import { generateText, stepCountIs, type LanguageModel, type ToolSet } from 'ai';

const files = new MemoryProvider();
files.insert('src/app.ts', 'let x = 1;\n');
files.insert('logo.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
const session: Session<MemoryProvider> = createSession({ provider: files });
const bytes: Uint8Array | undefined = session.provider.get('src/app.ts');

const read: ToolResult = session.execute('read', { file_path: 'src/app.ts', offset: 1, limit: 10 });
if (read.isError) {
  const code: ToolErrorCode = read.error.code;
  const message: string = read.error.message;
} else {
  const none: null = read.error;
}
session.execute('edit', { file_path: 'src/app.ts', old_string: 'x = 1', new_string: 'x = 2' });
session.execute('edit', { file_path: 'src/app.ts', old_string: 'x', new_string: 'y', replace_all: true });
session.execute('write', { file_path: 'src/new.ts', content: '' });
session.execute('glob', { pattern: '**/*.ts', path: 'src' });
session.execute('grep', { pattern: 'x =', include: '*.{ts,tsx}' });
session.execute('read', '{"file_path": "src/app.ts"}');

// A call as a model makes it: any name, any arguments; the component checks them.
declare const call: { toolName: string; input: Record<string, unknown> };
const fromModel: string = session.execute(call.toolName, call.input).text;

// @ts-expect-error a misspelt argument
session.execute('read', { file_pth: 'src/app.ts' });
// @ts-expect-error new_string is a string
session.execute('edit', { file_path: 'src/app.ts', old_string: 'x', new_string: 2 });
// @ts-expect-error write needs content
session.execute('write', { file_path: 'src/app.ts' });

const definitions: ToolDefinition[] = session.definitions();
const names: ToolName[] = definitions.map((d) => d.name);
const schema: unknown = JSON.parse(definitions[0].parameters);
const guidance: string = definitions[0].guidance;

// A provider of one's own: the Provider shape, failures as FsError.
class ReadOnly implements Provider<Target> {
  readonly #inner = new MemoryProvider();
  resolve(path: string): Target {
    return this.#inner.resolve(path);
  }
  stat(target: Target) {
    return this.#inner.stat(target);
  }
  readText(target: Target, maxBytes: number) {
    return this.#inner.readText(target, maxBytes);
  }
  streamText(target: Target, start: number) {
    return this.#inner.streamText(target, start);
  }
  writeText(target: Target): never {
    throw new FsError('permission-denied', `${target.displayPath} is read-only`);
  }
  editText(target: Target): never {
    throw new FsError('permission-denied', `${target.displayPath} is read-only`);
  }
  listDir(target: Target) {
    return this.#inner.listDir(target);
  }
}
const readOnly: Session<ReadOnly> = createSession({ provider: new ReadOnly(), observationPolicy: false });
const codes: readonly ErrorCode[] = ERROR_CODES;
// @ts-expect-error not an error code
new FsError('gone', 'x');
// @ts-expect-error a provider needs every method
createSession({ provider: { resolve: (path: string) => ({ displayPath: path, key: path }) } });

// The AI SDK: the tools fit generateText's `tools`, their output is the session's result.
const tools: AiSdkTools = aiSdkTools(session);
const toolSet: ToolSet = tools;
declare const model: LanguageModel;
export async function ask(prompt: string): Promise<ToolResult[]> {
  const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(20) });
  return result.staticToolResults.map((r) => r.output);
}
