//! `cargo xtask plugin`: the `fs-plugin` component (`dsh-fs-plugin`) and
//! the `fs-plugin-undo` one (its `undo` feature), each with the tools' own
//! descriptions in its `package-docs` section, where plugin runtimes
//! (wassette) find what to tell the model, and beside each a wassette policy
//! that grants the workspace and the state directory.
//!
//! The descriptions are [`dsh_fs_tools::definitions`], the ones every other
//! host serves: the WIT names the functions, the tools crate says what they do.

use anyhow::{Context, Result, bail};
use std::path::Path;
use wasm_encoder::{ComponentSection, CustomSection};
use wit_component::DecodedWasm;
use wit_parser::{PackageMetadata, WorldItem, WorldKey};

/// The component's bytes with a `package-docs` section that documents each
/// of its exported functions with the tool's description. The docs are
/// those of the world the component decodes to (`root:component/root`, as
/// `wasm-tools component wit` prints it), so that tool reads them too;
/// wassette looks a function up by name in any world.
/// `definitions` are the tools the component exports, `multi_edit` as
/// `multi-edit`.
pub fn with_docs(
    component: &[u8],
    definitions: &[dsh_fs_tools::ToolDefinition],
) -> Result<Vec<u8>> {
    let DecodedWasm::Component(mut resolve, world) = wit_component::decode(component)? else {
        bail!("not a component");
    };
    let package = resolve.worlds[world]
        .package
        .context("the decoded world has a package")?;
    let exports = &mut resolve.worlds[world].exports;
    for definition in definitions {
        let key = WorldKey::Name(definition.name.replace('_', "-"));
        let Some(WorldItem::Function(function)) = exports.get_mut(&key) else {
            bail!("the component exports no function `{}`", definition.name);
        };
        function.docs.contents = Some(definition.description.into());
    }
    if exports.len() != definitions.len() {
        bail!(
            "the component exports {} functions, the tools are {}",
            exports.len(),
            definitions.len()
        );
    }
    if has_section(component, PackageMetadata::SECTION_NAME)? {
        bail!("the component has a package-docs section already");
    }
    let mut out = component.to_vec();
    CustomSection {
        name: PackageMetadata::SECTION_NAME.into(),
        data: PackageMetadata::extract(&resolve, package).encode()?.into(),
    }
    .append_to_component(&mut out);
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out)
        .context("the component with its package-docs section")?;
    Ok(out)
}

/// Whether `component` carries a custom section named `name` anywhere.
fn has_section(component: &[u8], name: &str) -> Result<bool> {
    for payload in wasmparser::Parser::new(0).parse_all(component) {
        if let wasmparser::Payload::CustomSection(c) = payload?
            && c.name() == name
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The environment the component reads (`dsh-fs-plugin`'s settings): a
/// policy must allow each, or wassette hides it.
const SETTINGS: [&str; 4] = [
    "DSH_FS_ROOT",
    "DSH_FS_STATE",
    "DSH_FS_SESSION",
    "DSH_FS_JOURNAL_BYTES",
];

/// A wassette policy granting exactly `workspace` and `state` (read and
/// write; wassette mounts each at its own absolute path) and the settings'
/// environment variables, whose values come from wassette's environment.
pub fn policy(workspace: &Path, state: &Path) -> Result<String> {
    let uri = |dir: &Path| -> Result<String> {
        if !dir.is_absolute() {
            bail!(
                "{} is not absolute: wassette grants absolute paths",
                dir.display()
            );
        }
        let text = dir.to_str().context("a granted path is UTF-8")?;
        Ok(serde_json::to_string(&format!("fs://{text}"))?)
    };
    let mut yaml = format!(
        "version: \"1.0\"\n\
         description: \"dsh-fs: the workspace and the state directory, read and write\"\n\
         permissions:\n  storage:\n    allow:\n\
         \x20     - uri: {}\n        access: [\"read\", \"write\"]\n\
         \x20     - uri: {}\n        access: [\"read\", \"write\"]\n\
         \x20 environment:\n    allow:\n",
        uri(workspace)?,
        uri(state)?
    );
    for key in SETTINGS {
        yaml.push_str(&format!("      - key: {key}\n"));
    }
    Ok(yaml)
}
