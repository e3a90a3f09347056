//! The object-store provider against a real S3-compatible server: `moto`, run
//! on loopback on a free port once for this test binary and stopped with it.
//! Each test works in a bucket of its own. The provider contract itself runs
//! in `contract::object_store`; this file adds what only a store has: large
//! objects in ranged GETs, the tools over a store, the CLI's `--store`, and two
//! `dsh-fs` processes racing one edit.

use crate::{call, code, fails, ok};
use dsh_fs::Provider;
use dsh_fs::object_store::aws::{AmazonS3, AmazonS3Builder};
use dsh_fs::object_store::path::Path as ObjectPath;
use dsh_fs::object_store::signer::{Method, SignedUrlOptions, Signer};
use dsh_fs::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use dsh_fs::{
    BucketStore, ErrorCode, ObjectStoreProvider, SessionOptions, TextStream, WriteIntent,
};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

const INSTALL: &str = "run scripts/setup, which installs moto[server]==5.2.5 into .venv/";

/// The Python that has moto: `$DSH_FS_PYTHON`, else the project's `.venv`
/// (made by `scripts/setup`), else `python3` on PATH.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("DSH_FS_PYTHON") {
        return python.into();
    }
    let venv = crate::workspace().join(".venv/bin/python");
    if venv.exists() {
        venv
    } else {
        "python3".into()
    }
}

/// `moto_server`'s own entry point, serving one request at a time. Its
/// threaded default checks `If-Match` and stores the object in two steps, so
/// two racing conditional PUTs can both succeed (measured: 6 double wins in
/// under 1000 eight-way races); served in turn, a conditional PUT is atomic, as
/// S3's is.
const MOTO_SERVER: &str = "
import sys
try:
    import moto.server as m, werkzeug.serving as w
except ImportError as e:
    sys.exit(f'moto is not installed: {e}')
m.run_simple = lambda *a, **k: w.run_simple(*a, **dict(k, threaded=False))
m.main()
";

/// A moto S3 server on `127.0.0.1`, killed when dropped, and in any case
/// when the test process exits (it is started with a parent-death signal from
/// a thread that lives as long as the process).
pub struct Moto {
    child: Mutex<Child>,
    port: u16,
    log: PathBuf,
}

impl Moto {
    /// The server shared by every test of this binary.
    pub fn shared() -> &'static Moto {
        static MOTO: OnceLock<Moto> = OnceLock::new();
        MOTO.get_or_init(Moto::start)
    }

    fn start() -> Moto {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("moto.log");
        let log_file = std::fs::File::create(&log).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("moto-parent".into())
            .spawn(move || {
                let mut cmd = Command::new(python());
                cmd.args([
                    "-c",
                    MOTO_SERVER,
                    "-H",
                    "127.0.0.1",
                    "-p",
                    &port.to_string(),
                ])
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file);
                // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
                unsafe {
                    cmd.pre_exec(|| {
                        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        Ok(())
                    });
                }
                tx.send(cmd.spawn()).unwrap();
                loop {
                    std::thread::park();
                }
            })
            .unwrap();
        let child = rx.recv().unwrap().unwrap_or_else(|e| {
            panic!(
                "starting moto's server with {} failed: {e} ({INSTALL})",
                python().display()
            )
        });
        let moto = Moto {
            child: Mutex::new(child),
            port,
            log,
        };
        moto.wait_until_it_answers();
        moto
    }

    fn wait_until_it_answers(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let exited = self.child.lock().unwrap().try_wait().unwrap();
            if let Some(status) = exited {
                panic!(
                    "moto's server exited with {status} before answering; the object-store tests need moto: {INSTALL}\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            if self.request("GET", "/").is_ok_and(|status| status == 200) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "moto's server did not answer on port {} within 60 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One unsigned HTTP/1.1 request; the status code.
    fn request(&self, method: &str, path: &str) -> std::io::Result<u16> {
        self.exchange(method, path).map(|(status, _)| status)
    }

    /// One unsigned HTTP/1.1 request; the status code and the whole response.
    fn exchange(&self, method: &str, path: &str) -> std::io::Result<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("not HTTP: {response:?}")))?;
        Ok((status, response))
    }

    /// The endpoint URL to give a client.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A new, empty bucket on the shared server, with a client of its own to
/// look at and change objects behind the provider's back.
pub struct Bucket {
    pub name: String,
    side_door: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
}

