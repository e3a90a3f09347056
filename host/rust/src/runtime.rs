//! The wasmtime side, set up once per process: a [`Runtime`] holds the
//! engine, the compiled component (compiled when this crate was built, else
//! when first used and then cached on disk), the linked
//! `InstancePre` and the epoch ticker that call deadlines count in, and
//! [`Limits`] for every call. Sessions on it live in [`crate::session`].

use crate::bindings::{FsTools, FsToolsPre};
use crate::state::HostState;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

/// The tools component, built from `guest/` by this crate's build script,
/// deflated: it is read only to compile it when the precompiled form below
/// does not fit, or by [`component`]. (1.5 MB less binary.)
const DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/dsh_fs_tools.wasm.deflate"));

/// The tools component's content hash, taken by the build script: what the
/// name of its cache file carries, known without inflating it.
const COMPONENT_HASH: &str = env!("DSH_FS_COMPONENT_HASH");

/// The tools component embedded in this crate (built from `guest/` by its
/// build script), as a component file's bytes.
pub fn component() -> Vec<u8> {
    miniz_oxide::inflate::decompress_to_vec(DEFLATED)
        .expect("the build script deflated the component embedded here")
}

/// The component compiled to machine code for the machine that built this
/// crate, by the build script; empty when it could not be (no wasmtime CLI of
/// the linked release, a cross build). Loaded only after wasmtime has checked
/// that it fits this engine and CPU, and then run where it lies: page-aligned,
/// so its code pages are made executable in place ([`InPlace`]).
static PRECOMPILED: &PageAligned<[u8]> = &PageAligned(*include_bytes!(concat!(
    env!("OUT_DIR"),
    "/dsh_fs_tools.cwasm"
)));

/// The page size the embedded artifact is aligned to (and padded to).
const PAGE: usize = 4096;

#[repr(C, align(4096))]
struct PageAligned<T: ?Sized>(T);

/// Where the build left the component file (`target/guest/wasm32-wasip2/release/dsh_fs_tools.wasm`).
pub const COMPONENT_PATH: &str = env!("DSH_FS_COMPONENT_PATH");

/// How often the epoch advances; the granularity of call deadlines.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

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

    /// Configures the engine, loads the component (precompiled with the
    /// build, else cached, else compiled and cached) and links it.
    pub fn build(self) -> Result<Runtime> {
        let embedded = if self.component.is_none() {
            embedded()
        } else {
            None
        };
        let (engine, component, origin) = match embedded {
            Some((engine, component)) => (engine, component, ComponentOrigin::Precompiled),
            None => {
                let engine = new_engine(None)?;
                let cache = self.cache_dir.unwrap_or_else(default_cache_dir);
                let (component, origin) = match self.component {
                    Some(bytes) => {
                        let hash = format!("{:032x}", dsh_fs_core::text::content_hash(&bytes));
                        load_component(&engine, &hash, || bytes, None, cache.as_deref())?
                    }
                    None => load_component(
                        &engine,
                        COMPONENT_HASH,
                        component,
                        Some(&PRECOMPILED.0),
                        cache.as_deref(),
                    )?,
                };
                (engine, component, origin)
            }
        };

        let mut linker = Linker::<HostState>::new(&engine);
        add_wasi(&mut linker)?;
        FsTools::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |s| s)?;
        let pre = FsToolsPre::new(linker.instantiate_pre(&component)?)?;
        Ok(Runtime {
            engine,
            pre,
            limits: self.limits,
            origin,
        })
    }
}

/// The WASI that Rust's wasm32-wasip2 std imports (the CLI's environment,
/// exit and standard streams, the clocks, the random seed of its hash maps,
/// and the streams and polls they use), over an empty `WasiCtx`, which
/// grants nothing. The component imports nothing else, so the filesystem
/// and sockets are not linked at all (nor built into the binary).
fn add_wasi(l: &mut Linker<HostState>) -> Result<()> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
    use wasmtime_wasi::p2::bindings::{cli, clocks, random, sync::io};
    use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
    use wasmtime_wasi::{ResourceTable, WasiView};
    struct Table;
    impl wasmtime::component::HasData for Table {
        type Data<'a> = &'a mut ResourceTable;
    }
    type T = HostState;
    io::error::add_to_linker::<T, Table>(l, |t| t.ctx().table)?;
    io::poll::add_to_linker::<T, Table>(l, |t| t.ctx().table)?;
    io::streams::add_to_linker::<T, Table>(l, |t| t.ctx().table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(l, T::random)?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, T::random)?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, T::random)?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    Ok(())
}

/// An engine with the settings the component was compiled for, and its
/// epoch ticker (the clock of call deadlines), which stops with the engine.
fn new_engine(code_memory: Option<Arc<dyn wasmtime::CustomCodeMemory>>) -> Result<Engine> {
    let mut config = Config::new();
    // Any setting here that reaches compiled code must also be passed to
    // `wasmtime compile` by build.rs (`COMPILE_FLAGS`).
    config.epoch_interruption(true);
    config.with_custom_code_memory(code_memory);
    let engine = Engine::new(&config)?;
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
    Ok(engine)
}

