#!/usr/bin/env bash
# Installs the stock CLIs that run and compose the dsh-fs command component: wasmtime-cli and
# wac-cli at pinned versions, from crates.io, only when the ones on PATH do not already report them.
set -euo pipefail

WASMTIME_VERSION=48.0.8
WAC_VERSION=0.12.0

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

has_version() {
    local bin=$1 version=$2
    command -v "$bin" >/dev/null 2>&1 && "$bin" --version 2>/dev/null | grep -qw -- "$version"
}

if has_version wasmtime "$WASMTIME_VERSION"; then
    echo "wasmtime $WASMTIME_VERSION already installed"
else
    cargo install "wasmtime-cli@$WASMTIME_VERSION" --locked --no-default-features \
        --features run,component-model,cranelift
fi

if has_version wac "$WAC_VERSION"; then
    echo "wac $WAC_VERSION already installed"
else
    cargo install "wac-cli@$WAC_VERSION" --locked --no-default-features
fi

wasmtime --version
wac --version
