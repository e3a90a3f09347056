//! The wasmtime side, set up once per process: a [`Runtime`] holds the
//! engine, the compiled component (compiled when this crate was built, else
//! when first used and then cached on disk), the linked
//! `InstancePre` and the epoch ticker that call deadlines count in, and
//! [`Limits`] for every call. Sessions on it live in [`crate::session`].

use crate::bindings::{FsTools, FsToolsPre};
use crate::state::HostState;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

/// The tools component, built from `guest/` by this crate's build script.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/dsh_fs_tools.wasm"));

/// The component compiled to machine code for the machine that built this
/// crate, by the build script; empty when it could not be (no wasmtime CLI of
/// the linked release, a cross build). Loaded only after wasmtime has checked
/// that it fits this engine and CPU.
const PRECOMPILED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/dsh_fs_tools.cwasm"));

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
        let mut config = Config::new();
        // Any setting here that reaches compiled code must also be passed to
        // `wasmtime compile` by build.rs (`COMPILE_FLAGS`).
        config.epoch_interruption(true);
        let engine = Engine::new(&config)?;
        let cache = self.cache_dir.unwrap_or_else(default_cache_dir);
        let (component, origin) = match &self.component {
            Some(bytes) => load_component(&engine, bytes, None, cache.as_deref())?,
            None => load_component(&engine, COMPONENT, Some(PRECOMPILED), cache.as_deref())?,
        };

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
            origin,
        })
    }
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
    /// Compiled when this crate was built, embedded in the binary.
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

/// Loads the compiled form of `bytes`: from `cache`, mapped from its file
/// (pages shared by every process). A process that finds no cache file puts
/// the build's artifact (`precompiled`, embedded) there and maps it, when
/// wasmtime finds it fits this engine and CPU; else it compiles `bytes` and
/// stores that instead. Files are written atomically, so concurrent
/// processes never see half of one. Without a cache the embedded artifact
/// is loaded from the binary (a copy), or `bytes` compiled.
fn load_component(
    engine: &Engine,
    bytes: &[u8],
    precompiled: Option<&[u8]>,
    cache: Option<&Path>,
) -> Result<(Component, ComponentOrigin)> {
    let precompiled = precompiled.filter(|p| !p.is_empty());
    // The embedded artifact copied out of the binary, when it fits.
    // SAFETY: the bytes are the output of `wasmtime compile` run by this
    // crate's build script on the component embedded beside them (part of
    // the binary, as trusted as its own code); `deserialize` checks the
    // wasmtime release, target, CPU features and engine settings.
    let copied = || precompiled.and_then(|p| unsafe { Component::deserialize(engine, p) }.ok());
    let Some(cache) = cache else {
        if let Some(c) = copied() {
            return Ok((c, ComponentOrigin::Precompiled));
        }
        return Ok((Component::new(engine, bytes)?, ComponentOrigin::Compiled));
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
    // SAFETY (each `deserialize_file` below): the file was written by this
    // function for this engine configuration (its name carries the
    // compatibility hash and the component's hash), from the build's
    // artifact or this engine's compilation; wasmtime checks the release,
    // target, CPU features and settings before using it; the cache
    // directory is the user's own. A stale or damaged file is replaced below.
    if file.exists()
        && let Ok(c) = unsafe { Component::deserialize_file(engine, &file) }
    {
        return Ok((c, ComponentOrigin::Cached));
    }
    if let Some(p) = precompiled {
        let loaded = if store(cache, &file, p).is_ok() {
            unsafe { Component::deserialize_file(engine, &file) }.ok()
        } else {
            // A cache that cannot be written (a read-only home): the copy.
            copied()
        };
        if let Some(c) = loaded {
            return Ok((c, ComponentOrigin::Precompiled));
        }
    }
    let compiled = engine.precompile_component(bytes)?;
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

/// Writes `bytes` to `file` in `cache` through a file beside it.
fn store(cache: &Path, file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(cache)?;
    let mut tmp = tempfile::NamedTempFile::new_in(cache)?;
    tmp.write_all(bytes)?;
    tmp.persist(file)?;
    Ok(())
}
