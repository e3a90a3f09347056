"""The plugin component served by wassette (stdio MCP), driven by the official
Python MCP client, against `dsh-fs mcp` driven the same way: one scenario of
calls, the same texts and codes call by call. wassette runs every call in a
fresh instance; only the state directory carries what was read.

Run by tests/all/plugin/wassette.rs with one argument, a JSON object:
  wassette     the wassette executable
  dsh_fs       the dsh-fs executable
  source       what load-component loads: file:///…/dsh_fs_plugin.wasm or oci://…
  component_id the id wassette gives it (the file's stem; the OCI repository, `/` as `_`)
  home         wassette's HOME: its components in ~/.local/share/wassette/components,
               where the policy was put, unless the source carries it (an OCI layer)
  root, state  the workspace and the state directory the policy grants
  expect_policy  the policy text the component directory must hold after loading
  tools_text   the tools as the README shows them (`name(param: type, …)`)
  scratch      a scratch directory: the workspace of `dsh-fs mcp`, wassette's secrets
  env          more environment for wassette (SSL_CERT_FILE for a local registry)
  undo         (optional) true for the fs-plugin-undo component: the scenario goes on
               with multi-edit, checkpoint, changes and revert, against `dsh-fs mcp
               --extra-tools` with the same tools
Prints one line per call; exits non-zero on the first difference.
"""

import asyncio
import json
import os
import pathlib
import sys

import mcp.client.stdio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

# wassette does not exit when its stdin closes: the client's wait before it
# sends SIGTERM is all a session would spend on shutdown.
mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT = 0.2

TOOLS = ["edit", "glob", "grep", "read", "write"]
EXTRA = ["multi_edit", "checkpoint", "changes", "revert"]

# Each function's parameters, as the tool's JSON names; wassette takes them
# in kebab-case, every one present (an option as null).
PARAMETERS = {
    "read": ["file_path", "offset", "limit"],
    "write": ["file_path", "content"],
    "edit": ["file_path", "old_string", "new_string", "replace_all"],
    "glob": ["pattern", "path"],
    "grep": ["pattern", "path", "include"],
    "multi_edit": ["file_path", "edits"],
    "checkpoint": ["label"],
    "changes": ["since"],
    "revert": ["to"],
}

APP = "def main():\n    print('hello')\n"


def scenario():
    """(tool, arguments) calls, and ("outside", file, text) changes."""
    return [
        ("read", {"file_path": "app.py"}),
        ("edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"}),
        ("outside", "app.py", "def main():\n    print('changed elsewhere')\n"),
        ("edit", {"file_path": "app.py", "old_string": "print", "new_string": "log"}),
        ("read", {"file_path": "app.py", "offset": 2}),
        ("edit", {"file_path": "app.py", "old_string": "print", "new_string": "log"}),
        ("edit", {"file_path": "notes.md", "old_string": "a", "new_string": "b"}),
        ("read", {"file_path": "../outside/secret.txt"}),
        ("write", {"file_path": "src/new.py", "content": "x = 1\n"}),
        ("write", {"file_path": "src/new.py", "content": "x = 2\n"}),
        ("glob", {"pattern": "**/*.py"}),
        ("grep", {"pattern": "log|x =", "include": "*.py"}),
        ("read", {"file_path": "missing.py"}),
    ]


def undo_scenario():
    """The scenario, then the undo tools' calls."""
    edits = lambda second: {"file_path": "app.py", "edits": [
        {"old_string": "def main", "new_string": "def run"},
        {"old_string": second, "new_string": "x = 0", "replace_all": True},
    ]}
    return scenario() + [
        ("checkpoint", {"label": "before the rename"}),
        ("read", {"file_path": "app.py"}),
        ("multi_edit", edits("print('nothing')")),
        ("multi_edit", edits("log")),
        ("changes", {}),
        ("revert", {"to": 1}),
        ("changes", {"since": 1}),
        ("revert", {}),
    ]


def wassette_name(tool):
    """The tool wassette makes of the function (`multi-edit`)."""
    return tool.replace("_", "-")


def wassette_args(tool, args):
    """`args` as wassette takes them: kebab-case, every parameter and
    field present (an option as null)."""
    def value(name, v):
        if name == "edits":
            fields = ["old_string", "new_string", "replace_all"]
            return [{f.replace("_", "-"): e.get(f) for f in fields} for e in v]
        return v
    return {p.replace("_", "-"): value(p, args.get(p)) for p in PARAMETERS[tool]}


def prepare(ws):
    """The scenario's files in `ws`, and a secret beside it, out of reach."""
    ws.mkdir(parents=True, exist_ok=True)
    (ws.parent / "outside").mkdir(exist_ok=True)
    (ws.parent / "outside" / "secret.txt").write_text("TOP SECRET\n")
    (ws / "app.py").write_text(APP)
    (ws / "notes.md").write_text("a note\n")
    return ws


