"""The first windowed read of the middle of a large file through the wheel
(`dsh_fs.Session` over the local disk), against `wc -l` of it and against
the same read through `dsh-fs serve` driven from this script: each a median
of 5, each in a fresh session (the server warmed by a read of another file). `dsh-fs-bench` writes the file (80-byte
lines); the first argument names another, the second the `dsh-fs` binary.
Prints; asserts nothing.

    python host/python/bench/first_read.py [FILE] [DSH_FS]

With `--reads N FILE`, only the wheel's reads, N of them, each in a fresh
session, printed as one JSON line of milliseconds: `dsh-fs-bench` runs it
so, and sets them beside the library's in the same run.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import dsh_fs

if sys.argv[1:2] == ["--reads"]:
    count, large, binary = int(sys.argv[2]), sys.argv[3], None
else:
    count = None
    large = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        tempfile.gettempdir(), "dsh-fs-bench", "text-100mib.txt"
    )
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/dsh-fs"
root, name = os.path.split(large)
middle = os.path.getsize(large) // 80 // 2
args = {"file_path": name, "offset": middle, "limit": 2000}


def timed(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1000


def wheel_read(session):
    result = session.execute("read", args)
    assert not result.is_error, result.text


def serve_read(server):
    server.stdin.write(json.dumps({"tool": "read", "arguments": args}) + "\n")
    server.stdin.flush()
    reply = json.loads(server.stdout.readline())
    assert not reply["is_error"], reply["text"]


if count is not None:
    ms = []
    for _ in range(count):
        session = dsh_fs.Session(root=root)
        ms.append(timed(lambda: wheel_read(session)))
    print(json.dumps({"python": sys.version.split()[0], "ms": ms}))
    sys.exit(0)

reads, counts, serves = [], [], []
for _ in range(5):
    session = dsh_fs.Session(root=root)
    reads.append(timed(lambda: wheel_read(session)))
    counts.append(timed(lambda: subprocess.run(["wc", "-l", large], check=True, capture_output=True)))
    server = subprocess.Popen(
        [binary, "serve", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    # Warmed by a read of another, small file, as dsh-fs-bench warms its servers.
    warm = {"file_path": "small-4k.txt", "limit": 1}
    server.stdin.write(json.dumps({"tool": "read", "arguments": warm}) + "\n")
    server.stdin.flush()
    server.stdout.readline()
    serves.append(timed(lambda: serve_read(server)))
    server.stdin.close()
    server.wait()

read, wc, serve = (statistics.median(x) for x in (reads, counts, serves))
print(f"first read of the middle of {os.path.getsize(large) >> 20} MiB, median of 5")
print(f"  wheel {read:.2f} ms  `dsh-fs serve` {serve:.2f} ms  `wc -l` {wc:.2f} ms")
print(f"  wheel / serve {read / serve:.2f}x  wheel / wc -l {read / wc:.2f}x")