#[allow(clippy::new_without_default)] // each call makes a new bucket
impl Bucket {
    pub fn new() -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let moto = Moto::shared();
        let name = format!("dsh-fs-{}", COUNT.fetch_add(1, Ordering::Relaxed));
        let status = moto.request("PUT", &format!("/{name}")).unwrap();
        assert_eq!(status, 200, "creating bucket {name}");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        Bucket {
            side_door: client(&name),
            name,
            runtime,
        }
    }

    /// A provider serving `prefix` of this bucket, with a client of its own
    /// (its own connection pool, so it can serve another runtime).
    pub fn provider(&self, prefix: &str) -> Arc<ObjectStoreProvider> {
        Arc::new(ObjectStoreProvider::new(
            BucketStore::s3(s3_client(&self.name), prefix).unwrap(),
        ))
    }

    /// The byte store serving `prefix` of this bucket.
    pub fn byte_store(&self, prefix: &str) -> BucketStore {
        BucketStore::s3(s3_client(&self.name), prefix).unwrap()
    }

    /// The multipart uploads begun and neither completed nor aborted.
    pub fn open_uploads(&self) -> usize {
        let (status, response) = Moto::shared()
            .exchange("GET", &format!("/{}?uploads", self.name))
            .unwrap();
        assert_eq!(status, 200, "{response}");
        response.matches("<UploadId>").count()
    }

    /// The sizes of the parts uploaded so far to the one upload in progress.
    pub fn part_sizes(&self, key: &str) -> Vec<u64> {
        let moto = Moto::shared();
        let (_, uploads) = moto
            .exchange("GET", &format!("/{}?uploads", self.name))
            .unwrap();
        let id = uploads
            .split("<UploadId>")
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap();
        // ListParts wants a signed request: a presigned URL, sent as is.
        let url = self.runtime.block_on(s3_client(&self.name).signed_url_opts(
            Method::GET,
            &ObjectPath::parse(key).unwrap(),
            Duration::from_secs(60),
            &SignedUrlOptions::default().with_query([("uploadId", id)]),
        ));
        let url = url.unwrap();
        let path = format!("{}?{}", url.path(), url.query().unwrap());
        let (status, parts) = moto.exchange("GET", &path).unwrap();
        assert_eq!(status, 200, "{parts}");
        parts
            .split("<Size>")
            .skip(1)
            .map(|s| s.split('<').next().unwrap().parse().unwrap())
            .collect()
    }

    /// `s3://BUCKET/prefix`.
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.name)
    }

    pub fn put(&self, key: &str, bytes: &[u8]) {
        let payload = PutPayload::from(bytes.to_vec());
        self.runtime
            .block_on(
                self.side_door
                    .put(&ObjectPath::parse(key).unwrap(), payload),
            )
            .unwrap();
    }

    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.runtime.block_on(async {
            match self.side_door.get(&ObjectPath::parse(key).unwrap()).await {
                Ok(got) => Some(got.bytes().await.unwrap().to_vec()),
                Err(dsh_fs::object_store::Error::NotFound { .. }) => None,
                Err(e) => panic!("{e}"),
            }
        })
    }

    /// Every key in the bucket.
    pub fn keys(&self) -> Vec<String> {
        use futures_util::StreamExt;
        let mut keys: Vec<String> = self.runtime.block_on(
            self.side_door
                .list(None)
                .map(|m| m.unwrap().location.to_string())
                .collect(),
        );
        keys.sort();
        keys
    }

    /// Uploads the same bytes again as a one-part multipart upload: the
    /// content stays, the ETag changes.
    pub fn rewrite(&self, key: &str) {
        let bytes = self.get(key).unwrap();
        self.runtime.block_on(async {
            let path = ObjectPath::parse(key).unwrap();
            let mut upload = self.side_door.put_multipart(&path).await.unwrap();
            upload.put_part(PutPayload::from(bytes)).await.unwrap();
            upload.complete().await.unwrap();
        });
    }

    /// `dsh-fs ARGS... --store s3://BUCKET/PREFIX --endpoint MOTO` with test
    /// credentials in the environment (and no other AWS variable).
    pub fn dsh_fs(&self, prefix: &str, args: &[&str]) -> Command {
        self.dsh_fs_via(prefix, args, &Moto::shared().endpoint())
    }

    /// [`Bucket::dsh_fs`] with the store reached at `endpoint` (a proxy).
    pub fn dsh_fs_via(&self, prefix: &str, args: &[&str], endpoint: &str) -> Command {
        let mut cmd = crate::cli::dsh_fs();
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("AWS_") {
                cmd.env_remove(name);
            }
        }
        cmd.env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_REGION", "us-east-1");
        cmd.args(args)
            .args(["--store", &self.url(prefix)])
            .args(["--endpoint", endpoint]);
        cmd
    }
}

