"""The documentation's Python blocks run as written: the README's section
"Python" (install, quickstart and what it prints) and the section "LangChain"
of docs/hosts/python.md. The install block is run by scripts/test-python (with
the dev profile) to make the wheel these tests run on; here the Python blocks
run in a scratch directory, and the LangChain tools they define are driven
through LangChain's own tool interface (no model)."""

import re
import subprocess
import sys

from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

import dsh_fs

from conftest import REPO


def section_blocks(path, title):
    """The fenced blocks of the section `## title` of the Markdown file `path`
    (relative to the repository; the section ends at the next `## `), as
    (language, body) pairs. A missing section, or one without blocks, fails."""
    text = (REPO / path).read_text()
    marker = f"\n## {title}\n"
    assert marker in text, f"{path} has no section {title!r}"
    section = text.split(marker, 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    assert found, f"{path}, section {title!r}, has no code blocks"
    return found


def python_section():
    """The Python blocks by language, the README's first, then the LangChain
    page's: {"sh": [...], "python": [...], "text": [...]}."""
    blocks = {}
    for language, body in section_blocks("README.md", "Python") + section_blocks(
        "docs/hosts/python.md", "LangChain"
    ):
        blocks.setdefault(language, []).append(body)
    return blocks


def test_the_readme_shows_the_install_the_quickstart_and_the_langchain_wiring():
    blocks = python_section()
    assert len(blocks["sh"]) == 1 and "maturin build --release" in blocks["sh"][0]
    quickstart, langchain = blocks["python"]
    assert "Session(" in quickstart and "StructuredTool" in langchain
    assert len(blocks["text"]) == 1


def test_the_quickstart_prints_what_the_readme_shows(tmp_path):
    blocks = python_section()
    run = subprocess.run([sys.executable, "-c", blocks["python"][0]], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == blocks["text"][0]
    assert (tmp_path / "project/app.py").read_text() == "x = 3\n"


def test_langchain_tools_keep_the_session(tmp_path, monkeypatch):
    wiring = python_section()["python"][1]
    app = tmp_path / "project/app.py"
    app.parent.mkdir()
    app.write_text("print('hello')\n")
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(wiring, namespace)
    tools = {tool.name: tool for tool in namespace["tools"]}

    for definition in dsh_fs.definitions():
        tool = tools[definition["name"]]
        # What a chat model is given by bind_tools: the component's own schema.
        function = convert_to_openai_tool(tool)["function"]
        assert function["description"] == definition["description"]
        assert function["parameters"]["properties"] == definition["parameters"]["properties"]

    assert tools["read"].invoke({"file_path": "app.py"}).startswith("File: app.py\n1: print('hello')")
    edited = tools["edit"].invoke({"file_path": "app.py", "old_string": "hello", "new_string": "hi"})
    assert edited.startswith("Edited app.py: 1 replacement at line 1.")
    assert app.read_text() == "print('hi')\n"

    app.write_text("print('changed elsewhere')\n")
    call = {
        "type": "tool_call",
        "id": "call-1",
        "name": "edit",
        "args": {"file_path": "app.py", "old_string": "print", "new_string": "log"},
    }
    stale = tools["edit"].invoke(call)
    assert isinstance(stale, ToolMessage)
    assert stale.status == "error"
    assert stale.content.startswith("FS_STALE_VERSION: app.py changed since it was last read.")
    assert app.read_text() == "print('changed elsewhere')\n"
