//! `cargo xtask oci pull` against a hostile registry: a small HTTP server on
//! loopback, written here, that speaks enough of the distribution API to
//! serve one wasm artifact, and then lies about it: blobs longer or shorter
//! than their descriptors, bytes that are not the digest's, a manifest that
//! never ends, descriptors that claim 100 GiB. Each pull must fail with an
//! error that says what was wrong, leave no file in the output directory, and
//! stay within a bounded peak memory (the child's max RSS, from `wait4`).
//!
//! The oversized bodies are 64 MiB, enough to tell buffering from streaming
//! on CI; `DSH_FS_HOSTILE_MIB` sets another size (768 reproduces the review's
//! figure).

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tempfile::TempDir;

const CONFIG: &str = "application/vnd.wasm.config.v0+json";
const WASM: &str = "application/wasm";
const POLICY: &str = "application/vnd.wasm.policy.v1+yaml";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const TITLE: &str = "org.opencontainers.image.title";

/// The repository and tag the hostile registry serves.
const REPOSITORY: &str = "hostile/fs";
const TAG: &str = "1.0";

/// The peak RSS a failed pull may reach: a debug xtask that pulls nothing
/// takes some 25 MiB; one that buffered the 64 MiB body would take that and
/// more.
const PEAK_LIMIT_KIB: u64 = 48 << 10;

/// How many bytes the oversized bodies have.
fn hostile_size() -> u64 {
    let mib = std::env::var("DSH_FS_HOSTILE_MIB")
        .ok()
        .map(|v| v.parse::<u64>().expect("DSH_FS_HOSTILE_MIB is a number"))
        .unwrap_or(64);
    mib << 20
}

#[test]
fn honest_artifact_from_the_test_registry_pulls() {
    // The same server and artifact the other tests twist, served as they
    // are: the failures below are the lies', not the server's.
    let artifact = Artifact::new();
    let registry = Hostile::start(artifact.routes());
    let out = TempDir::new().unwrap();
    let run = pull(&registry, out.path());
    assert!(run.success, "the honest pull failed:\n{}", run.stderr);
    assert_eq!(
        std::fs::read(out.path().join("fs.wasm")).unwrap(),
        artifact.wasm
    );
    assert_eq!(
        std::fs::read(out.path().join("policy.yaml")).unwrap(),
        artifact.policy
    );
    assert_eq!(files(out.path()), ["fs.wasm", "policy.yaml"]);
}

#[test]
fn oversized_layer_is_cut_off_at_its_descriptors_size() {
    let artifact = Artifact::new();
    let size = hostile_size();
    let declared = artifact.wasm.len();
    // Without a Content-Length (the body ends when the connection does), then
    // with an honest one announcing the hostile size.
    for announce in [false, true] {
        let mut routes = artifact.routes();
        routes.insert(
            blob_path(&artifact.wasm_digest),
            Response::repeat(b'w', size, announce),
        );
        let registry = Hostile::start(routes);
        let out = TempDir::new().unwrap();
        let run = pull(&registry, out.path());
        eprintln!(
            "layer of {declared} bytes served as {size} (Content-Length: {announce}): \
             peak RSS {} KiB, {} bytes sent",
            run.peak_kib,
            registry.sent()
        );
        assert!(!run.success, "a pull of an oversized layer succeeded");
        let expected = if announce {
            format!("announces {size} bytes")
        } else {
            format!("more than the {declared} bytes its descriptor declares")
        };
        assert!(
            run.stderr.contains(&expected),
            "{expected}:\n{}",
            run.stderr
        );
        assert!(run.stderr.contains(&artifact.wasm_digest), "{}", run.stderr);
        assert_eq!(files(out.path()), Vec::<String>::new());
        assert!(
            run.peak_kib < PEAK_LIMIT_KIB,
            "the pull of a {size}-byte body peaked at {} KiB",
            run.peak_kib
        );
        assert!(
            registry.sent() < size,
            "the client read the whole {size}-byte body"
        );
    }
}

