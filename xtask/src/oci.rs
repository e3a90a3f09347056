//! `cargo xtask oci` and `cargo xtask wit`: the component and the `dsh:fs`
//! WIT package as wasm OCI artifacts, in the layout of the CNCF TAG Runtime's
//! wasm OCI artifact spec (what `wkg oci push` and `wkg publish` make):
//!
//! - `oci push <reference> <component.wasm> [--policy <policy.yaml>]`: config
//!   `application/vnd.wasm.config.v0+json` (oci-wasm's, from the component's
//!   world), one `application/wasm` layer with the component and, with a
//!   policy, a second `application/vnd.wasm.policy.v1+yaml` layer with its
//!   bytes; prints the manifest's digest and the reference by digest;
//! - `oci pull <reference> <out-dir>` (by tag or digest): checks the media
//!   types and the config, writes each layer into `out-dir` and prints what
//!   it wrote, with digests. Nothing is buffered whole: the manifest is read
//!   up to 4 MiB, each blob up to its descriptor's size (refused past it,
//!   short of it or with another digest), and the layers are renamed into
//!   place only once every one has arrived whole;
//! - `oci push-wit <reference> <package.wasm>`: a WIT package as wasm-pkg-tools
//!   publishes one: the same config and single `application/wasm` layer,
//!   titled `<name>.wasm`, with the package version as the manifest's
//!   `org.opencontainers.image.version`;
//! - `wit <out.wasm>`: the current `dsh:fs` WIT package encoded as wasm, what
//!   `wasm-tools component wit --wasm wit/since_v0.1.0` writes.
//!
//! Registries on a loopback host are spoken to over plain HTTP, every other
//! over HTTPS; with `--ca <ca.pem>`, every registry over HTTPS, trusting that
//! CA besides the system's. Always anonymously.

use anyhow::{Context, Result, bail, ensure};
use futures_util::StreamExt;
use oci_client::annotations::{ORG_OPENCONTAINERS_IMAGE_TITLE, ORG_OPENCONTAINERS_IMAGE_VERSION};
use oci_client::client::{
    Certificate, CertificateEncoding, ClientConfig, ClientProtocol, ImageLayer,
};
use oci_client::manifest::{
    IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest, OciManifest,
};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use oci_wasm::{
    ToConfig, WASM_LAYER_MEDIA_TYPE, WASM_MANIFEST_CONFIG_MEDIA_TYPE, WASM_MANIFEST_MEDIA_TYPE,
    WasmConfig,
};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use wit_component::DecodedWasm;

/// The media type of the policy layer that rides beside a component.
const POLICY_MEDIA_TYPE: &str = "application/vnd.wasm.policy.v1+yaml";

/// The current WIT package, relative to the workspace.
const WIT_DIR: &str = "wit/since_v0.1.0";

const USAGE: &str = "usage: cargo xtask oci push <reference> <component.wasm> [--policy <policy.yaml>] [--ca <ca.pem>]\n\
     \x20      cargo xtask oci pull <reference> <out-dir> [--ca <ca.pem>]\n\
     \x20      cargo xtask oci push-wit <reference> <package.wasm> [--ca <ca.pem>]";

/// One `cargo xtask oci` command, parsed.
#[derive(Debug, PartialEq)]
enum Command {
    Push {
        reference: String,
        component: PathBuf,
        policy: Option<PathBuf>,
    },
    Pull {
        reference: String,
        out_dir: PathBuf,
    },
    PushWit {
        reference: String,
        package: PathBuf,
    },
}

/// Runs `cargo xtask oci <args>`.
pub fn main(args: impl IntoIterator<Item = String>) -> Result<()> {
    let mut args: Vec<String> = args.into_iter().collect();
    let ca = match option(&mut args, "--ca")? {
        Some(path) => Some(crate::read(&path)?),
        None => None,
    };
    CA.set(ca).expect("set once");
    let command = parse(args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run(command))
}

/// The CA certificate (PEM) that `--ca` names: trusted besides the
/// system's, and HTTPS spoken even to a loopback registry.
static CA: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();

/// Takes `flag FILE` out of `args`.
fn option(args: &mut Vec<String>, flag: &str) -> Result<Option<PathBuf>> {
    Ok(match args.iter().position(|a| a == flag) {
        Some(i) if i + 1 < args.len() => {
            let path = args.remove(i + 1);
            args.remove(i);
            Some(PathBuf::from(path))
        }
        Some(_) => bail!("{flag} needs a file\n{USAGE}"),
        None => None,
    })
}

