// createSession: one tools session over a byte store, on its own instance of
// the component. A call that fails inside the component (a trap, or a store
// value that cannot be lowered) becomes an INTERNAL_ERROR result and the
// session continues on a fresh instance, with no observations.

import { MemoryStore } from './store/memory.js';

/** The change journal's default budget: 32 MiB of old text. */
const DEFAULT_JOURNAL_BYTES = 32 << 20;

/**
 * Opens a session on instances made by `instantiate(store)`.
 * `observationPolicy` enforces read-before-write/edit and stale-version
 * checks; `journalBytes` bounds the old text the change journal keeps for
 * `checkpoint` and `revert` (0: no journal); `store` holds the files (a fresh MemoryStore when omitted;
 * `provider` is its former name). Returns
 * `{ execute(tool, args), definitions(), store }`.
 */
export function openSession(
  instantiate,
  { observationPolicy = true, journalBytes = DEFAULT_JOURNAL_BYTES, store, provider } = {},
) {
  store ??= provider ?? new MemoryStore();
  const options = { observationPolicy: Boolean(observationPolicy), journalBytes: BigInt(journalBytes) };
  let tools = instantiate(store);
  let session = new tools.Session(options);
  // A call is running: the store called back into its own session, which
  // the component cannot take (its state is borrowed by the running call).
  let running = false;

  return {
    store,

    /** The store, by its former name. */
    get provider() {
      return store;
    },

    /**
     * Runs one tool call; `args` is an object or its JSON text. Never throws
     * for anything the component can see: failures are results with
     * `isError` and `error: { code, message }`.
     */
    execute(tool, args = {}) {
      if (running) {
        const message = `this session is running another call, from whose store this ${String(tool)} came: a store must not call its own session; nothing was done`;
        return { text: `FS_BUSY: ${message}`, isError: true, error: { code: 'FS_BUSY', message } };
      }
      const json = typeof args === 'string' ? args : JSON.stringify(args);
      running = true;
      try {
        const result = session.execute(String(tool), json);
        return { text: result.text, isError: result.isError, error: result.error ?? null };
      } catch (failure) {
        let next = 'The session was restarted: read files again before editing them.';
        try {
          tools = instantiate(store);
          session = new tools.Session(options);
        } catch {
          next = 'The session could not be restarted.';
        }
        const message = `the tool failed inside the component (${failure?.message ?? failure}). ${next}`;
        return {
          text: `INTERNAL_ERROR: ${message}`,
          isError: true,
          error: { code: 'INTERNAL_ERROR', message },
        };
      } finally {
        running = false;
      }
    },

    /**
     * The tool definitions: `[{ name, title, description, guidance,
     * parameters, hints }]`, parameters as JSON Schema text, hints as
     * `{ readOnly, destructive, idempotent }`. `extra` names extra tools to
     * list after the five (`multi_edit`); the session runs them either way.
     */
    definitions({ extra = [] } = {}) {
      const extras = tools.extraDefinitions();
      const offered = extra.map((name) => {
        const found = extras.find((d) => d.name === name);
        if (!found) {
          const known = extras.map((d) => d.name).join(', ');
          throw new TypeError(`there is no extra tool named ${JSON.stringify(name)}; the extra tools are ${known}`);
        }
        return found;
      });
      return [...tools.definitions(), ...offered].map(({ name, title, description, guidance, parameters, hints }) => ({
        name,
        title,
        description,
        guidance,
        parameters,
        hints: { readOnly: hints.readOnly, destructive: hints.destructive, idempotent: hints.idempotent },
      }));
    },
  };
}