#[test]
fn short_layer_is_refused_and_leaves_nothing() {
    let artifact = Artifact::new();
    let declared = artifact.wasm.len();
    let short = artifact.wasm[..declared - 100].to_vec();
    let ended = format!(
        "ended after {} of the {declared} bytes its descriptor declares",
        short.len()
    );
    // Ended early with no Content-Length; with one that says the
    // descriptor's size and a connection closed before it; with one that
    // owns up to the short size (refused before the body).
    for (response, expected) in [
        (
            Response::bytes(short.clone()).with_length(None),
            ended.clone(),
        ),
        (
            Response::bytes(short.clone()).with_length(Some(declared as u64)),
            ended.clone(),
        ),
        (
            Response::bytes(short.clone()),
            format!(
                "announces {} bytes for {}, whose descriptor declares {declared}",
                short.len(),
                artifact.wasm_digest
            ),
        ),
    ] {
        let mut routes = artifact.routes();
        routes.insert(blob_path(&artifact.wasm_digest), response);
        let registry = Hostile::start(routes);
        let out = TempDir::new().unwrap();
        let run = pull(&registry, out.path());
        assert!(!run.success, "a pull of a short layer succeeded");
        assert!(
            run.stderr.contains(&expected),
            "{expected}:\n{}",
            run.stderr
        );
        assert_eq!(files(out.path()), Vec::<String>::new());
    }
}

#[test]
fn layer_with_the_wrong_digest_is_refused_and_leaves_nothing() {
    let artifact = Artifact::new();
    let mut wrong = artifact.wasm.clone();
    *wrong.last_mut().unwrap() ^= 1;
    let mut routes = artifact.routes();
    routes.insert(
        blob_path(&artifact.wasm_digest),
        Response::bytes(wrong.clone()),
    );
    let registry = Hostile::start(routes);
    let out = TempDir::new().unwrap();
    let run = pull(&registry, out.path());
    assert!(
        !run.success,
        "a pull of a layer with the wrong bytes succeeded"
    );
    let expected = format!(
        "the bytes sent for {} have the digest {}",
        artifact.wasm_digest,
        sha256(&wrong)
    );
    assert!(
        run.stderr.contains(&expected),
        "{expected}:\n{}",
        run.stderr
    );
    assert_eq!(files(out.path()), Vec::<String>::new());
}

#[test]
fn a_bad_second_layer_leaves_not_even_the_first() {
    let artifact = Artifact::new();
    let mut routes = artifact.routes();
    routes.insert(
        blob_path(&artifact.policy_digest),
        Response::repeat(b'p', 1 << 20, false),
    );
    let registry = Hostile::start(routes);
    let out = TempDir::new().unwrap();
    let run = pull(&registry, out.path());
    assert!(!run.success, "a pull with a bad policy layer succeeded");
    assert!(
        run.stderr.contains(&artifact.policy_digest),
        "{}",
        run.stderr
    );
    assert_eq!(files(out.path()), Vec::<String>::new());
}

#[test]
fn endless_manifest_and_config_are_cut_off() {
    let artifact = Artifact::new();
    let size = hostile_size();
    let manifest = format!("/v2/{REPOSITORY}/manifests/{TAG}");
    let config = blob_path(&artifact.config_digest);
    for (path, what) in [(&manifest, "manifest"), (&config, "config")] {
        let mut routes = artifact.routes();
        routes.insert(path.clone(), Response::repeat(b' ', size, false));
        let registry = Hostile::start(routes);
        let out = TempDir::new().unwrap();
        let run = pull(&registry, out.path());
        eprintln!(
            "{what} served as {size} bytes: peak RSS {} KiB, {} bytes sent",
            run.peak_kib,
            registry.sent()
        );
        assert!(!run.success, "a pull of an endless {what} succeeded");
        let expected = if what == "manifest" {
            "the manifest is larger than".to_string()
        } else {
            format!(
                "more than the {} bytes its descriptor declares",
                artifact.config.len()
            )
        };
        assert!(
            run.stderr.contains(&expected),
            "{expected}:\n{}",
            run.stderr
        );
        assert_eq!(files(out.path()), Vec::<String>::new());
        assert!(
            run.peak_kib < PEAK_LIMIT_KIB,
            "the pull of a {size}-byte {what} peaked at {} KiB",
            run.peak_kib
        );
    }
}

