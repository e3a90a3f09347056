//! Agent sessions on a [`Runtime`]: a [`Session`] is one store with one
//! instance of the component and the guest's session resource, the owner of
//! read-before-edit observations. Each call runs under a memory cap and an
//! epoch deadline. A trap — a timeout, memory exhaustion, a guest bug —
//! becomes an error result; the session then starts over on a fresh instance.

use crate::bindings::FsTools;
use crate::bindings::exports::dsh::fs::tools as api;
use crate::provider::DynProvider;
use crate::runtime::{EPOCH_TICK, Limits, Runtime};
use crate::state::HostState;
use anyhow::Result;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::Store;
use wasmtime::component::ResourceAny;

/// Time the component gets past the deadline, once a change committed (or a
/// provider gave up at the deadline), to render its answer: the change
/// happened, or did not, and the answer must say which.
const COMMIT_GRACE: Duration = Duration::from_secs(5);

impl Runtime {
    /// Opens an agent session on `provider`.
    pub fn session(&self, provider: Arc<DynProvider>, options: SessionOptions) -> Result<Session> {
        let instance = Instance::new(self, provider.clone(), options)?;
        Ok(Session {
            runtime: self.clone(),
            provider,
            options,
            instance,
        })
    }

    /// The tool definitions the component exports.
    pub fn definitions(&self) -> Result<Vec<ToolDefinition>> {
        self.listed(|tools, store| tools.call_definitions(store))
    }

    /// The tools a host may offer besides [`Runtime::definitions`], each
    /// only when it turns it on: `multi_edit`. A session runs them whether
    /// or not they are offered.
    pub fn extra_definitions(&self) -> Result<Vec<ToolDefinition>> {
        self.listed(|tools, store| tools.call_extra_definitions(store))
    }

    fn listed(
        &self,
        list: impl FnOnce(
            &api::Guest,
            &mut Store<HostState>,
        ) -> wasmtime::Result<Vec<api::ToolDefinition>>,
    ) -> Result<Vec<ToolDefinition>> {
        let provider = Arc::new(crate::provider::MemoryProvider::default());
        let mut instance = Instance::new(self, provider, SessionOptions::default())?;
        let defs = list(instance.bindings.dsh_fs_tools(), &mut instance.store)?;
        Ok(defs
            .into_iter()
            .map(|d| ToolDefinition {
                name: d.name,
                title: d.title,
                description: d.description,
                guidance: d.guidance,
                parameters: serde_json::from_str(&d.parameters).unwrap_or(serde_json::Value::Null),
                hints: ToolHints {
                    read_only: d.hints.read_only,
                    destructive: d.hints.destructive,
                    idempotent: d.hints.idempotent,
                },
            })
            .collect())
    }
}

/// How a session behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionOptions {
    /// Enforce read-before-write/edit and stale checks (default true).
    pub observation_policy: bool,
    /// Most bytes of old text the change journal holds (default
    /// [`DEFAULT_JOURNAL_BYTES`]); 0 keeps no journal.
    pub journal_bytes: u64,
}

/// The change journal's default budget: 32 MiB of old text.
pub const DEFAULT_JOURNAL_BYTES: u64 = 32 << 20;

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            observation_policy: true,
            journal_bytes: DEFAULT_JOURNAL_BYTES,
        }
    }
}

/// What a tool may do to the workspace, as the component says: the hints
/// MCP clients use for permission prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolHints {
    /// It changes nothing.
    pub read_only: bool,
    /// It may replace what is there.
    pub destructive: bool,
    /// The same call again changes nothing more.
    pub idempotent: bool,
}

/// One tool as the model sees it. Serialized (by `dsh-fs tools` and the
/// Python `definitions()`), it is what the model is given: name,
/// description, guidance and parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// `read`, `write`, `edit`, `glob` or `grep`.
    pub name: String,
    /// A short title for people: `Read file`.
    #[serde(skip)]
    pub title: String,
    /// What it may do.
    #[serde(skip)]
    pub hints: ToolHints,
    /// What the tool does, including the policy.
    pub description: String,
    /// Longer advice for a system prompt.
    pub guidance: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
}

/// A failed call's stable code and message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolError {
    /// `INVALID_ARGS`, `UNKNOWN_TOOL`, `FS_*`, or the host's `TIMEOUT` / `INTERNAL_ERROR`.
    pub code: String,
    /// What went wrong and what to do next.
    pub message: String,
}

/// The answer to one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolResult {
    /// Text for the model.
    pub text: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// The structured error when it failed.
    pub error: Option<ToolError>,
}

impl ToolResult {
    pub(crate) fn host_error(code: &str, message: String) -> Self {
        ToolResult {
            text: format!("{code}: {message}"),
            is_error: true,
            error: Some(ToolError {
                code: code.to_owned(),
                message,
            }),
        }
    }
}

