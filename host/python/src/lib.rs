//! `dsh_fs._native`: the Rust host (wasmtime and the embedded tools
//! component) as a Python extension module. The public Python API is
//! `host/python/dsh_fs/__init__.py`, which wraps these functions with JSON
//! (de)serialisation and a result class; the `dsh-fs` script of the wheel
//! calls [`main`]. Every call that runs the component releases the GIL.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The process's runtime: the engine and the compiled component, loaded once
/// (compiling takes seconds; later processes take it from the on-disk cache).
fn runtime() -> PyResult<&'static dsh_fs::Runtime> {
    static RUNTIME: OnceLock<dsh_fs::Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = dsh_fs::Runtime::new()
        .map_err(|e| PyRuntimeError::new_err(format!("loading the tools component: {e:#}")))?;
    Ok(RUNTIME.get_or_init(|| runtime))
}

/// One agent session on a directory or an object-store prefix: the owner of
/// the read-before-edit observations, kept across calls.
#[pyclass(frozen, module = "dsh_fs._native")]
struct Session {
    inner: Mutex<dsh_fs::Session>,
}

#[pymethods]
impl Session {
    /// Opens a session on `root` (a directory) or `store` (`s3://BUCKET/PREFIX`,
    /// with `endpoint` and `region`; credentials from the AWS environment
    /// variables), as `dsh-fs --root` and `--store` do.
    #[new]
    #[pyo3(signature = (root, store, endpoint, region, policy, journal_bytes = dsh_fs::DEFAULT_JOURNAL_BYTES))]
    fn new(
        py: Python<'_>,
        root: Option<PathBuf>,
        store: Option<String>,
        endpoint: Option<String>,
        region: Option<String>,
        policy: bool,
        journal_bytes: u64,
    ) -> PyResult<Self> {
        py.detach(|| {
            let runtime = runtime()?;
            let provider: Arc<dsh_fs::DynProvider> = match (root, store) {
                // `FileNotFoundError`, `PermissionError`, ... naming the root.
                (Some(root), None) => {
                    Arc::new(dsh_fs::LocalProvider::new(dsh_fs::LocalStore::new(&root)?))
                }
                (None, Some(url)) => {
                    let options = dsh_fs::S3Options { endpoint, region };
                    let store = dsh_fs::BucketStore::from_url(&url, &options)
                        .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
                    Arc::new(dsh_fs::ObjectStoreProvider::new(store))
                }
                _ => {
                    return Err(PyValueError::new_err(
                        "a session needs exactly one of root or store",
                    ));
                }
            };
            let options = dsh_fs::SessionOptions {
                observation_policy: policy,
                journal_bytes,
            };
            runtime
                .session(provider, options)
                .map_err(|e| PyRuntimeError::new_err(format!("{e:#}")))
        })
        .map(|session| Session {
            inner: Mutex::new(session),
        })
    }

    /// Runs one tool call; returns `(text, is_error, code, message)`, with
    /// `code` and `message` `None` on success. Calls on one session from
    /// several threads run one after the other.
    fn execute(
        &self,
        py: Python<'_>,
        tool: String,
        arguments: String,
    ) -> (String, bool, Option<String>, Option<String>) {
        let result = py.detach(|| {
            let mut session = self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            session.execute(&tool, &arguments)
        });
        let (code, message) = result.error.map(|e| (e.code, e.message)).unzip();
        (result.text, result.is_error, code, message)
    }
}

/// The tool definitions (name, description, guidance, parameters as JSON
/// Schema), as a JSON array; the extra tools named in `extra` after them.
#[pyfunction]
#[pyo3(signature = (extra = Vec::new()))]
fn definitions(py: Python<'_>, extra: Vec<String>) -> PyResult<String> {
    py.detach(|| {
        let failed = |e: anyhow::Error| PyRuntimeError::new_err(format!("{e:#}"));
        let runtime = runtime()?;
        let mut definitions = runtime.definitions().map_err(failed)?;
        if !extra.is_empty() {
            let mut extras = runtime.extra_definitions().map_err(failed)?;
            for name in &extra {
                let Some(at) = extras.iter().position(|d| d.name == *name) else {
                    let known: Vec<&str> = extras.iter().map(|d| d.name.as_str()).collect();
                    return Err(PyValueError::new_err(format!(
                        "there is no extra tool named {name:?}; the extra tools are {}",
                        known.join(", ")
                    )));
                };
                definitions.push(extras.remove(at));
            }
        }
        serde_json::to_string(&definitions).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    })
}

/// Runs the `dsh-fs` command line with `argv` (the program name first) and
/// returns its exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| dsh_fs::cli::main(argv))
}

#[pymodule(name = "_native")]
mod native {
    #[pymodule_export]
    use super::{Session, definitions, main};
}