#[test]
fn descriptors_claiming_huge_or_negative_sizes_are_refused_unfetched() {
    let artifact = Artifact::new();
    for (layer_size, config_size, expected) in [
        (100i64 << 30, None, "declares 107374182400 bytes, more than"),
        (-1, None, "declares a negative size"),
        (
            300,
            Some(1i64 << 40),
            "declares 1099511627776 bytes, more than",
        ),
    ] {
        let mut artifact = artifact.clone();
        artifact.wasm_size = layer_size;
        if let Some(size) = config_size {
            artifact.config_size = size;
        }
        let registry = Hostile::start(artifact.routes());
        let out = TempDir::new().unwrap();
        let run = pull(&registry, out.path());
        assert!(
            !run.success,
            "a pull of a {layer_size}-byte layer succeeded"
        );
        assert!(run.stderr.contains(expected), "{expected}:\n{}", run.stderr);
        assert_eq!(files(out.path()), Vec::<String>::new());
        let requested = registry.requests();
        assert!(
            !requested.contains(&blob_path(&artifact.wasm_digest)),
            "the layer was fetched: {requested:?}"
        );
    }
}

/// A wasm artifact with a component layer and a policy layer: its bytes and
/// what its manifest declares of them.
#[derive(Clone)]
struct Artifact {
    wasm: Vec<u8>,
    wasm_digest: String,
    wasm_size: i64,
    policy: Vec<u8>,
    policy_digest: String,
    config: Vec<u8>,
    config_digest: String,
    config_size: i64,
}

impl Artifact {
    fn new() -> Self {
        // Pull does not validate the component: any bytes do.
        let mut wasm = b"\0asm\x0d\0\x01\0".to_vec();
        wasm.resize(300, 0x5a);
        let policy = b"version: \"1.0\"\npermissions: {}\n".to_vec();
        let (wasm_digest, policy_digest) = (sha256(&wasm), sha256(&policy));
        let config = serde_json::to_vec(&serde_json::json!({
            "created": "2025-01-01T00:00:00Z",
            "author": null,
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": [wasm_digest, policy_digest],
            "component": {"exports": [], "imports": [], "target": null},
        }))
        .unwrap();
        Artifact {
            wasm_size: wasm.len() as i64,
            wasm,
            wasm_digest,
            policy,
            policy_digest,
            config_digest: sha256(&config),
            config_size: config.len() as i64,
            config,
        }
    }

    fn manifest(&self) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": {
                "mediaType": CONFIG,
                "digest": self.config_digest,
                "size": self.config_size,
            },
            "layers": [
                {
                    "mediaType": WASM,
                    "digest": self.wasm_digest,
                    "size": self.wasm_size,
                    "annotations": {TITLE: "fs.wasm"},
                },
                {
                    "mediaType": POLICY,
                    "digest": self.policy_digest,
                    "size": self.policy.len(),
                },
            ],
        }))
        .unwrap()
    }

    /// The honest registry: `/v2/`, the manifest by tag, the three blobs.
    fn routes(&self) -> Routes {
        let manifest = self.manifest();
        let mut routes = Routes::new();
        routes.insert("/v2/".into(), Response::bytes(b"{}".to_vec()));
        routes.insert(
            format!("/v2/{REPOSITORY}/manifests/{TAG}"),
            Response::bytes(manifest.clone())
                .typed(MANIFEST)
                .with_digest(sha256(&manifest)),
        );
        routes.insert(
            blob_path(&self.config_digest),
            Response::bytes(self.config.clone()),
        );
        routes.insert(
            blob_path(&self.wasm_digest),
            Response::bytes(self.wasm.clone()),
        );
        routes.insert(
            blob_path(&self.policy_digest),
            Response::bytes(self.policy.clone()),
        );
        routes
    }
}

fn blob_path(digest: &str) -> String {
    format!("/v2/{REPOSITORY}/blobs/{digest}")
}

type Routes = std::collections::BTreeMap<String, Response>;

/// What the server answers a GET of a path with.
#[derive(Clone)]
struct Response {
    content_type: &'static str,
    body: Body,
    /// The Content-Length sent, if any.
    length: Option<u64>,
    digest: Option<String>,
}

#[derive(Clone)]
enum Body {
    Bytes(Vec<u8>),
    /// `len` copies of one byte, made as they are sent.
    Repeat(u8, u64),
}

