//! The wasmtime side: one [`Runtime`] per process (engine, precompiled and
//! cached component, `InstancePre`, an epoch ticker) and one [`Session`] per
//! agent session (a store, an instance and the guest's session resource).
//!
//! Each call runs under a memory cap and an epoch deadline. A trap — a
//! timeout, memory exhaustion, a guest bug — becomes an error result; the
//! session then starts over on a fresh instance.

use crate::bindings::exports::dsh::fs::tools as api;
use crate::bindings::{FsTools, FsToolsPre};
use crate::provider::Provider;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::{Component, Linker, ResourceAny, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The tools component, built from `guest/` by this crate's build script.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/dsh_fs_tools.wasm"));

/// Where the build left the component file (`target/guest/wasm32-wasip2/release/dsh_fs_tools.wasm`).
pub const COMPONENT_PATH: &str = env!("DSH_FS_COMPONENT_PATH");

/// How often the epoch advances; the granularity of call deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Time the component gets past the deadline, once a change committed (or a
/// provider gave up at the deadline), to render its answer: the change
/// happened, or did not, and the answer must say which.
const COMMIT_GRACE: Duration = Duration::from_secs(5);

/// Per-call resource limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most linear memory one session's instance may use.
    pub memory_bytes: usize,
    /// Longest one call may run inside the component (host I/O included in
    /// the wall time, interrupted only while guest code runs).
    pub call_timeout: Duration,
    /// Largest result text accepted from the component; a larger one is
    /// replaced by an `INTERNAL_ERROR` result.
    pub max_result_bytes: usize,
    /// Most provider resources (targets, streams) one instance may hold open.
    pub max_resources: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            call_timeout: Duration::from_secs(30),
            max_result_bytes: 4 << 20,
            max_resources: 1024,
        }
    }
}

/// Builds a [`Runtime`].
#[derive(Debug, Default)]
pub struct RuntimeBuilder {
    component: Option<Vec<u8>>,
    cache_dir: Option<Option<PathBuf>>,
    limits: Limits,
}

impl RuntimeBuilder {
    /// Runs another component of the `dsh:fs/fs-tools` world instead of the embedded one.
    pub fn component(mut self, bytes: Vec<u8>) -> Self {
        self.component = Some(bytes);
        self
    }

    /// Where precompiled components are cached; `None` disables the cache.
    /// Default: `$DSH_FS_CACHE_DIR`, else `$XDG_CACHE_HOME/dsh-fs`, else `~/.cache/dsh-fs`.
    /// Only point this at a directory other users cannot write: a cached file
    /// is loaded as machine code.
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = Some(dir);
        self
    }

    /// Per-call limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Configures the engine, loads (or compiles and caches) the component
    /// and links it.
    pub fn build(self) -> Result<Runtime> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config)?;
        let bytes = self.component.as_deref().unwrap_or(COMPONENT);
        let cache = self.cache_dir.unwrap_or_else(default_cache_dir);
        let component = load_component(&engine, bytes, cache.as_deref())?;

        let mut linker = Linker::<HostState>::new(&engine);
        // Rust's wasm32-wasip2 std imports wasi:cli and wasi:io; they are
        // linked against an empty WasiCtx, which grants nothing.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        FsTools::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |s| s)?;
        let pre = FsToolsPre::new(linker.instantiate_pre(&component)?)?;

        let weak = engine.weak();
        std::thread::Builder::new()
            .name("dsh-fs-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })?;
        Ok(Runtime {
            engine,
            pre,
            limits: self.limits,
        })
    }
}

/// A loaded tools component, ready to open sessions. Cheap to share.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    pre: FsToolsPre<HostState>,
    limits: Limits,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// The embedded component with default limits and cache.
    pub fn new() -> Result<Self> {
        Self::builder().build()
    }

    /// A builder for other components, caches or limits.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// The engine (for embedders that want to share it).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Opens an agent session on `provider`.
    pub fn session(&self, provider: Arc<dyn Provider>, options: SessionOptions) -> Result<Session> {
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
        let provider = Arc::new(crate::provider::MemoryProvider::default());
        let mut instance = Instance::new(self, provider, SessionOptions::default())?;
        let defs = instance
            .bindings
            .dsh_fs_tools()
            .call_definitions(&mut instance.store)?;
        Ok(defs
            .into_iter()
            .map(|d| ToolDefinition {
                name: d.name,
                description: d.description,
                guidance: d.guidance,
                parameters: serde_json::from_str(&d.parameters).unwrap_or(serde_json::Value::Null),
            })
            .collect())
    }
}

