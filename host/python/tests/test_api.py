"""The in-process API on real files in a temp directory: a session keeps its
read-before-edit observations across calls, and a stale edit is refused."""

import fcntl
import os
import threading
import time

import pytest

import dsh_fs
from dsh_fs import Session, ToolError, ToolResult


def edit_args(old, new):
    return {"file_path": "app.py", "old_string": old, "new_string": new}


def test_read_edit_then_a_stale_edit_is_refused(tmp_path):
    app = tmp_path / "app.py"
    app.write_bytes(b"def greet():\r\n    return 'hello'\r\n")
    session = Session(root=tmp_path)

    read = session.execute("read", {"file_path": "app.py"})
    assert (read.is_error, read.code, read.message) == (False, None, None)
    assert read.text.splitlines()[:3] == ["File: app.py", "1: def greet():", "2:     return 'hello'"]

    edit = session.execute("edit", edit_args("hello", "hi"))
    assert not edit.is_error, edit.text
    assert edit.text.startswith("Edited app.py: 1 replacement at line 2.")
    assert app.read_bytes() == b"def greet():\r\n    return 'hi'\r\n"

    app.write_text("def greet():\n    return 'changed elsewhere'\n")
    stale = session.execute("edit", edit_args("hi", "hey"))
    assert stale.is_error
    assert stale.code == "FS_STALE_VERSION"
    assert stale.text == f"FS_STALE_VERSION: {stale.message}"
    assert stale.message.startswith("app.py changed since it was last read.")
    assert app.read_text() == "def greet():\n    return 'changed elsewhere'\n"

    with pytest.raises(ToolError) as raised:
        stale.raise_for_error()
    assert (raised.value.code, str(raised.value)) == ("FS_STALE_VERSION", stale.text)

    session.execute("read", {"file_path": "app.py"}).raise_for_error()
    again = session.execute("edit", edit_args("changed elsewhere", "hey")).raise_for_error()
    assert again.text.startswith("Edited app.py")
    assert app.read_text() == "def greet():\n    return 'hey'\n"