impl Response {
    /// `bytes`, with their Content-Length.
    fn bytes(bytes: Vec<u8>) -> Self {
        Response {
            content_type: "application/octet-stream",
            length: Some(bytes.len() as u64),
            body: Body::Bytes(bytes),
            digest: None,
        }
    }

    /// `len` bytes `byte`; with `announce`, a Content-Length says so, else
    /// the body ends with the connection.
    fn repeat(byte: u8, len: u64, announce: bool) -> Self {
        Response {
            content_type: "application/octet-stream",
            length: announce.then_some(len),
            body: Body::Repeat(byte, len),
            digest: None,
        }
    }

    fn with_length(mut self, length: Option<u64>) -> Self {
        self.length = length;
        self
    }

    fn typed(mut self, content_type: &'static str) -> Self {
        self.content_type = content_type;
        self
    }

    fn with_digest(mut self, digest: String) -> Self {
        self.digest = Some(digest);
        self
    }
}

/// The hostile registry: one thread per connection, each answering one
/// request and closing, so a body without Content-Length ends with the
/// connection. Runs until the test process ends.
struct Hostile {
    addr: String,
    requests: Arc<Mutex<Vec<String>>>,
    /// Body bytes written to the client so far, over all connections.
    sent: Arc<AtomicU64>,
}

impl Hostile {
    fn start(routes: Routes) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let routes = Arc::new(routes);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicU64::new(0));
        let (r, s) = (requests.clone(), sent.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (routes, requests, sent) = (routes.clone(), r.clone(), s.clone());
                std::thread::spawn(move || serve(stream, &routes, &requests, &sent));
            }
        });
        Hostile {
            addr,
            requests,
            sent,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }
}

fn serve(mut stream: TcpStream, routes: &Routes, requests: &Mutex<Vec<String>>, sent: &AtomicU64) {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) if head.len() < 64 << 10 => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("").to_string();
    requests.lock().unwrap().push(path.clone());
    let response = match routes.get(&path) {
        Some(response) if method == "GET" => response.clone(),
        _ => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
    };
    let mut head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nConnection: close\r\n",
        response.content_type
    );
    if let Some(length) = response.length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    if let Some(digest) = &response.digest {
        head.push_str(&format!("Docker-Content-Digest: {digest}\r\n"));
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    match response.body {
        Body::Bytes(bytes) => {
            if stream.write_all(&bytes).is_ok() {
                sent.fetch_add(bytes.len() as u64, Ordering::SeqCst);
            }
        }
        Body::Repeat(byte, len) => {
            let chunk = vec![byte; 64 << 10];
            let mut left = len;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                if stream.write_all(&chunk[..n]).is_err() {
                    break;
                }
                sent.fetch_add(n as u64, Ordering::SeqCst);
                left -= n as u64;
            }
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// One `cargo xtask oci pull`: whether it succeeded, what it said, and its
/// peak RSS.
struct Run {
    success: bool,
    stderr: String,
    peak_kib: u64,
}

/// Pulls the hostile registry's artifact into `out` in a child xtask.
#[expect(clippy::zombie_processes, reason = "wait4 reaps the child")]
fn pull(registry: &Hostile, out: &Path) -> Run {
    let reference = format!("{}/{REPOSITORY}:{TAG}", registry.addr);
    let logs = TempDir::new().unwrap();
    let (stdout, stderr) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["oci", "pull", &reference, out.to_str().unwrap()])
        // anyhow's backtrace would read the debug info of the whole binary,
        // some 300 MiB of RSS that is no part of the pull.
        .env("RUST_LIB_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    // wait4, not Child::wait: the child's own rusage, whatever else this test
    // process has started and reaped.
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid one; wait4 fills it and the status.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let success = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let stderr = std::fs::read_to_string(&stderr).unwrap();
    if success {
        eprint!("{}", std::fs::read_to_string(&stdout).unwrap());
    }
    Run {
        success,
        stderr,
        // Linux counts ru_maxrss in KiB.
        peak_kib: usage.ru_maxrss as u64,
    }
}

/// The names in `dir`, sorted; none if it was never made.
fn files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