/// The embedded component run where it lies in the binary, on an engine
/// every runtime of the default component in this process shares: loaded
/// once, since the code is not copied, so its pages are made executable and
/// its unwind tables registered once. `None` when the build made no artifact,
/// it does not fit this engine and CPU, or pages here are not 4 KiB: then
/// each runtime loads its own copy (or the cache's, or compiles).
fn embedded() -> Option<(Engine, Component)> {
    static EMBEDDED: OnceLock<Option<(Engine, Component)>> = OnceLock::new();
    EMBEDDED
        .get_or_init(|| {
            let bytes: &'static [u8] = &PRECOMPILED.0;
            if bytes.is_empty()
                || !(bytes.as_ptr() as usize).is_multiple_of(PAGE)
                || rustix::param::page_size() != PAGE
            {
                return None;
            }
            let engine = new_engine(Some(Arc::new(InPlace))).ok()?;
            // SAFETY: the bytes are the output of `wasmtime compile` run by
            // this crate's build script on the component embedded beside
            // them (part of the binary, as trusted as its own code);
            // `deserialize_raw` checks the wasmtime release, target, CPU
            // features and engine settings. They are a static, never
            // written (only their protection changes, by `InPlace`), and
            // live as long as the process.
            let component =
                unsafe { Component::deserialize_raw(&engine, std::ptr::NonNull::from(bytes)) }
                    .ok()?;
            Some((engine, component))
        })
        .clone()
}

/// A loaded tools component, ready to open sessions. Cheap to share.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) pre: FsToolsPre<HostState>,
    pub(crate) limits: Limits,
    origin: ComponentOrigin,
}

/// Where a [`Runtime`]'s machine code came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComponentOrigin {
    /// Compiled when this crate was built, embedded in the binary and run
    /// from there (or from a copy, where pages are not 4 KiB).
    Precompiled,
    /// Loaded from the compiled-component cache.
    Cached,
    /// Compiled by this process (and cached when the cache is writable).
    Compiled,
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

    /// Where the component's machine code came from: the build, the cache,
    /// or a compilation by this process.
    pub fn origin(&self) -> ComponentOrigin {
        self.origin
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

/// Loads the compiled form of `bytes` (whose content hash is `hash`): a copy
/// of the build's artifact (`precompiled`, embedded), when wasmtime finds it
/// fits this engine and CPU; else from `cache`, mapped from its file (pages
/// shared by every process); else it compiles `bytes` and stores the result
/// there, atomically, so concurrent processes never see half of one.
fn load_component(
    engine: &Engine,
    hash: &str,
    bytes: impl FnOnce() -> Vec<u8>,
    precompiled: Option<&'static [u8]>,
    cache: Option<&Path>,
) -> Result<(Component, ComponentOrigin)> {
    if let Some(p) = precompiled.filter(|p| !p.is_empty()) {
        // SAFETY: as in `embedded`; this copies them.
        if let Ok(c) = unsafe { Component::deserialize(engine, p) } {
            return Ok((c, ComponentOrigin::Precompiled));
        }
    }
    let Some(cache) = cache else {
        return Ok((Component::new(engine, bytes())?, ComponentOrigin::Compiled));
    };
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let file = cache.join(format!("tools-{:016x}{hash}.cwasm", h.finish()));
    // SAFETY: the file was written by this function for this engine
    // configuration (its name carries the compatibility hash and the
    // component's hash) from this engine's compilation; wasmtime checks the
    // release, target, CPU features and settings before using it; the cache
    // directory is the user's own. A stale or damaged file is replaced below.
    if file.exists()
        && let Ok(c) = unsafe { Component::deserialize_file(engine, &file) }
    {
        return Ok((c, ComponentOrigin::Cached));
    }
    let compiled = engine.precompile_component(&bytes())?;
    // SAFETY: `compiled` was produced by this very engine just above.
    let component = unsafe { Component::deserialize(engine, &compiled)? };
    if let Err(e) = store(cache, &file, &compiled) {
        // The cache is an optimisation; a read-only home must not stop the tools.
        eprintln!(
            "dsh-fs: not caching the compiled component in {}: {e}",
            cache.display()
        );
    }
    Ok((component, ComponentOrigin::Compiled))
}

/// Makes the embedded artifact's code executable where it lies in the
/// binary's read-only data, so it needs no copy and no cache file: a first
/// start costs what every start costs, and every process shares the pages
/// of the binary. (The engine it serves compiles nothing; were it to, its
/// own mappings would be protected the same way.)
struct InPlace;

impl InPlace {
    fn protect(
        ptr: *const u8,
        len: usize,
        flags: rustix::mm::MprotectFlags,
    ) -> wasmtime::Result<()> {
        if len == 0 {
            return Ok(());
        }
        let page = rustix::param::page_size();
        let start = ptr as usize / page * page;
        let end = (ptr as usize + len).next_multiple_of(page);
        // SAFETY: wasmtime passes a range of code memory it owns or was given
        // (`deserialize_raw`): whole pages of it (the embedded artifact is
        // page-aligned and padded to a page), with nothing else on them.
        unsafe { rustix::mm::mprotect(start as *mut _, end - start, flags) }
            .map_err(|e| wasmtime::format_err!("protecting compiled code: {e}"))
    }
}

impl wasmtime::CustomCodeMemory for InPlace {
    fn required_alignment(&self) -> usize {
        rustix::param::page_size()
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        use rustix::mm::MprotectFlags as F;
        Self::protect(ptr, len, F::READ | F::EXEC)
    }

    /// Back to writable for wasmtime's own memory, as its contract says; the
    /// embedded artifact, loaded once for the process, stays as it is.
    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        use rustix::mm::MprotectFlags as F;
        if PRECOMPILED.0.as_ptr_range().contains(&ptr) {
            return Ok(());
        }
        Self::protect(ptr, len, F::READ | F::WRITE)
    }
}

/// Writes `bytes` to `file` in `cache` through a file beside it.
fn store(cache: &Path, file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(cache)?;
    let mut tmp = tempfile::NamedTempFile::new_in(cache)?;
    tmp.write_all(bytes)?;
    tmp.persist(file)?;
    Ok(())
}
