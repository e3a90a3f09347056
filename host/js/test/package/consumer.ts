// A TypeScript program written against the installed package the way the
// README uses it; package.test.js type-checks it (tsc --noEmit) together with
// the README's blocks. The @ts-expect-error lines are misuses the declarations
// must reject.

import {
  createSession,
  ERROR_CODES,
  FsError,
  MemoryProvider,
  MemoryStore,
  type ErrorCode,
  type Guard,
  type Place,
  type Reader,
  type Replacement,
  type Session,
  type Store,
  type ToolDefinition,
  type ToolErrorCode,
  type ToolName,
  type ToolResult,
} from '@dsh-fs/host';
import { NodeStore } from '@dsh-fs/host/node';
import { openOpfs, type OpfsSession } from '@dsh-fs/host/opfs';
import { aiSdkTools, type AiSdkTools } from '@dsh-fs/host/ai-sdk';
import { generateText, stepCountIs, type LanguageModel, type ToolSet } from 'ai';

const files = new MemoryStore();
files.insert('src/app.ts', 'let x = 1;\n');
files.insert('logo.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
const session: Session<MemoryStore> = createSession({ store: files });
const bytes: Uint8Array | undefined = session.store.get('src/app.ts');
// The former names still type-check.
const former: Session<MemoryProvider> = createSession({ provider: new MemoryProvider() });
const onDisk: Session<NodeStore> = createSession({ store: new NodeStore('.') });
const root: string = onDisk.store.root;
export async function onOpfs(): Promise<ToolResult> {
  const opfs = await openOpfs({ directory: 'project' });
  const agent: OpfsSession = await opfs.createSession();
  const result = await agent.execute('read', { file_path: 'a.txt' });
  await opfs.close();
  return result;
}

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

// A store of one's own: the Store shape, failures as FsError.
class ReadOnly implements Store {
  readonly #inner = new MemoryStore();
  stat(place: Place) {
    return this.#inner.stat(place);
  }
  open(place: Place): Reader {
    return this.#inner.open(place);
  }
  listDir(place: Place) {
    return this.#inner.listDir(place);
  }
  replace(place: Place): [Replacement, Reader | undefined] {
    throw new FsError('permission-denied', `${place.shown} is read-only`);
  }
}
const readOnly: Session<ReadOnly> = createSession({ store: new ReadOnly(), observationPolicy: false });
const guard: Guard = { tag: 'unchanged', val: 'g1' };
const codes: readonly ErrorCode[] = ERROR_CODES;
// @ts-expect-error not an error code
new FsError('gone', 'x');
// @ts-expect-error a store needs open, listDir and replace
createSession({ store: { stat: (place: Place) => null } });

// The AI SDK: the tools fit generateText's `tools`, their output is the session's result.
const tools: AiSdkTools = aiSdkTools(session);
const toolSet: ToolSet = tools;
declare const model: LanguageModel;
export async function ask(prompt: string): Promise<ToolResult[]> {
  const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(20) });
  return result.staticToolResults.map((r) => r.output);
}
