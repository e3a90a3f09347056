"""The wheel's `dsh-fs` command: the MCP server driven by the official Python
MCP client (`mcp` from PyPI), and the command line, from the venv it was
installed into."""

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters

DSH_FS = pathlib.Path(sys.executable).parent / "dsh-fs"


def test_the_command_is_a_script_over_the_same_native_library(installed_wheel):
    assert DSH_FS.read_bytes().startswith(b"#!"), "a console script, not a second binary"
    natives = sorted(p.name for p in installed_wheel.iterdir() if p.suffix == ".so")
    assert len(natives) == 1 and natives[0].startswith("_native."), natives


def test_the_mcp_server_keeps_one_session_per_connection(tmp_path):
    app = tmp_path / "app.py"
    app.write_text("print('hello')\n")
    server = StdioServerParameters(
        command=str(DSH_FS),
        args=["mcp", "--root", str(tmp_path)],
        env={k: v for k, v in os.environ.items() if k.startswith("DSH_FS_")},
    )

    async def scenario():
        async with Client(server) as client:
            listed = await client.list_tools()
            assert sorted(t.name for t in listed.tools) == ["edit", "glob", "grep", "read", "write"]

            read = await client.call_tool("read", {"file_path": "app.py"})
            assert not read.is_error
            assert read.content[0].text.splitlines()[:2] == ["File: app.py", "1: print('hello')"]

            edit = await client.call_tool("edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"})
            assert not edit.is_error, edit.content[0].text
            assert app.read_text() == "print('hi')\n"

            app.write_text("print('changed elsewhere')\n")
            stale = await client.call_tool("edit", {"file_path": "app.py", "old_string": "print", "new_string": "log"})
            assert stale.is_error
            assert stale.content[0].text.startswith("FS_STALE_VERSION: app.py changed since it was last read.")
            assert stale.structured_content["error"]["code"] == "FS_STALE_VERSION"
            assert app.read_text() == "print('changed elsewhere')\n"

    asyncio.run(scenario())


def run(*args, cwd):
    return subprocess.run([str(DSH_FS), *args], cwd=cwd, capture_output=True, text=True)


def test_the_command_line(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    tools = run("tools", cwd=tmp_path)
    assert tools.returncode == 0, tools.stderr
    assert [d["name"] for d in json.loads(tools.stdout)] == ["read", "write", "edit", "glob", "grep"]

    read = run("call", "read", '{"file_path": "a.txt"}', "--json", cwd=tmp_path)
    assert (read.returncode, json.loads(read.stdout)["is_error"]) == (0, False)
    missing = run("call", "read", '{"file_path": "b.txt"}', cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stdout.startswith("FS_NOT_FOUND: b.txt does not exist.")

    served = subprocess.run(
        [str(DSH_FS), "serve", "--root", str(tmp_path)],
        input='{"tool":"read","arguments":{"file_path":"a.txt"}}\n'
        '{"tool":"edit","arguments":{"file_path":"a.txt","old_string":"one","new_string":"two"}}\n',
        capture_output=True, text=True,
    )
    assert served.returncode == 0, served.stderr
    assert [json.loads(line)["is_error"] for line in served.stdout.splitlines()] == [False, False]
    assert (tmp_path / "a.txt").read_text() == "two\n"

    bad_root = run("mcp", "--root", str(tmp_path / "missing"), cwd=tmp_path)
    assert bad_root.returncode == 2
    assert bad_root.stderr.startswith(f"dsh-fs: workspace root {tmp_path / 'missing'}:")
    usage = run("frobnicate", cwd=tmp_path)
    assert usage.returncode == 2 and "Usage: dsh-fs" in usage.stderr
    version = run("--version", cwd=tmp_path)
    assert (version.returncode, version.stdout.split()[0]) == (0, "dsh-fs")


def test_ctrl_c_ends_a_server(tmp_path):
    """The server runs in native code, where Python's own SIGINT handler
    would only set a flag: the script restores the default, so Ctrl-C ends
    it as it ends the native binary."""
    (tmp_path / "a.txt").write_text("one\n")
    server = subprocess.Popen(
        [str(DSH_FS), "serve", "--root", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        server.stdin.write('{"tool":"read","arguments":{"file_path":"a.txt"}}\n')
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["is_error"] is False  # serving, in native code
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == -signal.SIGINT
    finally:
        server.kill()
        server.wait()
