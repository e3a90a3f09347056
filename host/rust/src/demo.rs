//! `dsh-fs demo`: real calls through the component on a real directory,
//! printed as they go — the file as it starts, a `write`, the read-before-edit
//! policy, a stale edit after another program changes the file, and
//! confinement. A scratch directory is removed at the end.

use crate::{DynProvider, LocalProvider, LocalStore, Runtime, SessionOptions};
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ORIGINAL: &str =
    "def greet(name):\r\n    return 'Hello, ' + name\r\n\r\nprint(greet('world'))\r\n";

/// `println!` that hands back a write error instead of panicking: when the
/// reader goes away (`dsh-fs demo | head`), the demo stops, removes its
/// scratch directory and ends quietly.
macro_rules! say {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*)
    };
}

/// Runs the demo in `root`, or in a scratch directory that is removed after.
pub fn run(root: Option<PathBuf>) -> Result<()> {
    match demo(root) {
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        done => done,
    }
}

fn demo(root: Option<PathBuf>) -> Result<()> {
    if let Some(root) = root {
        return walk_through(&root);
    }
    let scratch = tempfile::Builder::new().prefix("dsh-fs-demo-").tempdir()?;
    let done = walk_through(scratch.path());
    let shown = scratch.path().display().to_string();
    scratch.close()?;
    done?;
    say!("(removed {shown})")?;
    Ok(())
}

fn walk_through(root: &Path) -> Result<()> {
    let file = root.join("hello.py");
    std::fs::write(&file, ORIGINAL)?;
    say!("workspace: {}\n", root.display())?;
    show_on_disk(&file)?;
    let provider: Arc<DynProvider> = Arc::new(LocalProvider::new(LocalStore::new(root)?));
    let mut session = Runtime::new()?.session(provider, SessionOptions::default())?;
    let mut call = |tool: &str, args: serde_json::Value| {
        let args = args.to_string();
        say!("> {tool} {args}")?;
        say!("{}\n", session.execute(tool, &args).text)
    };
    // A new file needs no read.
    call(
        "write",
        json!({"file_path": "notes.md", "content": "# Notes\n- greet everyone\n"}),
    )?;
    // An existing file does: this edit is refused until hello.py is read.
    call(
        "edit",
        json!({"file_path": "hello.py", "old_string": "Hello", "new_string": "Hi"}),
    )?;
    call("read", json!({"file_path": "hello.py", "limit": 2}))?;
    call(
        "edit",
        json!({"file_path": "hello.py", "old_string": "    return 'Hello, ' + name", "new_string": "    greeting = f'Hello, {name}!'\n    return greeting"}),
    )?;
    say!("(another program rewrites hello.py)\n")?;
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)?.replace("world", "there"),
    )?;
    call(
        "edit",
        json!({"file_path": "hello.py", "old_string": "there", "new_string": "everyone"}),
    )?;
    call("read", json!({"file_path": "hello.py"}))?;
    call(
        "edit",
        json!({"file_path": "hello.py", "old_string": "there", "new_string": "everyone"}),
    )?;
    call("read", json!({"file_path": "../outside.txt"}))?;
    show_on_disk(&file)?;
    Ok(())
}

/// The file as bytes on disk, line endings visible.
fn show_on_disk(file: &Path) -> Result<()> {
    say!(
        "{} on disk:",
        file.file_name().unwrap_or_default().to_string_lossy()
    )?;
    for line in std::fs::read_to_string(file)?.split_inclusive('\n') {
        say!("  {line:?}")?;
    }
    say!()?;
    Ok(())
}
