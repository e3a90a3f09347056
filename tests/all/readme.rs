//! The README's code stays what the tests run.

use std::path::Path;

/// The README's Rust block is `host/examples/embed.rs`, which runs as a
/// doctest of the host crate.
#[test]
fn the_rust_embedding_snippet_is_the_tested_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example = std::fs::read_to_string(root.join("host/examples/embed.rs")).unwrap();
    let blocks: Vec<&str> = readme
        .split("```rust\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(blocks, [example.as_str()]);
}