/// One agent session: owns its observations (inside the component instance).
/// Sessions are independent; run them on as many threads as you like.
pub struct Session {
    runtime: Runtime,
    provider: Arc<DynProvider>,
    options: SessionOptions,
    instance: Instance,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Runs one tool call. Never fails: traps and timeouts come back as
    /// error results, after which the session continues on a fresh instance
    /// (with no observations: files must be read again before editing).
    pub fn execute(&mut self, tool: &str, arguments_json: &str) -> ToolResult {
        if arguments_json.len() > dsh_fs_core::MAX_ARGUMENT_BYTES {
            // Refused before it is copied into the instance.
            let message = dsh_fs_core::too_large_arguments(tool, arguments_json.len());
            return ToolResult::host_error("INVALID_ARGS", message);
        }
        let limit = self.runtime.limits.max_result_bytes;
        match self
            .instance
            .execute(&self.runtime.limits, tool, arguments_json)
        {
            Ok(result) if result.text.len() > limit => ToolResult::host_error(
                "INTERNAL_ERROR",
                format!(
                    "the component returned {} bytes, more than the {limit}-byte limit; the result was dropped",
                    result.text.len()
                ),
            ),
            Ok(result) => result,
            Err(trap) => {
                let timed_out = matches!(
                    trap.downcast_ref::<wasmtime::Trap>(),
                    Some(wasmtime::Trap::Interrupt)
                );
                let committed = self.instance.store.data_mut().take_committed();
                let restarted = Instance::new(&self.runtime, self.provider.clone(), self.options)
                    .map(|fresh| self.instance = fresh)
                    .is_ok();
                let next = if restarted {
                    "The session was restarted: read files again before editing them."
                } else {
                    "The session could not be restarted."
                };
                if let Some(path) = committed {
                    ToolResult::host_error(
                        if timed_out {
                            "TIMEOUT"
                        } else {
                            "INTERNAL_ERROR"
                        },
                        format!(
                            "the change to {path} was saved, but the component stopped before it could answer ({}). {next}",
                            trap_cause(&trap)
                        ),
                    )
                } else if timed_out {
                    ToolResult::host_error(
                        "TIMEOUT",
                        format!(
                            "the call ran longer than the {:?} limit and was stopped. {next}",
                            self.runtime.limits.call_timeout
                        ),
                    )
                } else {
                    ToolResult::host_error(
                        "INTERNAL_ERROR",
                        format!(
                            "the tool failed inside the component ({}). {next}",
                            trap_cause(&trap)
                        ),
                    )
                }
            }
        }
    }
}

/// A store with one instance of the component and one guest session.
struct Instance {
    store: Store<HostState>,
    bindings: FsTools,
    session: ResourceAny,
}

impl Instance {
    fn new(runtime: &Runtime, provider: Arc<DynProvider>, options: SessionOptions) -> Result<Self> {
        let state = HostState::new(
            provider,
            runtime.limits.memory_bytes,
            runtime.limits.max_resources,
        );
        let mut store = Store::new(&runtime.engine, state);
        store.limiter(|s| s.store_limits());
        store.epoch_deadline_callback(|mut ctx| {
            if ctx.data_mut().take_grace() {
                return Ok(wasmtime::UpdateDeadline::Continue(deadline_ticks(
                    COMMIT_GRACE,
                )));
            }
            Err(wasmtime::Trap::Interrupt.into())
        });
        store.set_epoch_deadline(deadline_ticks(runtime.limits.call_timeout));
        let bindings = runtime.pre.instantiate(&mut store)?;
        let session = bindings.dsh_fs_tools().session().call_constructor(
            &mut store,
            api::SessionOptions {
                observation_policy: options.observation_policy,
                journal_bytes: options.journal_bytes,
            },
        )?;
        Ok(Instance {
            store,
            bindings,
            session,
        })
    }

    fn execute(&mut self, limits: &Limits, tool: &str, args: &str) -> Result<ToolResult> {
        self.store.data_mut().begin_call();
        self.store
            .set_epoch_deadline(deadline_ticks(limits.call_timeout));
        // Providers see the same deadline: they bound their waits by it and
        // give up before their commit point once it passed.
        let deadline = std::time::Instant::now() + limits.call_timeout;
        let (bindings, session) = (&self.bindings, self.session);
        let r = dsh_fs_core::deadline::scope(deadline, || {
            bindings
                .dsh_fs_tools()
                .session()
                .call_execute(&mut self.store, session, tool, args)
        })?;
        Ok(ToolResult {
            text: r.text,
            is_error: r.is_error,
            error: r.error.map(|e| ToolError {
                code: e.code,
                message: e.message,
            }),
        })
    }
}

/// One line naming why the component stopped: the trap kind, or the host
/// error that raised it (without the wasm backtrace).
fn trap_cause(trap: &anyhow::Error) -> String {
    let cause = match trap.downcast_ref::<wasmtime::Trap>() {
        Some(kind) => kind.to_string(),
        None => trap.root_cause().to_string(),
    };
    cause.lines().next().unwrap_or("unknown trap").to_owned()
}

fn deadline_ticks(timeout: Duration) -> u64 {
    (timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}