def render(tools):
    """The tools as `name(param: type, …)` lines, the README's way."""
    def kind(schema):
        if "anyOf" in schema:
            return " | ".join(kind(s) for s in schema["anyOf"])
        return schema.get("type", "?")
    return "\n".join(
        f"{name}({', '.join(f'{p}: {kind(s)}' for p, s in tools[name].input_schema['properties'].items())})"
        for name in PARAMETERS if name in tools
    )


def code(text, is_error):
    head = text.split(":", 1)[0]
    if is_error or (head.isupper() and head.replace("_", "").isalpha() and ":" in text):
        return head
    return "OK"


async def run_mcp(dsh_fs, ws, steps, extra):
    args = ["mcp", "--root", str(ws)]
    if extra:
        args += ["--extra-tools", ",".join(extra)]
    server = StdioServerParameters(command=dsh_fs, args=args, env={})
    answers = []
    async with Client(server) as client:
        listed = {t.name: t.description for t in (await client.list_tools()).tools}
        for step in steps:
            if step[0] == "outside":
                (ws / step[1]).write_text(step[2])
                continue
            result = await client.call_tool(step[0], step[1])
            text = result.content[0].text
            answers.append((text, code(text, result.is_error)))
    return listed, answers


async def run_wassette(config, ws, state, steps, tools):
    scratch = pathlib.Path(config["scratch"])
    components = pathlib.Path(config["home"]) / ".local/share/wassette/components"
    components.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": config["home"],
        "PATH": os.environ.get("PATH", ""),
        "WASSETTE_SECRETS_DIR": str(scratch / "secrets"),
        "RUST_LOG": "error",
        "DSH_FS_ROOT": str(ws),
        "DSH_FS_STATE": str(state),
        **config["env"],
    }
    server = StdioServerParameters(command=config["wassette"], args=["run"], env=env)
    answers = []
    async with Client(server) as client:
        loaded = await client.call_tool("load-component", {"path": config["source"]})
        assert not loaded.is_error, loaded.content[0].text
        policy = (components / f"{config['component_id']}.policy.yaml").read_text()
        assert policy == config["expect_policy"], policy
        named = {wassette_name(t): t for t in tools}
        listed = {named[t.name]: t for t in (await client.list_tools()).tools if t.name in named}
        # The five the README shows; the undo tools' parameters below.
        five = {n: t for n, t in listed.items() if n in TOOLS}
        assert render(five) == config["tools_text"], render(five)
        for name, tool in listed.items():
            props = tool.input_schema["properties"]
            assert list(props) == [p.replace("_", "-") for p in PARAMETERS[name]], props
        for step in steps:
            if step[0] == "outside":
                (ws / step[1]).write_text(step[2])
                continue
            tool, args = step
            # Every parameter present: wassette refuses an absent one.
            result = await client.call_tool(wassette_name(tool), wassette_args(tool, args))
            text = result.content[0].text
            # A plain string return: the text is the answer; wassette sets
            # isError only for its own failures.
            assert not result.is_error, text
            answers.append((text, code(text, False)))
        # What a client that leaves an option out meets (wassette's rule,
        # not ours): the call fails before it reaches the component.
        absent = await client.call_tool("read", {"file-path": "app.py"})
        assert absent.is_error and "missing field" in absent.content[0].text, absent
        return {n: t.description for n, t in listed.items()}, answers


async def main(config):
    scratch = pathlib.Path(config["scratch"])
    mcp_ws = prepare(scratch / "mcp" / "ws")
    plugin_ws = prepare(pathlib.Path(config["root"]))
    state = pathlib.Path(config["state"])
    state.mkdir(parents=True, exist_ok=True)
    undo = config.get("undo", False)
    steps = undo_scenario() if undo else scenario()
    extra = EXTRA if undo else []
    tools = TOOLS + extra
    ours, expected = await run_mcp(config["dsh_fs"], mcp_ws, steps, extra)
    theirs, got = await run_wassette(config, plugin_ws, state, steps, tools)
    assert sorted(theirs) == sorted(tools), sorted(theirs)
    for name in tools:
        assert theirs[name] == ours[name], (name, theirs[name], ours[name])
    calls = [s for s in steps if s[0] != "outside"]
    for (tool, args), want, have in zip(calls, expected, got):
        print(json.dumps({"tool": tool, "args": args, "code": have[1]}))
        assert have == want, f"{tool} {args}:\nwassette: {have}\ndsh-fs mcp: {want}"
    assert len(got) == len(expected) == len(calls)
    for name in ["app.py", "notes.md", "src/new.py"]:
        assert (plugin_ws / name).read_bytes() == (mcp_ws / name).read_bytes(), name
    codes = [c for _, c in got]
    assert codes[:12] == [
        "OK", "OK", "FS_STALE_VERSION", "OK", "OK", "FS_NOT_OBSERVED", "FS_SANDBOX_DENIED",
        "OK", "OK", "OK", "OK", "FS_NOT_FOUND",
    ], codes
    if undo:
        assert codes[12:] == ["OK", "OK", "FS_EDIT_NOT_FOUND"] + ["OK"] * 5, codes
        reverted = got[17][0]
        assert reverted.startswith("Reverted to checkpoint 1 (session start): 2 files"), reverted


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
