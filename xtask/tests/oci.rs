//! `cargo xtask oci` and `cargo xtask wit` against a real registry: Debian's
//! `docker-registry` (the CNCF distribution reference registry) on a free
//! loopback port with scratch storage. A real tools component and a policy
//! are pushed, pulled back by tag and by digest and compared byte for byte;
//! the manifest is read back with oci-client to check the wasm OCI layout.

use oci_client::annotations::{ORG_OPENCONTAINERS_IMAGE_TITLE, ORG_OPENCONTAINERS_IMAGE_VERSION};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;
use wit_component::DecodedWasm;

const CONFIG: &str = "application/vnd.wasm.config.v0+json";
const WASM: &str = "application/wasm";
const POLICY: &str = "application/vnd.wasm.policy.v1+yaml";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

#[test]
fn component_with_policy_round_trips_by_tag_and_digest() {
    let registry = Registry::start();
    let scratch = TempDir::new().unwrap();
    let component = tools_component();
    let policy = scratch.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "version: \"1.0\"\npermissions:\n  storage:\n    allow:\n      - uri: \"fs://work/**\"\n        access: [read, write]\n",
    )
    .unwrap();
    let component_bytes = std::fs::read(&component).unwrap();
    let policy_bytes = std::fs::read(&policy).unwrap();

    let tag = format!("{}/dsh/fs-tools:0.1.0", registry.addr);
    let pushed = xtask(&[
        "oci",
        "push",
        &tag,
        component.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    let digest = field(&pushed, "digest");
    assert_eq!(
        field(&pushed, "reference"),
        format!("{}/dsh/fs-tools@{digest}", registry.addr)
    );

    // The manifest as the registry serves it: the wasm OCI layout.
    let manifest = registry.manifest(&tag, &digest);
    assert_eq!(manifest.media_type.as_deref(), Some(MANIFEST));
    assert_eq!(manifest.config.media_type, CONFIG);
    let layers: Vec<_> = manifest
        .layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect();
    assert_eq!(layers, [WASM, POLICY]);
    assert_eq!(manifest.layers[0].digest, sha256(&component_bytes));
    assert_eq!(manifest.layers[0].size, component_bytes.len() as i64);
    assert_eq!(manifest.layers[1].digest, sha256(&policy_bytes));
    let config = registry.config(&tag, &manifest);
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(
        config["layerDigests"],
        serde_json::json!([sha256(&component_bytes), sha256(&policy_bytes)])
    );
    let exports = config["component"]["exports"].as_array().unwrap();
    assert!(exports.contains(&"dsh:fs/tools@0.1.0".into()), "{config}");

    let by_digest = format!("{}/dsh/fs-tools@{digest}", registry.addr);
    for (dir, reference) in [("by-tag", &tag), ("by-digest", &by_digest)] {
        let out = scratch.path().join(dir);
        let pulled = xtask(&["oci", "pull", reference, out.to_str().unwrap()]);
        assert_eq!(field(&pulled, "digest"), digest, "{reference}");
        assert_eq!(field(&pulled, "pulled"), by_digest);
        assert_eq!(
            field(&pulled, "config"),
            format!("{CONFIG} {}", manifest.config.digest)
        );
        let wrote = fields(&pulled, "wrote");
        let wasm_out = out.join("dsh_fs_tools.wasm");
        let policy_out = out.join("policy.yaml");
        assert_eq!(
            wrote,
            [
                format!(
                    "{} {WASM} {} ({} bytes)",
                    wasm_out.display(),
                    sha256(&component_bytes),
                    component_bytes.len()
                ),
                format!(
                    "{} {POLICY} {} ({} bytes)",
                    policy_out.display(),
                    sha256(&policy_bytes),
                    policy_bytes.len()
                ),
            ]
        );
        let (wasm, yaml) = (
            std::fs::read(&wasm_out).unwrap(),
            std::fs::read(&policy_out).unwrap(),
        );
        assert!(wasm == component_bytes, "the pulled component differs");
        assert_eq!(sha256(&wasm), sha256(&component_bytes));
        assert_eq!(yaml, policy_bytes);
        assert_eq!(sha256(&yaml), sha256(&policy_bytes));
    }

    // Without a policy: the component alone.
    let plain = format!("{}/dsh/fs-tools:plain", registry.addr);
    let digest = field(
        &xtask(&["oci", "push", &plain, component.to_str().unwrap()]),
        "digest",
    );
    let manifest = registry.manifest(&plain, &digest);
    let layers: Vec<_> = manifest
        .layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect();
    assert_eq!(layers, [WASM]);
    let out = scratch.path().join("plain");
    let pulled = xtask(&["oci", "pull", &plain, out.to_str().unwrap()]);
    assert_eq!(fields(&pulled, "wrote").len(), 1);
    assert!(std::fs::read(out.join("dsh_fs_tools.wasm")).unwrap() == component_bytes);
}

#[test]
fn wit_package_encodes_decodes_and_round_trips() {
    let scratch = TempDir::new().unwrap();
    let package = scratch.path().join("dsh-fs.wasm");
    let made = xtask(&["wit", package.to_str().unwrap()]);
    assert_eq!(made.trim(), package.display().to_string());
    let bytes = std::fs::read(&package).unwrap();

    let DecodedWasm::WitPackage(resolve, id) = wit_component::decode(&bytes).unwrap() else {
        panic!("`cargo xtask wit` made a component, not a WIT package");
    };
    let decoded = &resolve.packages[id];
    assert_eq!(decoded.name.to_string(), "dsh:fs@0.1.0");
    let mut interfaces: Vec<&str> = decoded.interfaces.keys().map(String::as_str).collect();
    interfaces.sort_unstable();
    assert_eq!(
        interfaces,
        [
            "memory",
            "provider",
            "store",
            "store-contract",
            "tools",
            "types"
        ]
    );

    let registry = Registry::start();
    let tag = format!("{}/dsh/fs:0.1.0", registry.addr);
    let digest = field(
        &xtask(&["oci", "push-wit", &tag, package.to_str().unwrap()]),
        "digest",
    );
    let manifest = registry.manifest(&tag, &digest);
    assert_eq!(manifest.config.media_type, CONFIG);
    let layers: Vec<_> = manifest
        .layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect();
    assert_eq!(layers, [WASM]);
    assert_eq!(manifest.layers[0].digest, sha256(&bytes));
    let title = &manifest.layers[0].annotations.as_ref().unwrap()[ORG_OPENCONTAINERS_IMAGE_TITLE];
    assert_eq!(title, "fs.wasm");
    let version = &manifest.annotations.as_ref().unwrap()[ORG_OPENCONTAINERS_IMAGE_VERSION];
    assert_eq!(version, "0.1.0");
    let config = registry.config(&tag, &manifest);
    let exports = config["component"]["exports"].as_array().unwrap();
    assert!(exports.contains(&"dsh:fs/store@0.1.0".into()), "{config}");

    let out = scratch.path().join("pulled");
    let by_digest = format!("{}/dsh/fs@{digest}", registry.addr);
    let pulled = xtask(&["oci", "pull", &by_digest, out.to_str().unwrap()]);
    assert_eq!(field(&pulled, "digest"), digest);
    let pulled_bytes = std::fs::read(out.join("fs.wasm")).unwrap();
    assert!(pulled_bytes == bytes, "the pulled WIT package differs");
    assert_eq!(sha256(&pulled_bytes), sha256(&bytes));

    // A WIT package is no component, and the other way round.
    let wrong = xtask_fails(&["oci", "push", &tag, package.to_str().unwrap()]);
    assert!(wrong.contains("push-wit"), "{wrong}");
}

#[test]
fn pull_over_https_trusts_the_ca_it_is_given() {
    // `--ca`: HTTPS even to a loopback registry, the manifest and the blobs
    // alike, trusting a CA made for the run.
    let scratch = TempDir::new().unwrap();
    let package = scratch.path().join("dsh-fs.wasm");
    xtask(&["wit", package.to_str().unwrap()]);
    let bytes = std::fs::read(&package).unwrap();
    let registry = Registry::start_tls();
    let ca = registry.dir.path().join("ca.pem");
    let ca = ca.to_str().unwrap();
    let tag = format!("{}/dsh/fs:0.1.0", registry.addr);
    let pushed = xtask(&[
        "oci",
        "push-wit",
        &tag,
        package.to_str().unwrap(),
        "--ca",
        ca,
    ]);
    let digest = field(&pushed, "digest");
    let by_digest = format!("{}/dsh/fs@{digest}", registry.addr);
    for (dir, reference) in [("by-tag", &tag), ("by-digest", &by_digest)] {
        let out = scratch.path().join(dir);
        let pulled = xtask(&["oci", "pull", reference, out.to_str().unwrap(), "--ca", ca]);
        assert_eq!(field(&pulled, "digest"), digest);
        assert!(std::fs::read(out.join("fs.wasm")).unwrap() == bytes);
    }
    // Without the CA the same registry is not trusted (nor, on loopback,
    // even spoken to over HTTPS).
    let out = scratch.path().join("untrusted");
    xtask_fails(&["oci", "pull", &tag, out.to_str().unwrap()]);
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}

/// Debian's `docker-registry` serving scratch storage on a free loopback
/// port; killed on drop.
struct Registry {
    child: Child,
    /// `127.0.0.1:<port>`.
    addr: String,
    dir: TempDir,
}

impl Registry {
    /// Over plain HTTP.
    fn start() -> Self {
        let mut registry = Self::spawn(TempDir::new().unwrap(), "");
        registry.wait_for_v2();
        registry
    }

    /// Over HTTPS, with a certificate for 127.0.0.1 signed by a CA made for
    /// the run (`ca.pem` in its directory), as `openssl` makes them.
    fn start_tls() -> Self {
        let dir = TempDir::new().unwrap();
        let d = dir.path();
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=dsh-fs xtask test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign",
            ],
        );
        openssl(
            d,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=127.0.0.1",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
            ],
        );
        std::fs::write(
            d.join("server.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                "server.pem",
                "-extfile",
                "server.ext",
            ],
        );
        let tls = format!(
            "  tls:\n    certificate: {}\n    key: {}\n",
            d.join("server.pem").display(),
            d.join("server.key").display()
        );
        let mut registry = Self::spawn(dir, &tls);
        registry.wait_for_listen();
        registry
    }

    /// Starts `docker-registry` on a free port with `http_extra` added to
    /// its `http:` section.
    fn spawn(dir: TempDir, http_extra: &str) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n{http_extra}",
                dir.path().join("storage").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = match Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
        {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "docker-registry is not installed (the Debian package docker-registry, the \
                 reference OCI registry these tests push to); run scripts/setup"
            ),
            Err(e) => panic!("starting docker-registry: {e}"),
        };
        Registry { child, addr, dir }
    }

    /// Waits until the registry accepts connections (over TLS, where a
    /// plain `GET /v2/` would not do).
    fn wait_for_listen(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(&self.addr).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("docker-registry exited ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry did not listen on {} in 30 s:\n{}",
                self.addr,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `GET /v2/` answers 200.
    fn wait_for_v2(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("docker-registry exited ({status}):\n{}", self.log());
            }
            if let Ok(mut stream) = TcpStream::connect(&self.addr) {
                let request = format!("GET /v2/ HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr);
                let mut answer = String::new();
                if stream.write_all(request.as_bytes()).is_ok()
                    && stream.read_to_string(&mut answer).is_ok()
                    && answer.split(' ').nth(1) == Some("200")
                {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry did not answer /v2/ on {} in 30 s:\n{}",
                self.addr,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// The manifest of `reference`, fetched on its own, whose digest must be
    /// `digest`.
    fn manifest(&self, reference: &str, digest: &str) -> OciImageManifest {
        let reference: Reference = reference.parse().unwrap();
        let (manifest, fetched) =
            block_on(client(&self.addr).pull_image_manifest(&reference, &RegistryAuth::Anonymous))
                .unwrap();
        assert_eq!(
            fetched, digest,
            "the digest push printed is not the manifest's"
        );
        manifest
    }

    /// The wasm config blob of `manifest`, as JSON.
    fn config(&self, reference: &str, manifest: &OciImageManifest) -> serde_json::Value {
        let reference: Reference = reference.parse().unwrap();
        let mut bytes = Vec::new();
        let client = client(&self.addr);
        block_on(async {
            client
                .store_auth_if_needed(&self.addr, &RegistryAuth::Anonymous)
                .await;
            client
                .pull_blob(&reference, &manifest.config, &mut bytes)
                .await
        })
        .unwrap();
        assert_eq!(sha256(&bytes), manifest.config.digest);
        serde_json::from_slice(&bytes).unwrap()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running openssl (Debian's openssl package; scripts/setup installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn client(addr: &str) -> Client {
    Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(vec![addr.to_string()]),
        ..ClientConfig::default()
    })
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The tools component, built as `cargo xtask` and the host build it.
fn tools_component() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = dsh_fs_build::target_dir(workspace);
    dsh_fs_build::component(workspace, &target, "dsh-fs-tools", &[], "dsh_fs_tools").unwrap()
}

/// Runs `cargo xtask <args>` and returns what it printed; panics if it fails.
fn xtask(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "xtask {args:?} failed:\n{stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `cargo xtask <args>`, which must fail, and returns its error.
fn xtask_fails(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .unwrap();
    assert!(!output.status.success(), "xtask {args:?} succeeded");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The values of the `name: value` lines of `output`.
fn fields(output: &str, name: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
        .map(String::from)
        .collect()
}

/// The value of the one `name: value` line of `output`.
fn field(output: &str, name: &str) -> String {
    match fields(output, name).as_slice() {
        [value] => value.clone(),
        other => panic!("{name}: {other:?} in\n{output}"),
    }
}

fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
