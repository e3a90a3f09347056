//! Embedding dsh-fs in a Rust agent: the README's example, also run as a
//! doctest of the crate. Run it with `cargo run -p dsh-fs --example embed`.
use dsh_fs::{LocalProvider, LocalStore, MemoryProvider, Runtime, SessionOptions};
use std::sync::Arc;

fn main() -> anyhow::Result<()> {
    // Engine + the component compiled with the build: build it once per process.
    let runtime = Runtime::new()?;

    // A session on a directory: nothing outside it can be read or written.
    let project = Arc::new(LocalProvider::new(LocalStore::new(".")?));
    let mut session = runtime.session(project, SessionOptions::default())?;
    let read = session.execute("read", r#"{"file_path": "Cargo.toml", "limit": 5}"#);
    println!("{}", read.text);

    // The same component on a virtual workspace: read, edit, then a stale edit.
    let scratch = Arc::new(MemoryProvider::default());
    scratch.store().insert("notes.md", "# draft\n");
    let mut session = runtime.session(scratch.clone(), SessionOptions::default())?;
    session.execute("read", r#"{"file_path": "notes.md"}"#);
    let edit = r#"{"file_path": "notes.md", "old_string": "draft", "new_string": "final"}"#;
    let edited = session.execute("edit", edit);
    assert!(!edited.is_error, "{}", edited.text);
    assert_eq!(scratch.store().get("notes.md").unwrap(), b"# final\n");

    scratch.store().insert("notes.md", "# changed elsewhere\n");
    let stale = session.execute("edit", edit);
    assert_eq!(stale.error.unwrap().code, "FS_STALE_VERSION");
    Ok(())
}
