#!/usr/bin/env bash
# Installs the stock CLI that runs the dsh-fs command component: wasmtime-cli at its pinned
# version, from crates.io, only when the one on PATH does not already report it. (The components
# are composed by `cargo xtask`, with wac-graph: no wac CLI is needed.)
set -euo pipefail

WASMTIME_VERSION=48.0.8

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

has_version() {
    local bin=$1 version=$2
    command -v "$bin" >/dev/null 2>&1 && "$bin" --version 2>/dev/null | grep -qw -- "$version"
}

# `run` for the command and `--invoke` of the plugin, `compile` to compile the plugin once ahead
# of its many one-call processes (`wasmtime run --allow-precompiled`).
# (Built without clap's help, so `compile` is probed by what it says without arguments; one built
# without that feature takes `compile` for a module's name. --force replaces such a build.)
has_compile() {
    local said
    said=$(wasmtime compile 2>&1 || true)
    grep -q 'required arguments' <<<"$said"
}
if has_version wasmtime "$WASMTIME_VERSION" && has_compile; then
    echo "wasmtime $WASMTIME_VERSION already installed"
else
    cargo install "wasmtime-cli@$WASMTIME_VERSION" --locked --force --no-default-features \
        --features run,compile,component-model,cranelift
fi

wasmtime --version