/// An S3 client for `bucket` on the shared server.
fn client(bucket: &str) -> Arc<dyn ObjectStore> {
    Arc::new(s3_client(bucket))
}

fn s3_client(bucket: &str) -> AmazonS3 {
    s3_client_at(bucket, &Moto::shared().endpoint())
}

fn s3_client_at(bucket: &str, endpoint: &str) -> AmazonS3 {
    dsh_fs::provider::install_crypto();
    AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name(bucket)
        .with_access_key_id("test")
        .with_secret_access_key("test")
        .build()
        .unwrap()
}

/// Text of `lines` numbered lines, about 32 bytes each.
fn numbered(lines: usize) -> String {
    (1..=lines)
        .map(|i| format!("line {i:>8} ✓ some text\n"))
        .collect()
}

#[test]
fn large_objects_stream_in_bounded_ranges() {
    let bucket = Bucket::new();
    let text = numbered(400_000);
    assert!(text.len() > 10 << 20, "{} bytes", text.len());
    bucket.put("ws/big.txt", text.as_bytes());
    let p = bucket.provider("ws");
    let t = p.resolve("big.txt").unwrap();
    let whole = p.read_text(&t, u64::MAX).unwrap();
    assert_eq!(whole.text, text);
    let mut s = p.stream_text(&t, 0).unwrap();
    let mut got = String::new();
    while let Some(piece) = s.next_chunk(1 << 20).unwrap() {
        assert!(piece.len() <= 1 << 20);
        got.push_str(&piece);
    }
    assert!(got == text, "streamed text differs");
    assert_eq!(s.version(), Some(whole.version));

    let mut session = crate::runtime()
        .session(p.clone(), SessionOptions::default())
        .unwrap();
    let read = ok(call(
        &mut session,
        "read",
        json!({"file_path": "big.txt", "offset": 399_999}),
    ));
    assert!(
        read.ends_with("399999: line   399999 ✓ some text\n400000: line   400000 ✓ some text\n(Lines 399999-400000 of 400000; end of file.)"),
        "{read}"
    );
    ok(call(
        &mut session,
        "edit",
        json!({"file_path": "big.txt", "old_string": "line   400000 ✓", "new_string": "last"}),
    ));
    assert!(
        bucket
            .get("ws/big.txt")
            .unwrap()
            .ends_with(b"line   399999 \xE2\x9C\x93 some text\nlast some text\n")
    );
}

#[test]
fn a_pass_over_a_large_object_is_two_gets() {
    // The first read hashes the whole object and the edit scans it for the
    // old string: each pass is one ranged GET and then one streamed GET of
    // the rest (not one GET per 8 MiB range), and the edit's unchanged
    // ranges are copied by the server. Counted at a proxy of this test's own.
    let bucket = Bucket::new();
    let text = numbered(1_000_000);
    assert!(text.len() > 3 * (8 << 20), "{} bytes", text.len());
    bucket.put("ws/big.txt", text.as_bytes());
    let proxy = crate::faults::proxy::Proxy::new();
    let p = Arc::new(ObjectStoreProvider::new(
        BucketStore::s3(s3_client_at(&bucket.name, &proxy.endpoint()), "ws").unwrap(),
    ));
    let mut session = crate::runtime()
        .session(p, SessionOptions::default())
        .unwrap();
    let gets = |requests: &[String]| requests.iter().filter(|r| r.starts_with("GET ")).count();

    proxy.arm(None, None);
    let read = ok(call(
        &mut session,
        "read",
        json!({"file_path": "big.txt", "offset": 500_000, "limit": 1}),
    ));
    let seen = proxy.disarm();
    assert!(
        read.contains("500000: line   500000 ✓ some text\n"),
        "{read}"
    );
    assert_eq!(gets(&seen.requests), 2, "{:?}", seen.requests);

    proxy.arm(None, None);
    ok(call(
        &mut session,
        "edit",
        json!({"file_path": "big.txt", "old_string": "line   500000 ✓", "new_string": "middle"}),
    ));
    let seen = proxy.disarm();
    eprintln!("the edit's requests: {:?}", seen.requests);
    // The scan for the old string (the first range, then the rest
    // streamed) and the bytes that fill the part after the new line; the
    // long unchanged ranges before and after are copied by the server.
    assert!(gets(&seen.requests) <= 3, "{:?}", seen.requests);
    assert!(seen.requests.len() <= 12, "{:?}", seen.requests);
    // One part of new bytes (the new line and what fills its part); the
    // ranges before and after it are copies (presigned `UploadPartCopy`),
    // the one after joined from the chunks the scan copied as it went.
    let parts = |copied: bool| {
        seen.requests
            .iter()
            .filter(|r| r.starts_with("PUT ") && r.contains("partNumber="))
            .filter(|r| r.contains("X-Amz-Signature=") == copied)
            .count()
    };
    assert_eq!((parts(false), parts(true)), (1, 2), "{:?}", seen.requests);
    let expected = text.replacen("line   500000 ✓", "middle", 1);
    assert!(
        bucket.get("ws/big.txt").unwrap() == expected.as_bytes(),
        "the edited object differs"
    );
    assert_eq!(bucket.open_uploads(), 0);
}

