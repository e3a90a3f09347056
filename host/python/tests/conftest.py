"""Shared helpers of the wheel's tests. They run in a fresh venv where
scripts/test-python installed the built wheel and nothing of the checkout, so
`import dsh_fs` is the installed package."""

import pathlib
import sys

import pytest

import dsh_fs

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session", autouse=True)
def installed_wheel():
    """Fails fast when `dsh_fs` is not the installed wheel (a checkout's
    `host/python/dsh_fs` on sys.path has no native module)."""
    location = pathlib.Path(dsh_fs.__file__).resolve()
    assert pathlib.Path(sys.prefix).resolve() in location.parents, location
    return location.parent