/// How a session behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionOptions {
    /// Enforce read-before-write/edit and stale checks (default true).
    pub observation_policy: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            observation_policy: true,
        }
    }
}

/// One tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// `read`, `write`, `edit`, `glob` or `grep`.
    pub name: String,
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
    fn host_error(code: &str, message: String) -> Self {
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
    provider: Arc<dyn Provider>,
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
            let e = dsh_fs_tools::tools::too_large_arguments(tool, arguments_json.len());
            return ToolResult::host_error(&e.code, e.message);
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
                let committed = self.instance.store.data_mut().committed.take();
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
    fn new(
        runtime: &Runtime,
        provider: Arc<dyn Provider>,
        options: SessionOptions,
    ) -> Result<Self> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(runtime.limits.memory_bytes)
            .instances(16)
            .tables(64)
            .memories(16)
            .trap_on_grow_failure(true)
            .build();
        let state = HostState {
            provider,
            max_resources: runtime.limits.max_resources,
            live_resources: 0,
            table: ResourceTable::new(),
            wasi: WasiCtx::builder().build(),
            limits,
            committed: None,
            gave_up: false,
            grace_used: false,
        };
        let mut store = Store::new(&runtime.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|mut ctx| {
            let state = ctx.data_mut();
            if (state.committed.is_some() || state.gave_up) && !state.grace_used {
                state.grace_used = true;
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
            },
        )?;
        Ok(Instance {
            store,
            bindings,
            session,
        })
    }

    fn execute(&mut self, limits: &Limits, tool: &str, args: &str) -> Result<ToolResult> {
        let state = self.store.data_mut();
        (state.committed, state.gave_up, state.grace_used) = (None, false, false);
        self.store
            .set_epoch_deadline(deadline_ticks(limits.call_timeout));
        // Providers see the same deadline: they bound their waits by it and
        // give up before their commit point once it passed.
        let deadline = std::time::Instant::now() + limits.call_timeout;
        let (bindings, session) = (&self.bindings, self.session);
        let r = crate::deadline::scope(deadline, || {
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

/// What a store holds: the provider and the resources handed to the guest.
pub struct HostState {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) max_resources: usize,
    pub(crate) live_resources: usize,
    pub(crate) table: ResourceTable,
    wasi: WasiCtx,
    limits: StoreLimits,
    /// The display path of a change committed during the current call.
    pub(crate) committed: Option<String>,
    /// Whether a provider gave up at the deadline during the current call
    /// (`busy`, `aborted`): its answer, that nothing changed, is true and
    /// must reach the model, so it gets the grace period too.
    pub(crate) gave_up: bool,
    /// Whether the current call already had its grace period.
    grace_used: bool,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DSH_FS_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("dsh-fs"))
}

/// Loads the precompiled form of `bytes` from `cache`, or compiles it and
/// stores it there (atomically, so concurrent processes never see half a file).
fn load_component(engine: &Engine, bytes: &[u8], cache: Option<&Path>) -> Result<Component> {
    let Some(cache) = cache else {
        return Ok(Component::new(engine, bytes)?);
    };
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let id = format!(
        "{:016x}{:032x}",
        h.finish(),
        dsh_fs_core::text::content_hash(bytes)
    );
    let file = cache.join(format!("tools-{id}.cwasm"));
    if file.exists() {
        // SAFETY: the file was written by `precompile_component` below for
        // this engine configuration (its name carries the compatibility hash
        // and the component's hash); the cache directory is the user's own.
        match unsafe { Component::deserialize_file(engine, &file) } {
            Ok(c) => return Ok(c),
            Err(_) => { /* stale or damaged: rebuild it below */ }
        }
    }
    let compiled = engine.precompile_component(bytes)?;
    // SAFETY: `compiled` was produced by this very engine just above.
    let component = unsafe { Component::deserialize(engine, &compiled)? };
    let stored = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(cache)?;
        let tmp = cache.join(format!(".tools-{id}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &compiled)?;
        std::fs::rename(&tmp, &file)
    })();
    if let Err(e) = stored {
        // The cache is an optimisation; a read-only home must not stop the tools.
        eprintln!(
            "dsh-fs: not caching the compiled component in {}: {e}",
            cache.display()
        );
    }
    Ok(component)
}