#[test]
fn a_replacement_mid_stream_is_stale() {
    let bucket = Bucket::new();
    bucket.put("big.txt", numbered(300_000).as_bytes());
    let p = bucket.provider("");
    let mut s = p.stream_text(&p.resolve("big.txt").unwrap(), 0).unwrap();
    s.next_chunk(1 << 20).unwrap().unwrap();
    bucket.put("big.txt", numbered(300_001).as_bytes());
    let err = loop {
        match s.next_chunk(1 << 20) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("a stream must not mix two versions of an object"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code, ErrorCode::StaleVersion, "{}", err.message);
}

#[test]
fn the_tools_work_on_a_store_like_on_a_directory() {
    let bucket = Bucket::new();
    bucket.put("proj/src/app.py", b"def main():\r\n    print('hello')\r\n");
    bucket.put("proj/data.bin", b"\xFF\xFEbinary");
    bucket.put("outside.txt", b"not in the workspace\n");
    let p = bucket.provider("proj");
    let mut session = crate::runtime()
        .session(p.clone(), SessionOptions::default())
        .unwrap();
    let read = ok(call(
        &mut session,
        "read",
        json!({"file_path": "/workspace/src/app.py"}),
    ));
    assert_eq!(
        read,
        "File: src/app.py\n1: def main():\n2:     print('hello')\n(End of file: 2 lines.)"
    );
    ok(call(
        &mut session,
        "edit",
        json!({"file_path": "src/app.py", "old_string": "'hello'", "new_string": "'hi'"}),
    ));
    assert_eq!(
        bucket.get("proj/src/app.py").unwrap(),
        b"def main():\r\n    print('hi')\r\n"
    );
    bucket.put(
        "proj/src/app.py",
        b"def main():\r\n    print('elsewhere')\r\n",
    );
    fails(
        call(
            &mut session,
            "edit",
            json!({"file_path": "src/app.py", "old_string": "'hi'", "new_string": "'hey'"}),
        ),
        "FS_STALE_VERSION",
    );
    for (path, expected) in [
        ("src", "FS_NOT_REGULAR_FILE"),
        ("data.bin", "FS_NOT_TEXT"),
        ("nope.txt", "FS_NOT_FOUND"),
        ("src/app.py/x", "FS_NOT_DIRECTORY"),
        ("../outside.txt", "FS_SANDBOX_DENIED"),
        ("/etc/passwd", "FS_SANDBOX_DENIED"),
    ] {
        let result = call(&mut session, "read", json!({"file_path": path}));
        assert_eq!(code(&result), expected, "{path}: {}", result.text);
    }
    fails(
        call(
            &mut session,
            "write",
            json!({"file_path": "src/app.py/x", "content": "x"}),
        ),
        "FS_NOT_DIRECTORY",
    );
    fails(
        call(
            &mut session,
            "write",
            json!({"file_path": "src", "content": "x"}),
        ),
        "FS_NOT_REGULAR_FILE",
    );
    ok(call(
        &mut session,
        "write",
        json!({"file_path": "new/deep/file.txt", "content": "fresh\n"}),
    ));
    assert_eq!(
        bucket.keys(),
        [
            "outside.txt",
            "proj/data.bin",
            "proj/new/deep/file.txt",
            "proj/src/app.py"
        ],
        "no marker objects for parents"
    );
}

#[test]
fn racing_guarded_writes_from_separate_clients_have_one_winner() {
    let bucket = Bucket::new();
    bucket.put("w/race.txt", b"start\n");
    let providers: Vec<_> = (0..4).map(|_| bucket.provider("w")).collect();
    let t = providers[0].resolve("race.txt").unwrap();
    let seen = providers[0].read_text(&t, 1 << 20).unwrap().version;
    let barrier = Arc::new(std::sync::Barrier::new(4));
    let handles: Vec<_> = providers
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let (t, seen, barrier) = (t.clone(), seen.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let content = format!("writer {i}\n");
                p.write_text(&t, &content, Some(WriteIntent::ReplaceIfVersion(seen)))
                    .map(|_| content)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(e.code, ErrorCode::StaleVersion, "{}", e.message);
    }
    assert_eq!(bucket.get("w/race.txt").unwrap(), winners[0].as_bytes());
}

#[test]
fn call_serves_a_store_url() {
    let bucket = Bucket::new();
    bucket.put("p/notes.md", b"# Notes\n");
    let out = bucket
        .dsh_fs("p", &["call", "read", r#"{"file_path":"notes.md"}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "File: notes.md\n1: # Notes\n(End of file: 1 line.)\n"
    );
    let both = bucket
        .dsh_fs(
            "p",
            &["call", "read", r#"{"file_path":"notes.md"}"#, "--root", "."],
        )
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "{both:?}");
    assert!(String::from_utf8_lossy(&both.stderr).contains("--root"));
}

/// S3 answers a missing bucket with an XML body; the result names the
/// bucket and the fix instead of passing the XML on.
#[test]
fn a_missing_bucket_is_named_without_raw_xml() {
    let missing = format!("no-such-bucket-{}", std::process::id());
    let out = crate::cli::dsh_fs()
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .args([
            "call",
            "write",
            r#"{"file_path":"notes.md","content":"x"}"#,
            "--json",
        ])
        .args(["--store", &format!("s3://{missing}/p")])
        .args(["--endpoint", &Moto::shared().endpoint()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error"]["code"], "FS_IO_ERROR");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "notes.md: the bucket `{missing}` does not exist; create it, or name an existing bucket in the store URL."
        )),
        "{message}"
    );
    assert!(!message.contains('<'), "{message}");
}

fn params(tool: &'static str, args: Value) -> CallToolRequestParams {
    let Value::Object(map) = args else {
        unreachable!()
    };
    CallToolRequestParams::new(tool).with_arguments(JsonObject::from_iter(map))
}

#[test]
fn edits_racing_in_two_processes_have_exactly_one_winner() {
    let bucket = Bucket::new();
    bucket.put("team/shared.txt", b"owner = nobody\n");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let outcome = runtime.block_on(async {
        let spawn = || async {
            let cmd = tokio::process::Command::from(bucket.dsh_fs("team", &["mcp"]));
            ().serve(TokioChildProcess::new(cmd).unwrap())
                .await
                .unwrap()
        };
        let (a, b) = tokio::join!(spawn(), spawn());
        for client in [&a, &b] {
            let read = client
                .call_tool(params("read", json!({"file_path": "shared.txt"})))
                .await
                .unwrap();
            assert_eq!(read.is_error, Some(false));
        }
        let edit = |who: &'static str| {
            params(
                "edit",
                json!({"file_path": "shared.txt", "old_string": "nobody", "new_string": who}),
            )
        };
        let (ra, rb) = tokio::join!(a.call_tool(edit("alice")), b.call_tool(edit("bob")));
        let results = [("alice", ra.unwrap()), ("bob", rb.unwrap())];
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
        results
    });
    let winners: Vec<_> = outcome
        .iter()
        .filter(|(_, r)| r.is_error == Some(false))
        .map(|(who, _)| *who)
        .collect();
    assert_eq!(winners.len(), 1, "{outcome:?}");
    let loser = outcome
        .iter()
        .find(|(_, r)| r.is_error == Some(true))
        .unwrap();
    assert_eq!(
        loser.1.structured_content.as_ref().unwrap()["error"]["code"],
        "FS_STALE_VERSION"
    );
    assert_eq!(
        bucket.get("team/shared.txt").unwrap(),
        format!("owner = {}\n", winners[0]).as_bytes()
    );
}