fn parse(mut args: Vec<String>) -> Result<Command> {
    let policy = option(&mut args, "--policy")?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Ok(match (args.as_slice(), policy) {
        (["push", reference, component], policy) => Command::Push {
            reference: reference.to_string(),
            component: component.into(),
            policy,
        },
        (["pull", reference, out_dir], None) => Command::Pull {
            reference: reference.to_string(),
            out_dir: out_dir.into(),
        },
        (["push-wit", reference, package], None) => Command::PushWit {
            reference: reference.to_string(),
            package: package.into(),
        },
        _ => bail!("{USAGE}"),
    })
}

async fn run(command: Command) -> Result<()> {
    match command {
        Command::Push {
            reference,
            component,
            policy,
        } => {
            let reference = parse_reference(&reference)?;
            let bytes = crate::read(&component)?;
            ensure!(
                matches!(decode(&bytes, &component)?, DecodedWasm::Component(..)),
                "{} is a WIT package, not a component: push it with `cargo xtask oci push-wit`",
                component.display()
            );
            let (mut config, mut layer) =
                WasmConfig::from_raw_component(bytes, None).context("describing the component")?;
            layer.annotations = title(&component);
            let mut layers = vec![layer];
            if let Some(policy) = policy {
                let layer = ImageLayer::new(
                    crate::read(&policy)?,
                    POLICY_MEDIA_TYPE.to_string(),
                    title(&policy),
                );
                // The spec's `layerDigests`: every layer, in the manifest's order.
                config.layer_digests.push(layer.sha256_digest());
                layers.push(layer);
            }
            push(&reference, &layers, &config, None).await
        }
        Command::PushWit { reference, package } => {
            let reference = parse_reference(&reference)?;
            let bytes = crate::read(&package)?;
            let DecodedWasm::WitPackage(resolve, id) = decode(&bytes, &package)? else {
                bail!(
                    "{} is a component, not a WIT package: push it with `cargo xtask oci push`",
                    package.display()
                );
            };
            let name = &resolve.packages[id].name;
            let (config, mut layer) =
                WasmConfig::from_raw_component(bytes, None).context("describing the package")?;
            // As wasm-pkg-client's OCI publisher: the layer titled for the
            // file it becomes, the version on the manifest.
            layer.annotations = Some(BTreeMap::from([(
                ORG_OPENCONTAINERS_IMAGE_TITLE.to_string(),
                format!("{}.wasm", name.name),
            )]));
            let annotations = name.version.as_ref().map(|version| {
                BTreeMap::from([(
                    ORG_OPENCONTAINERS_IMAGE_VERSION.to_string(),
                    version.to_string(),
                )])
            });
            push(&reference, &[layer], &config, annotations).await
        }
        Command::Pull { reference, out_dir } => pull(&parse_reference(&reference)?, &out_dir).await,
    }
}

/// Pushes `layers` under `config` as one wasm OCI image manifest, the way
/// `oci_wasm::WasmClient::push` does, which takes a single layer only.
async fn push(
    reference: &Reference,
    layers: &[ImageLayer],
    config: &WasmConfig,
    annotations: Option<BTreeMap<String, String>>,
) -> Result<()> {
    let config = config.to_config()?;
    let mut manifest = OciImageManifest::build(layers, &config, annotations);
    manifest.media_type = Some(WASM_MANIFEST_MEDIA_TYPE.to_string());
    let response = client(reference)
        .push(
            reference,
            layers,
            config,
            &RegistryAuth::Anonymous,
            Some(manifest),
        )
        .await
        .with_context(|| format!("pushing {reference}"))?;
    // The registry's `Location` for the manifest: `/v2/<name>/manifests/<digest>`.
    let digest = response
        .manifest_url
        .rsplit('/')
        .next()
        .filter(|d| is_sha256(d))
        .with_context(|| {
            format!(
                "the registry answered the push of {reference} with {}, which names no digest",
                response.manifest_url
            )
        })?;
    println!("pushed: {reference}");
    println!("digest: {digest}");
    println!("reference: {}", by_digest(reference, digest));
    Ok(())
}

