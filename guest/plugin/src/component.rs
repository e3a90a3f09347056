//! The WIT glue: each world-level export of `fs-plugin` (or, with the
//! `undo` feature, `fs-plugin-undo`) turns its parameters into the tool's
//! JSON arguments (an absent option is an absent key) and answers
//! [`crate::call`]'s text. Nothing else lives here.

use serde_json::{Map, Value};

// The generated export glue passes each string as pointer and length.
#[allow(clippy::too_many_arguments)]
mod bindings {
    // The exports `read` and `write` would otherwise take wasi-libc's
    // symbols of those names, and the first file read would trap; `cm32p2`
    // is the component model's standard name mangling, so the prefixed
    // names are still found as the world's exports.
    #[cfg(not(feature = "undo"))]
    wit_bindgen::generate!({
        world: "fs-plugin",
        path: "../../wit/since_v0.1.0",
        export_prefix: "cm32p2||",
        pub_export_macro: true,
    });
    #[cfg(feature = "undo")]
    wit_bindgen::generate!({
        world: "fs-plugin-undo",
        path: "../../wit/since_v0.1.0",
        export_prefix: "cm32p2||",
        pub_export_macro: true,
    });
}

use bindings::{Guest, export};

/// The exported component.
struct Component;

/// Runs `tool` with `fields`, the absent ones left out.
fn run(tool: &str, fields: &[(&str, Option<Value>)]) -> String {
    let arguments: Map<String, Value> = fields
        .iter()
        .filter_map(|(name, value)| Some(((*name).to_owned(), value.clone()?)))
        .collect();
    let mut settings = crate::Settings::from_env(|name| std::env::var(name).ok());
    // The component that offers undo keeps the journal from the first change.
    settings.journal_from_first_change = cfg!(feature = "undo");
    crate::call(&settings, tool, &Value::Object(arguments).to_string())
}

impl Guest for Component {
    fn read(file_path: String, offset: Option<u32>, limit: Option<u32>) -> String {
        run(
            "read",
            &[
                ("file_path", Some(file_path.into())),
                ("offset", offset.map(Value::from)),
                ("limit", limit.map(Value::from)),
            ],
        )
    }

    fn write(file_path: String, content: String) -> String {
        run(
            "write",
            &[
                ("file_path", Some(file_path.into())),
                ("content", Some(content.into())),
            ],
        )
    }

    fn edit(
        file_path: String,
        old_string: String,
        new_string: String,
        replace_all: Option<bool>,
    ) -> String {
        run(
            "edit",
            &[
                ("file_path", Some(file_path.into())),
                ("old_string", Some(old_string.into())),
                ("new_string", Some(new_string.into())),
                ("replace_all", replace_all.map(Value::from)),
            ],
        )
    }

    fn glob(pattern: String, path: Option<String>) -> String {
        run(
            "glob",
            &[
                ("pattern", Some(pattern.into())),
                ("path", path.map(Value::from)),
            ],
        )
    }

    fn grep(pattern: String, path: Option<String>, include: Option<String>) -> String {
        run(
            "grep",
            &[
                ("pattern", Some(pattern.into())),
                ("path", path.map(Value::from)),
                ("include", include.map(Value::from)),
            ],
        )
    }

    #[cfg(feature = "undo")]
    fn multi_edit(file_path: String, edits: Vec<bindings::TextEdit>) -> String {
        let edits: Vec<Value> = edits
            .into_iter()
            .map(|e| {
                let mut edit = Map::new();
                edit.insert("old_string".into(), e.old_string.into());
                edit.insert("new_string".into(), e.new_string.into());
                if let Some(all) = e.replace_all {
                    edit.insert("replace_all".into(), all.into());
                }
                Value::Object(edit)
            })
            .collect();
        run(
            "multi_edit",
            &[
                ("file_path", Some(file_path.into())),
                ("edits", Some(edits.into())),
            ],
        )
    }

    #[cfg(feature = "undo")]
    fn checkpoint(label: Option<String>) -> String {
        run("checkpoint", &[("label", label.map(Value::from))])
    }

    #[cfg(feature = "undo")]
    fn changes(since: Option<u32>) -> String {
        run("changes", &[("since", since.map(Value::from))])
    }

    #[cfg(feature = "undo")]
    fn revert(to: Option<u32>) -> String {
        run("revert", &[("to", to.map(Value::from))])
    }
}

export!(Component with_types_in bindings);
