// A session's tools as Vercel AI SDK tools (the `ai` package, 6 or 7): the
// component's descriptions and JSON Schemas as they are, each call run by the
// session, its text handed to the model (as error text when the call failed).

import { jsonSchema, tool } from 'ai';

/**
 * `{ read, write, edit, glob, grep }` for `generateText`/`streamText`'s
 * `tools`. The component checks the arguments itself, so the schemas carry no
 * validator; `execute` returns the session's `{ text, isError, error }`.
 */
export function aiSdkTools(session) {
  return Object.fromEntries(
    session.definitions().map(({ name, description, parameters }) => [
      name,
      tool({
        description,
        inputSchema: jsonSchema(JSON.parse(parameters)),
        execute: (input) => session.execute(name, input),
        toModelOutput: ({ output }) => ({
          type: output.isError ? 'error-text' : 'text',
          value: output.text,
        }),
      }),
    ]),
  );
}
