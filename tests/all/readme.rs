//! The README's code stays what the tests run.

/// The README's Rust block is `host/rust/examples/embed.rs`, which runs as a
/// doctest of the host crate.
#[test]
fn the_rust_embedding_snippet_is_the_tested_example() {
    let root = crate::workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example = std::fs::read_to_string(root.join("host/rust/examples/embed.rs")).unwrap();
    let blocks: Vec<&str> = readme
        .split("```rust\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(
        blocks.len(),
        1,
        "README.md must hold exactly one ```rust block, host/rust/examples/embed.rs"
    );
    assert_eq!(
        blocks[0], example,
        "README.md's ```rust block is not host/rust/examples/embed.rs"
    );
}
