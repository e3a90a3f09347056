#!/usr/bin/env bash
# Per-call latency (10k sequential reads of a 4 KiB file in one session) and cold start of the
# same tools component in each host, in one run: the wasmtime library (`dsh-fs-bench`, which
# also gives the native baseline), the stock wasmtime CLI (composed component) and Node.js (jco).
#
#   scripts/bench-hosts.sh        needs scripts/setup; builds what it runs
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

cargo build --release -p dsh-fs -p dsh-fs-bench --quiet
cargo xtask cli >/dev/null

echo "== wasmtime library (dsh-fs, local disk)"
target/release/dsh-fs-bench --max-mib 0 --reps 5
echo
echo "== stock wasmtime CLI (dsh_fs_cli.wasm over wasi:filesystem)"
scripts/bench-cli.sh
echo
echo "== Node.js (jco transpile, JS in-memory store)"
npm --prefix host/js run --silent build >/dev/null
npm --prefix host/js run --silent bench
