#!/usr/bin/env bash
# Builds the three components for wasm32-wasip2 (tools, wasi:filesystem provider, JSON-lines
# command) and composes them with `wac plug` into target/guest/dsh_fs_cli.wasm, a command
# component whose only imports are WASI, runnable with the stock `wasmtime run`.
#
#   scripts/build-cli-component.sh            build, compose, check the imports
#
# Needs `wac` (scripts/install-cli-tools.sh installs it) and python3 (the import check). The
# components are built exactly as host/build.rs builds the tools component (same target
# directory and release settings), so the two builds share artifacts instead of rebuilding.
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

# One package per cargo run: each resolves its own features, as host/build.rs does.
for package in dsh-fs-tools dsh-fs-provider-wasi dsh-fs-command; do
    "${CARGO:-cargo}" build --quiet --release --target wasm32-wasip2 -p "$package"
done

tools=$release/dsh_fs_tools.wasm
provider=$release/dsh_fs_provider_wasi.wasm
command=$release/dsh-fs-command.wasm
plugged=$target_dir/dsh_fs_tools_wasi.wasm

# tools imports dsh:fs/provider <- provider exports it; command imports dsh:fs/tools <- tools.
wac plug "$tools" --plug "$provider" -o "$plugged.tmp"
wac plug "$command" --plug "$plugged.tmp" -o "$out.tmp"
mv "$plugged.tmp" "$plugged"

# The composed component must import nothing but WASI: list its top-level imports.
imports=$(python3 - "$out.tmp" <<'PY'
import sys

def leb(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at

def name(data, at):
    size, at = leb(data, at)
    return data[at:at + size].decode(), at + size

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\0asm\x0d\0\x01\0":
    sys.exit(f"{sys.argv[1]} is not a component")
at = 8
while at < len(data):
    section = data[at]
    size, at = leb(data, at + 1)
    end = at + size
    if section == 10:  # import section: vec(importname' externdesc)
        count, at = leb(data, at)
        for _ in range(count):
            tag = data[at]
            imported, at = name(data, at + 1)
            if tag == 0x01:  # version suffix
                _, at = name(data, at)
            print(imported)
            kind = data[at]
            at += 1
            if kind == 0x00:  # core module: 0x11 typeidx
                at += 1
            elif kind in (0x02, 0x03):  # value or type bound
                bound = data[at]
                at += 1
                if kind == 0x03 and bound == 0x01:  # (sub resource)
                    continue
            _, at = leb(data, at)
    at = end
PY
)
if grep -qv '^wasi:' <<<"$imports"; then
    echo "error: $out.tmp imports more than WASI:" >&2
    echo "$imports" >&2
    exit 1
fi
mv "$out.tmp" "$out"
echo "$out ($(wc -c <"$out") bytes) imports:"
sed 's/^/  /' <<<"$imports"