/// At least `len` bytes of numbered lines (28 bytes each).
fn lines_of(len: usize) -> Vec<u8> {
    numbered(len.div_ceil(28)).into_bytes()
}

/// A replacement larger than one part is a multipart upload; its completion
/// carries the guard, and a refused one leaves no upload behind.
#[test]
fn a_multipart_create_loses_to_a_create_in_between() {
    use dsh_fs::ByteStore;
    use dsh_fs_core::store::{Guard, Replace};
    let bucket = Bucket::new();
    let store = bucket.byte_store("p");
    let layer = ObjectStoreProvider::new(bucket.byte_store("p"));
    let target = layer.resolve("big.txt").unwrap();
    let (mut replace, current) = store.replace(&target, true).unwrap();
    assert!(current.is_none());
    replace.write(&lines_of(20 << 20)).unwrap();
    assert_eq!(
        bucket.open_uploads(),
        1,
        "the parts are uploaded while written"
    );
    bucket.put("p/big.txt", b"theirs\n");
    let err = replace.commit(Guard::Absent).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotObserved, "{}", err.message);
    assert_eq!(bucket.get("p/big.txt").unwrap(), b"theirs\n");
    assert_eq!(bucket.open_uploads(), 0, "the refused upload was aborted");
}

#[test]
fn a_multipart_replace_loses_to_a_change_in_between() {
    use dsh_fs::ByteStore;
    use dsh_fs_core::store::{Guard, Object, Replace};
    let bucket = Bucket::new();
    bucket.put("p/big.txt", b"ours\n");
    let store = bucket.byte_store("p");
    let layer = ObjectStoreProvider::new(bucket.byte_store("p"));
    let target = layer.resolve("big.txt").unwrap();
    let (mut replace, current) = store.replace(&target, false).unwrap();
    let token = current.unwrap().meta().token.clone();
    replace.write(&lines_of(20 << 20)).unwrap();
    bucket.put("p/big.txt", b"theirs\n");
    let err = replace.commit(Guard::Unchanged(&token)).unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleVersion, "{}", err.message);
    assert_eq!(bucket.get("p/big.txt").unwrap(), b"theirs\n");
    assert_eq!(bucket.open_uploads(), 0, "the refused upload was aborted");

    // Unconditional, and dropped half-way.
    let (mut replace, _) = store.replace(&target, false).unwrap();
    replace.write(&lines_of(20 << 20)).unwrap();
    drop(replace);
    assert_eq!(bucket.open_uploads(), 0, "a dropped upload is aborted");
    let (mut replace, _) = store.replace(&target, false).unwrap();
    let big = lines_of(20 << 20);
    replace.write(&big).unwrap();
    let token = replace.commit(Guard::None).unwrap();
    assert!(bucket.get("p/big.txt").unwrap() == big);
    assert_eq!(store.stat(&target).unwrap().unwrap().token, token);
}