/// Pulls the wasm artifact at `reference` into `out_dir`: the component (or
/// WIT package) and, if there is one, the policy.
///
/// Every byte is streamed and bounded: the manifest is read up to
/// [`MAX_MANIFEST_BYTES`], each blob up to the size its descriptor declares
/// (itself at most [`MAX_CONFIG_BYTES`] or [`MAX_LAYER_BYTES`]), so a
/// registry that sends more than it declared is cut off at the first byte
/// past it, and memory stays flat whatever it sends. The layers go into temp
/// files in `out_dir`, each checked (size and sha256 digest) as it ends, and
/// are renamed into place only once all of them are: a failed pull leaves no
/// file behind.
async fn pull(reference: &Reference, out_dir: &Path) -> Result<()> {
    let client = client(reference);
    let (manifest, digest) = pull_manifest(&client, reference)
        .await
        .with_context(|| format!("pulling the manifest of {reference}"))?;
    check_media_types(&manifest).with_context(|| format!("{reference} is no wasm artifact"))?;
    // Every declared size checked before any blob is asked for.
    declared_size(&manifest.config, MAX_CONFIG_BYTES)
        .with_context(|| format!("the config of {reference}"))?;
    for layer in &manifest.layers {
        declared_size(layer, MAX_LAYER_BYTES).with_context(|| format!("a layer of {reference}"))?;
    }
    let names: Vec<String> = manifest.layers.iter().map(file_name).collect();
    ensure!(
        names.first() != names.get(1),
        "both layers of {reference} would be written to {}",
        names[0]
    );

    let mut config = Vec::new();
    pull_blob(
        &client,
        reference,
        &manifest.config,
        MAX_CONFIG_BYTES,
        &mut config,
    )
    .await
    .with_context(|| format!("pulling the config of {reference}"))?;
    let config = WasmConfig::try_from(config).context("reading the wasm config")?;
    let digests: Vec<&str> = manifest.layers.iter().map(|l| l.digest.as_str()).collect();
    ensure!(
        config.layer_digests == digests,
        "the config of {reference} lists the layers {:?}, the manifest {digests:?}",
        config.layer_digests
    );
    println!("pulled: {}", by_digest(reference, &digest));
    println!("digest: {digest}");
    println!(
        "config: {} {}",
        manifest.config.media_type, manifest.config.digest
    );

    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let mut pulled = Vec::new();
    for layer in &manifest.layers {
        let mut builder = tempfile::Builder::new();
        builder.prefix(".pull-");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let mut file = builder
            .tempfile_in(out_dir)
            .with_context(|| format!("making a temp file in {}", out_dir.display()))?;
        let temp = file.path().display().to_string();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file.as_file_mut());
        let size = pull_blob(&client, reference, layer, MAX_LAYER_BYTES, &mut out)
            .await
            .with_context(|| format!("pulling {} of {reference}", layer.digest))?;
        out.into_inner()
            .map_err(std::io::IntoInnerError::into_error)
            .and_then(|file| file.sync_all())
            .with_context(|| format!("writing {temp}"))?;
        pulled.push((file, layer, size));
    }
    for ((file, layer, size), name) in pulled.into_iter().zip(names) {
        let path = out_dir.join(name);
        file.persist(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        println!(
            "wrote: {} {} {} ({size} bytes)",
            path.display(),
            layer.media_type,
            layer.digest,
        );
    }
    Ok(())
}

/// The most bytes of a manifest a pull reads: distribution's own limit on a
/// pushed manifest. Ours are under a kilobyte.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// The largest config a pull takes: a wasm config lists the component's
/// imports and exports, a few kilobytes.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// The largest layer a pull takes: a component or a policy of more than
/// 1 GiB is none of ours, and a descriptor claiming more is refused before
/// anything is fetched (it would only fill the disk).
const MAX_LAYER_BYTES: u64 = 1 << 30;

