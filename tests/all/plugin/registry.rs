//! Debian's `docker-registry` (the reference OCI registry) on a free
//! loopback port, serving HTTPS with a certificate of a CA made for the run
//! (wassette pulls over HTTPS only), with scratch storage; killed on drop.
//! `cargo xtask oci … --ca` and wassette (`SSL_CERT_FILE`) trust that CA.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub(crate) struct Registry {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    dir: TempDir,
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

impl Registry {
    pub(crate) fn start() -> Self {
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
                "/CN=dsh-fs test CA",
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
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = d.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n  \
                 tls:\n    certificate: {}\n    key: {}\n",
                d.join("storage").display(),
                d.join("server.pem").display(),
                d.join("server.key").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(d.join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("starting docker-registry ({e}): the Debian package docker-registry; run scripts/setup")
            });
        let mut registry = Registry { child, addr, dir };
        registry.wait();
        registry
    }

    /// The CA the registry's certificate is signed by (PEM).
    pub(crate) fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Waits until `docker-registry` listens (it loads its certificate first).
    fn wait(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&self.addr).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("docker-registry exited ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry did not listen:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