/// The peak RSS a `dsh-fs mcp` serving a bucket may reach while it edits an
/// object of 96 MiB: one part and the read-ahead, not the object.
const LARGE_EDIT_RSS_KIB: u64 = 64 << 10;

#[test]
fn a_large_edit_holds_one_part_not_the_object() {
    let lines = (96 << 20) / 28;
    let text = numbered(lines);
    let bucket = Bucket::new();
    bucket.put("p/big.txt", text.as_bytes());
    let mut server = crate::mcp_transport::Server::spawn(bucket.dsh_fs("p", &["mcp"]));
    let (read, code) = server.call("read", json!({"file_path": "big.txt", "limit": 1}));
    assert_eq!(code, "OK", "{read}");
    let old = format!("line {lines:>8} ✓");
    let (edit, code) = server.call(
        "edit",
        json!({"file_path": "big.txt", "old_string": old, "new_string": "last"}),
    );
    assert_eq!(code, "OK", "{edit}");
    let peak = server.peak_rss_kib();
    eprintln!("edit of a 96 MiB object: peak RSS {} MiB", peak >> 10);
    let got = bucket.get("p/big.txt").unwrap();
    let expected = text.replace(&old, "last");
    assert!(got == expected.as_bytes(), "the edited object differs");
    assert_eq!(bucket.open_uploads(), 0);
    assert!(peak < LARGE_EDIT_RSS_KIB, "peak RSS {peak} KiB");
}