/// The image manifest at `reference` and its digest, read as a stream and
/// refused past [`MAX_MANIFEST_BYTES`] (oci-client's `pull_image_manifest`
/// would buffer whatever the registry sends). Checked against the digest of a
/// by-digest reference and against the registry's `Docker-Content-Digest`.
async fn pull_manifest(
    client: &Client,
    reference: &Reference,
) -> Result<(OciImageManifest, String)> {
    // The registry's token for an anonymous pull, if it wants one; kept by
    // `client` for the blobs too.
    let token = client
        .auth(reference, &RegistryAuth::Anonymous, RegistryOperation::Pull)
        .await
        .context("authenticating")?;
    let registry = reference.resolve_registry();
    let url = format!(
        "{}://{registry}/v2/{}/manifests/{}{}",
        if speaks_http(registry) {
            "http"
        } else {
            "https"
        },
        reference.repository(),
        reference.digest().or(reference.tag()).unwrap_or("latest"),
        reference
            .namespace()
            .map(|ns| format!("?ns={ns}"))
            .unwrap_or_default(),
    );
    let mut request = http_client()?.get(&url).header(
        reqwest::header::ACCEPT,
        format!("{OCI_IMAGE_MEDIA_TYPE}, {IMAGE_MANIFEST_MEDIA_TYPE}"),
    );
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let mut response = request.send().await.with_context(|| format!("GET {url}"))?;
    let status = response.status();
    if !status.is_success() {
        // A few hundred bytes of the error, never more.
        let mut message = Vec::new();
        while message.len() < 512 {
            match response.chunk().await {
                Ok(Some(chunk)) => message.extend_from_slice(&chunk),
                _ => break,
            }
        }
        message.truncate(512);
        bail!(
            "{url} answered {status}: {}",
            String::from_utf8_lossy(&message).trim()
        );
    }
    if let Some(length) = response.content_length() {
        ensure!(
            length <= MAX_MANIFEST_BYTES,
            "the manifest is larger than the {MAX_MANIFEST_BYTES} bytes a pull takes: \
             the registry announces {length}"
        );
    }
    let header = response
        .headers()
        .get("Docker-Content-Digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut body = Vec::new();
    let mut hasher = Sha256::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("reading {url}"))?
    {
        ensure!(
            body.len() + chunk.len() <= MAX_MANIFEST_BYTES as usize,
            "the manifest is larger than the {MAX_MANIFEST_BYTES} bytes a pull takes"
        );
        hasher.update(&chunk);
        body.extend_from_slice(&chunk);
    }
    let digest = sha256_hex(hasher);
    for (expected, what) in [
        (reference.digest(), "the reference"),
        (
            header.as_deref().filter(|d| d.starts_with("sha256:")),
            "the registry",
        ),
    ] {
        if let Some(expected) = expected {
            ensure!(
                digest == expected,
                "the manifest's digest is {digest}, {what} says {expected}"
            );
        }
    }
    let manifest: OciManifest =
        serde_json::from_slice(&body).context("the manifest is no OCI manifest")?;
    let OciManifest::Image(manifest) = manifest else {
        bail!("it is an image index, not the manifest of a wasm artifact");
    };
    ensure!(
        manifest.schema_version == 2,
        "the manifest's schema version is {}, not 2",
        manifest.schema_version
    );
    Ok((manifest, digest))
}

/// Streams the blob `descriptor` names into `out` and returns its size: the
/// one its descriptor declares (at most `limit`), read no further than that
/// (the pull stops with an error at the first byte past it, and at an end
/// before it), whose sha256 must be the descriptor's digest.
async fn pull_blob(
    client: &Client,
    reference: &Reference,
    descriptor: &OciDescriptor,
    limit: u64,
    out: &mut impl Write,
) -> Result<u64> {
    let size = declared_size(descriptor, limit)?;
    let digest = &descriptor.digest;
    let mut blob = client
        .pull_blob_stream(reference, descriptor)
        .await
        .with_context(|| format!("asking for {digest}"))?;
    if let Some(length) = blob.content_length {
        ensure!(
            length == size,
            "the registry announces {length} bytes for {digest}, whose descriptor declares {size}"
        );
    }
    let mut hasher = Sha256::new();
    let mut count = 0u64;
    while let Some(chunk) = blob.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            // oci-client's own digest check, or the connection's end, before
            // the declared size: a short blob.
            Err(e) if count < size => {
                return Err(anyhow::Error::new(e).context(format!(
                    "{digest} ended after {count} of the {size} bytes its descriptor declares"
                )));
            }
            Err(e) => {
                // Said in our words when it is oci-client's digest check.
                let actual = sha256_hex(hasher);
                ensure!(
                    actual == *digest,
                    "the bytes sent for {digest} have the digest {actual}"
                );
                return Err(e).with_context(|| format!("reading {digest}"));
            }
        };
        count += chunk.len() as u64;
        ensure!(
            count <= size,
            "the registry sent more than the {size} bytes its descriptor declares for {digest}"
        );
        hasher.update(&chunk);
        out.write_all(&chunk)
            .with_context(|| format!("writing {digest}"))?;
    }
    ensure!(
        count == size,
        "{digest} ended after {count} of the {size} bytes its descriptor declares"
    );
    let actual = sha256_hex(hasher);
    ensure!(
        actual == *digest,
        "the bytes sent for {digest} have the digest {actual}"
    );
    Ok(size)
}

