#!/usr/bin/env bash
# Builds the three components for wasm32-wasip2 (tools, the text layer over the wasi:filesystem store, JSON-lines
# command) and composes them with `wac plug` into target/guest/dsh_fs_cli.wasm, a command
# component whose only imports are WASI, runnable with the stock `wasmtime run`.
#
#   scripts/build-cli-component.sh            build and compose
#
# Needs `wac` (scripts/install-cli-tools.sh installs it). The components are built exactly as
# host/rust/build.rs builds the tools component (same target directory and release settings), so the
# two builds share artifacts instead of rebuilding.
set -euo pipefail
cd "$(dirname "$0")/.."
workspace=$PWD

export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
if ! command -v wac >/dev/null 2>&1; then
    echo "error: wac not found; run scripts/install-cli-tools.sh" >&2
    exit 1
fi

case "${CARGO_TARGET_DIR:-}" in
    "") outer_target=$workspace/target ;;
    /*) outer_target=$CARGO_TARGET_DIR ;;
    *) outer_target=$workspace/$CARGO_TARGET_DIR ;;
esac
target_dir=${DSH_FS_GUEST_TARGET_DIR:-$outer_target/guest}
release=$target_dir/wasm32-wasip2/release
out=$target_dir/dsh_fs_cli.wasm

# Flags and wrappers meant for a host build must not leak into the component builds.
unset CARGO_ENCODED_RUSTFLAGS RUSTFLAGS RUSTC_WORKSPACE_WRAPPER RUSTC_WRAPPER CARGO_BUILD_TARGET \
    CARGO_MAKEFLAGS MAKEFLAGS MFLAGS
export CARGO_TARGET_DIR=$target_dir
export CARGO_PROFILE_RELEASE_DEBUG=false
export CARGO_PROFILE_RELEASE_STRIP=true
export CARGO_PROFILE_RELEASE_LTO=true
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

# One package per cargo run: each resolves its own features, as host/rust/build.rs does.
for package in dsh-fs-tools dsh-fs-store-wasi dsh-fs-command; do
    "${CARGO:-cargo}" build --quiet --release --target wasm32-wasip2 -p "$package"
done

tools=$release/dsh_fs_tools.wasm
provider=$release/dsh_fs_store_wasi.wasm
command=$release/dsh-fs-command.wasm
plugged=$target_dir/dsh_fs_tools_wasi.wasm

# tools imports dsh:fs/provider <- provider exports it; command imports dsh:fs/tools <- tools.
wac plug "$tools" --plug "$provider" -o "$plugged.tmp"
wac plug "$command" --plug "$plugged.tmp" -o "$out.tmp"
mv "$plugged.tmp" "$plugged"

mv "$out.tmp" "$out"
# tests/all/wasmtime_cli.rs checks that it imports nothing but WASI.
echo "$out ($(wc -c <"$out") bytes)"
