#!/usr/bin/env bash
# Packages the Rust host crate for crates.io with the crates it depends on (core, search,
# command, the local and object stores, and the component build its build script uses;
# cargo packages them together against
# a local overlay of the registry). The package carries the built tools component in
# host/rust/component/, so a dependent builds it without this workspace. Extra arguments go to
# `cargo package` (e.g. --no-verify).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The component host/rust/build.rs builds and embeds (target/guest/.../dsh_fs_tools.wasm), built
# as it builds it. Not by building dsh-fs here: built alone, without the tests' dev-dependencies, its
# dependencies would have other features than the test build's, and tokio, wasmtime and the rest
# would compile again.
tools=$(cargo xtask tools)
mkdir -p host/rust/component
cp "$tools" host/rust/component/
cargo package -p dsh-fs-build -p dsh-fs-core -p dsh-fs-search -p dsh-fs-command \
    -p dsh-fs-store-local -p dsh-fs-store-object -p dsh-fs "$@"