/// The size `descriptor` declares, if it is one a pull takes: not negative,
/// at most `limit`, and with a sha256 digest (the only kind oci-wasm and wkg
/// push) to check the bytes against.
fn declared_size(descriptor: &OciDescriptor, limit: u64) -> Result<u64> {
    let digest = &descriptor.digest;
    ensure!(is_sha256(digest), "{digest:?} is no sha256 digest");
    let size = u64::try_from(descriptor.size)
        .map_err(|_| anyhow::anyhow!("{digest} declares a negative size ({})", descriptor.size))?;
    ensure!(
        size <= limit,
        "{digest} declares {size} bytes, more than the {limit} a pull takes"
    );
    Ok(size)
}

fn sha256_hex(hasher: Sha256) -> String {
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// A wasm artifact: the wasm config, the `application/wasm` layer first, at
/// most a policy layer after it.
fn check_media_types(manifest: &OciImageManifest) -> Result<()> {
    ensure!(
        manifest.config.media_type == WASM_MANIFEST_CONFIG_MEDIA_TYPE,
        "its config is {}, not {WASM_MANIFEST_CONFIG_MEDIA_TYPE}",
        manifest.config.media_type
    );
    let types: Vec<&str> = manifest
        .layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect();
    ensure!(
        matches!(
            types.as_slice(),
            [WASM_LAYER_MEDIA_TYPE] | [WASM_LAYER_MEDIA_TYPE, POLICY_MEDIA_TYPE]
        ),
        "its layers are {types:?}, not [{WASM_LAYER_MEDIA_TYPE}] with an optional \
         {POLICY_MEDIA_TYPE} after it"
    );
    Ok(())
}

/// Where a pulled layer goes: its title when that is a plain file name (what
/// `push` and wkg set), else `component.wasm` or `policy.yaml`.
fn file_name(layer: &OciDescriptor) -> String {
    let title = layer
        .annotations
        .as_ref()
        .and_then(|a| a.get(ORG_OPENCONTAINERS_IMAGE_TITLE));
    match title {
        Some(title)
            if Path::new(title).file_name() == Some(title.as_ref()) && !title.starts_with('.') =>
        {
            title.clone()
        }
        _ if layer.media_type == POLICY_MEDIA_TYPE => "policy.yaml".to_string(),
        _ => "component.wasm".to_string(),
    }
}

/// The layer annotation naming the file `path` was read from.
fn title(path: &Path) -> Option<BTreeMap<String, String>> {
    let name = path.file_name()?.to_str()?;
    Some(BTreeMap::from([(
        ORG_OPENCONTAINERS_IMAGE_TITLE.to_string(),
        name.to_string(),
    )]))
}

/// Writes the current `dsh:fs` WIT package of `workspace`, encoded as wasm,
/// to `out`.
pub fn wit(workspace: &Path, out: &Path) -> Result<()> {
    crate::write(out, &encode_wit(&workspace.join(WIT_DIR))?)
}

/// The WIT package in `dir` encoded as wasm, as `wasm-tools component wit
/// --wasm <dir>` does it: resolved, encoded, then validated.
fn encode_wit(dir: &Path) -> Result<Vec<u8>> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(dir)
        .map_err(|e| anyhow::anyhow!("{}", resolve.render_error(&e)))?;
    let bytes = wit_component::encode(&resolve, package)?;
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&bytes)
        .context("the encoded WIT package does not validate")?;
    Ok(bytes)
}

fn decode(bytes: &[u8], path: &Path) -> Result<DecodedWasm> {
    wit_component::decode(bytes).with_context(|| {
        format!(
            "{} is neither a component nor a WIT package",
            path.display()
        )
    })
}

fn parse_reference(reference: &str) -> Result<Reference> {
    reference
        .parse()
        .with_context(|| format!("{reference} is not an OCI reference"))
}