def test_an_edit_needs_a_read_in_the_same_session(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    reader, other = Session(root=tmp_path), Session(root=tmp_path)
    reader.execute("read", {"file_path": "app.py"}).raise_for_error()
    refused = other.execute("edit", edit_args("x = 1", "x = 2"))
    assert refused.code == "FS_NOT_OBSERVED", refused.text
    assert reader.execute("edit", edit_args("x = 1", "x = 2")).raise_for_error()
    assert (tmp_path / "app.py").read_text() == "x = 2\n"


def test_policy_off_edits_unread_files(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    Session(root=tmp_path, policy=False).execute("edit", edit_args("1", "2")).raise_for_error()
    assert (tmp_path / "app.py").read_text() == "x = 2\n"


def test_arguments_as_the_model_wrote_them(tmp_path):
    (tmp_path / "notes.md").write_text("a\nb\nc\n")
    session = Session(root=str(tmp_path))
    assert session.execute("read", '{"file_path": "notes.md", "offset": 2, "limit": 1}').text.splitlines()[1] == "2: b"
    bad = session.execute("read", '{"file_path": "notes.md", "limit": "all"}')
    assert bad.code == "INVALID_ARGS", bad.text
    assert session.execute("rm", {}).code == "UNKNOWN_TOOL"
    assert isinstance(session.execute("glob", {"pattern": "*.md"}), ToolResult)
    assert session.execute("glob", {"pattern": "*.md"}).text == "notes.md"


def test_nothing_outside_the_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("TOP SECRET\n")
    session = Session(root=root)
    for path in ["../secret.txt", str(tmp_path / "secret.txt")]:
        denied = session.execute("read", {"file_path": path})
        assert denied.code == "FS_SANDBOX_DENIED", denied.text
        assert "TOP SECRET" not in denied.text


def test_opening_errors_are_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError, match="workspace root"):
        Session(root=tmp_path / "missing")
    with pytest.raises(TypeError):
        Session()
    with pytest.raises(TypeError):
        Session(root=tmp_path, store="s3://bucket/prefix")
    with pytest.raises(ValueError):
        Session(store="ftp://bucket/prefix")


def test_definitions_are_json_schema_dicts():
    definitions = dsh_fs.definitions()
    assert [d["name"] for d in definitions] == ["read", "write", "edit", "glob", "grep"]
    edit = definitions[2]
    assert set(edit) == {"name", "description", "guidance", "parameters"}
    assert edit["parameters"]["type"] == "object"
    assert edit["parameters"]["required"] == ["file_path", "old_string", "new_string"]
    assert "read" in edit["description"]


def test_multi_edit_is_listed_on_request_and_applies_all_or_nothing(tmp_path):
    assert [d["name"] for d in dsh_fs.definitions(extra=["multi_edit"])][-1] == "multi_edit"
    with pytest.raises(ValueError, match="the extra tools are multi_edit"):
        dsh_fs.definitions(extra=["undo"])
    app = tmp_path / "app.py"
    app.write_bytes(b"a = 1\r\nb = 2\r\n")
    session = Session(root=tmp_path)
    session.execute("read", {"file_path": "app.py"}).raise_for_error()
    edits = [{"old_string": "a = 1", "new_string": "a = 10"}, {"old_string": "c = 3", "new_string": "c = 30"}]
    missed = session.execute("multi_edit", {"file_path": "app.py", "edits": edits})
    assert missed.code == "FS_EDIT_NOT_FOUND" and missed.message.startswith("edit 2 of 2: "), missed.text
    assert app.read_bytes() == b"a = 1\r\nb = 2\r\n"
    edits[1] = {"old_string": "b = 2", "new_string": "b = 20"}
    done = session.execute("multi_edit", {"file_path": "app.py", "edits": edits}).raise_for_error()
    assert done.text == "Edited app.py: 2 edits, 2 replacements (first change at line 1).\n@@ -1,2 +1,2 @@\n-a = 1\n-b = 2\n+a = 10\n+b = 20"
    assert app.read_bytes() == b"a = 10\r\nb = 20\r\n"


def test_a_revert_puts_the_bytes_back_and_leaves_an_outside_change_alone(tmp_path):
    (tmp_path / "a.ini").write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    (tmp_path / "b.txt").write_bytes(b"one\n")
    session = Session(root=tmp_path)
    assert session.execute("checkpoint", {}).raise_for_error().text.startswith("Checkpoint 1 set")
    for name, old, new in [("a.ini", "x = 1", "x = 2"), ("b.txt", "one", "two")]:
        session.execute("read", {"file_path": name}).raise_for_error()
        session.execute("edit", {"file_path": name, "old_string": old, "new_string": new}).raise_for_error()
    (tmp_path / "b.txt").write_bytes(b"three\n")
    reverted = session.execute("revert", {"to": 1}).raise_for_error()
    assert reverted.text.startswith("Reverted to checkpoint 1: 1 file restored, 1 left alone."), reverted.text
    assert (tmp_path / "a.ini").read_bytes() == b"\xef\xbb\xbfx = 1\r\n"
    assert (tmp_path / "b.txt").read_bytes() == b"three\n"
    off = Session(root=tmp_path, journal_bytes=0).execute("checkpoint", {})
    assert off.code == "INVALID_ARGS" and "keeps no change journal" in off.message, off.text


def test_a_waiting_call_lets_other_threads_run(tmp_path):
    """The GIL is released during a call: while this thread holds the
    directory's lock, a write on another thread waits for it inside the
    native call, and this thread still runs Python and releases the lock. A
    call that kept the GIL would hold it until the 30 s lock wait ran out and
    answer FS_BUSY."""
    session = Session(root=tmp_path)
    results = []
    lock = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    worker = threading.Thread(
        target=lambda: results.append(session.execute("write", {"file_path": "new.txt", "content": "x\n"}))
    )
    worker.start()
    time.sleep(0.5)  # lets the worker reach the lock; the outcome does not depend on it
    assert not (tmp_path / "new.txt").exists()
    fcntl.flock(lock, fcntl.LOCK_UN)
    os.close(lock)
    worker.join()
    assert not results[0].is_error, results[0].text
    assert (tmp_path / "new.txt").read_text() == "x\n"