/// Unchanged ranges of 5 MiB and more are copied by the server into parts
/// (`UploadPartCopy`); the bytes written before are topped up to a whole part.
#[test]
fn long_unchanged_ranges_are_copied_by_the_server() {
    use dsh_fs::ByteStore;
    use dsh_fs_core::store::{Guard, Object, Replace};
    let bucket = Bucket::new();
    let source = lines_of(24 << 20);
    bucket.put("p/big.txt", &source);
    let store = bucket.byte_store("p");
    let layer = ObjectStoreProvider::new(bucket.byte_store("p"));
    let target = layer.resolve("big.txt").unwrap();
    let (mut replace, current) = store.replace(&target, false).unwrap();
    let mut current = current.unwrap();
    let token = current.meta().token.clone();
    replace.write(&[b'h'; 1 << 20]).unwrap();
    replace.copy(&mut current, 2 << 20, 20 << 20).unwrap();
    replace.copy(&mut current, 0, 100).unwrap();
    replace.write(b"tail\n").unwrap();
    // 1 MiB written and 7 MiB read make the first part; 13 MiB are copied.
    assert_eq!(bucket.part_sizes("p/big.txt"), [8 << 20, 13 << 20]);
    replace.commit(Guard::Unchanged(&token)).unwrap();
    let mut expected = vec![b'h'; 1 << 20];
    expected.extend_from_slice(&source[2 << 20..22 << 20]);
    expected.extend_from_slice(&source[..100]);
    expected.extend_from_slice(b"tail\n");
    assert!(
        bucket.get("p/big.txt").unwrap() == expected,
        "the copied object differs"
    );
    assert_eq!(bucket.open_uploads(), 0);
}

/// Over a store other than S3 a replacement is one PUT, so it is bounded
/// like every in-memory result; an edit within the bound works there too.
#[test]
fn other_stores_take_replacements_in_one_bounded_put() {
    let memory = Arc::new(dsh_fs::object_store::memory::InMemory::new());
    let p = ObjectStoreProvider::new(BucketStore::new(memory, "ws").unwrap());
    let t = p.resolve("a.txt").unwrap();
    let big = "x\n".repeat(9 << 20);
    let err = p.write_text(&t, &big, None).unwrap_err();
    assert_eq!(err.code, ErrorCode::TooLarge, "{}", err.message);
    assert!(p.stat(&t).unwrap().is_none(), "nothing was written");
    let small = numbered(1000);
    p.write_text(&t, &small, Some(WriteIntent::CreateIfAbsent))
        .unwrap();
    let read = p.read_text(&t, 1 << 20).unwrap();
    let edit = dsh_fs::EditRequest {
        old_string: "line     1000 ✓".into(),
        new_string: "last".into(),
        replace_all: false,
    };
    p.edit_text(&t, &edit, Some(&read.version)).unwrap();
    assert!(
        p.read_text(&t, 1 << 20)
            .unwrap()
            .text
            .ends_with("last some text\n")
    );
}

/// A call whose deadline has passed sends no request, however quickly the
/// store would answer: an in-memory store answers on the first poll, which
/// a timer firing a millisecond late would let through.
#[test]
fn past_its_deadline_a_call_sends_nothing() {
    let memory = Arc::new(dsh_fs::object_store::memory::InMemory::new());
    let p = ObjectStoreProvider::new(BucketStore::new(memory, "ws").unwrap());
    let t = p.resolve("a.txt").unwrap();
    p.write_text(&t, "one\n", None).unwrap();
    let late = std::time::Instant::now();
    let read = dsh_fs::deadline::scope(late, || p.read_text(&t, 1 << 20));
    assert_eq!(read.unwrap_err().code, ErrorCode::Aborted);
    let stat = dsh_fs::deadline::scope(late, || p.stat(&t));
    assert_eq!(stat.unwrap_err().code, ErrorCode::Aborted);
    let edit = dsh_fs::EditRequest {
        old_string: "one".into(),
        new_string: "two".into(),
        replace_all: false,
    };
    let edited = dsh_fs::deadline::scope(late, || p.edit_text(&t, &edit, None));
    assert_eq!(edited.unwrap_err().code, ErrorCode::Aborted);
    assert_eq!(p.read_text(&t, 1 << 20).unwrap().text, "one\n");
}
