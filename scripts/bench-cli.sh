#!/usr/bin/env bash
# Measures the composed command component under the stock `wasmtime run`: cold start (process
# start to the first result of one `read` of a 4 KiB file) and the per-call latency of sequential
# reads of that file in one session (piped JSON lines).
#
#   scripts/bench-cli.sh [COMPONENT]     default target/guest/dsh_fs_cli.wasm; CALLS=10000, RUNS=5
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"

wasm=${1:-target/guest/dsh_fs_cli.wasm}
calls=${CALLS:-10000}
runs=${RUNS:-5}
if [ ! -f "$wasm" ]; then
    echo "error: $wasm is missing; run cargo xtask cli" >&2
    exit 1
fi
command -v wasmtime >/dev/null || { echo "error: run scripts/install-cli-tools.sh" >&2; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/work"
for i in $(seq 1 64); do printf '%-63s\n' "line $i of a 4 KiB file"; done >"$dir/work/file.txt"
request='{"tool":"read","arguments":{"file_path":"file.txt"}}'
for _ in $(seq 1 "$calls"); do echo "$request"; done >"$dir/requests"
now() { date +%s%N; }

# Cold start: launch, send one request, stop the clock at its result line.
cold=()
for _ in $(seq 1 "$runs"); do
    start=$(now)
    coproc WT { exec wasmtime run --dir "$dir/work::/work" "$wasm"; }
    echo "$request" >&"${WT[1]}"
    IFS= read -r line <&"${WT[0]}"
    end=$(now)
    eval "exec ${WT[1]}>&-"
    wait "$WT_PID"
    case $line in *'"is_error":false'*) ;; *) echo "error: $line" >&2; exit 1 ;; esac
    cold+=($(((end - start) / 1000)))
done

# One session of $calls reads, against one session of a single read (the fixed cost).
session() {
    local start end
    start=$(now)
    head -n "$1" "$dir/requests" | wasmtime run --dir "$dir/work::/work" "$wasm" >"$dir/out"
    end=$(now)
    [ "$(grep -c '"is_error":false' "$dir/out")" -eq "$1" ] || { echo "error: failed calls" >&2; exit 1; }
    echo $(((end - start) / 1000))
}
one=$(session 1)
many=$(session "$calls")

sorted=$(printf '%s\n' "${cold[@]}" | sort -n)
median=$(sed -n "$(((runs + 1) / 2))p" <<<"$sorted")
echo "component: $wasm ($(wc -c <"$wasm") bytes), $(wasmtime --version)"
echo "cold start (launch to first result, 4 KiB read): median $((median / 1000)) ms," \
    "min $(($(head -1 <<<"$sorted") / 1000)) ms over $runs runs"
echo "session of $calls reads: $((many / 1000)) ms total; one-read session: $((one / 1000)) ms"
awk -v many="$many" -v one="$one" -v n="$calls" \
    'BEGIN { printf "per-call latency: %.1f us per read (%.0f reads/s)\n", (many - one) / (n - 1), (n - 1) / ((many - one) / 1e6) }'