/// A client that speaks plain HTTP to a registry on a loopback host and
/// HTTPS to every other; with `--ca`, HTTPS to every registry, trusting
/// that CA too (a local registry with a certificate of its own, as
/// wassette, which speaks HTTPS only, needs).
fn client(reference: &Reference) -> Client {
    let registry = reference.resolve_registry();
    let protocol = if speaks_http(registry) {
        ClientProtocol::HttpsExcept(vec![registry.to_string()])
    } else {
        ClientProtocol::Https
    };
    let extra_root_certificates = CA
        .get()
        .cloned()
        .flatten()
        .map(|data| Certificate {
            encoding: CertificateEncoding::Pem,
            data,
        })
        .into_iter()
        .collect();
    Client::new(ClientConfig {
        protocol,
        extra_root_certificates,
        ..ClientConfig::default()
    })
}

/// The HTTP client the manifest is read with, configured as [`client`]'s:
/// the system's roots and `--ca`'s, oci-client's user agent.
fn http_client() -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder().user_agent(ClientConfig::default().user_agent);
    if let Some(Some(pem)) = CA.get() {
        builder =
            builder.tls_certs_merge([reqwest::Certificate::from_pem(pem).context("reading --ca")?]);
    }
    builder.build().context("making an HTTP client")
}

/// Whether `registry` is spoken to over plain HTTP: a loopback one, unless
/// `--ca` asks for HTTPS.
fn speaks_http(registry: &str) -> bool {
    matches!(CA.get(), None | Some(None)) && is_loopback(registry)
}

/// Whether `registry` (`host[:port]`) is `localhost` or a loopback address.
fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.split(':').next().unwrap_or(registry),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn by_digest(reference: &Reference, digest: &str) -> Reference {
    Reference::with_digest(
        reference.registry().to_string(),
        reference.repository().to_string(),
        digest.to_string(),
    )
}

fn is_sha256(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_registries_are_plain_http() {
        for registry in [
            "127.0.0.1:5000",
            "localhost",
            "LOCALHOST:80",
            "[::1]:5000",
            "127.1.2.3",
        ] {
            assert!(is_loopback(registry), "{registry}");
        }
        for registry in [
            "ghcr.io",
            "index.docker.io",
            "10.0.0.1:5000",
            "[::2]:5000",
            "localhost.example",
        ] {
            assert!(!is_loopback(registry), "{registry}");
        }
    }

    #[test]
    fn arguments() {
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            parse(args("push r c.wasm --policy p.yaml")).unwrap(),
            Command::Push {
                reference: "r".into(),
                component: "c.wasm".into(),
                policy: Some("p.yaml".into()),
            }
        );
        assert_eq!(
            parse(args("push --policy p.yaml r c.wasm")).unwrap(),
            parse(args("push r c.wasm --policy p.yaml")).unwrap()
        );
        assert_eq!(
            parse(args("pull r out")).unwrap(),
            Command::Pull {
                reference: "r".into(),
                out_dir: "out".into(),
            }
        );
        for wrong in [
            "push r",
            "push r c.wasm --policy",
            "pull r out --policy p",
            "push-wit r",
            "fetch r x",
        ] {
            assert!(parse(args(wrong)).is_err(), "{wrong}");
        }
    }

    #[test]
    fn pulled_layers_never_leave_the_directory() {
        let layer = |title: &str, media_type: &str| OciDescriptor {
            media_type: media_type.to_string(),
            annotations: Some(BTreeMap::from([(
                ORG_OPENCONTAINERS_IMAGE_TITLE.to_string(),
                title.to_string(),
            )])),
            ..OciDescriptor::default()
        };
        assert_eq!(
            file_name(&layer("fs.wasm", WASM_LAYER_MEDIA_TYPE)),
            "fs.wasm"
        );
        assert_eq!(
            file_name(&layer("../x.wasm", WASM_LAYER_MEDIA_TYPE)),
            "component.wasm"
        );
        assert_eq!(
            file_name(&layer("/etc/passwd", POLICY_MEDIA_TYPE)),
            "policy.yaml"
        );
        assert_eq!(file_name(&layer("..", POLICY_MEDIA_TYPE)), "policy.yaml");
        assert_eq!(
            file_name(&layer("", WASM_LAYER_MEDIA_TYPE)),
            "component.wasm"
        );
    }
}
