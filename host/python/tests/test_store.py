"""`Session(store="s3://...")` on a real S3-compatible server: moto, from the
checkout's .venv (scripts/setup installs it there; DSH_FS_PYTHON overrides),
on a free loopback port."""

import os
import socket
import subprocess
import time
import urllib.request

import pytest

from dsh_fs import Session

from conftest import REPO


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    python = os.environ.get("DSH_FS_PYTHON", str(REPO / ".venv/bin/python"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if server.poll() is not None:
                pytest.fail(f"moto exited with {server.returncode} (run scripts/setup): {log.read_text()}")
            try:
                urllib.request.urlopen(endpoint + "/", timeout=5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail(f"moto did not answer on {endpoint}: {log.read_text()}")
        yield endpoint
    finally:
        server.kill()
        server.wait()


def create_bucket(url):
    """moto creates a bucket on an unsigned request."""
    urllib.request.urlopen(urllib.request.Request(url, method="PUT")).close()


def test_read_edit_then_a_stale_edit_on_an_object_store(moto, monkeypatch):
    for name, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(name, value)
    create_bucket(f"{moto}/py-bucket")

    def open_session(policy=True):
        return Session(store="s3://py-bucket/work", endpoint=moto, region="us-east-1", policy=policy)

    # Another client of the bucket, changing the object behind the session's back.
    elsewhere = open_session(policy=False)
    elsewhere.execute("write", {"file_path": "app.py", "content": "print('hello')\n"}).raise_for_error()
    session = open_session()

    assert session.execute("read", {"file_path": "app.py"}).text.splitlines()[1] == "1: print('hello')"
    edit = session.execute("edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"})
    assert not edit.is_error, edit.text
    assert open_session().execute("read", {"file_path": "app.py"}).text.splitlines()[1] == "1: print('hi')"

    elsewhere.execute("write", {"file_path": "app.py", "content": "print('changed elsewhere')\n"}).raise_for_error()
    stale = session.execute("edit", {"file_path": "app.py", "old_string": "print", "new_string": "log"})
    assert stale.code == "FS_STALE_VERSION", stale.text
    assert open_session().execute("read", {"file_path": "app.py"}).text.splitlines()[1] == "1: print('changed elsewhere')"
