"""read, write, edit, glob and grep for AI agents, run in process.

The tools run in a sandboxed WebAssembly component hosted by wasmtime inside
this module's native library. A :class:`Session` keeps the read-before-edit
observations across its calls: a file can be edited or overwritten only after
the session read it, and only while it still has the content that was read.

    session = Session(root="project")
    print(session.execute("read", {"file_path": "app.py"}).text)

Failures are results, not exceptions: the model is meant to see them. A
result's ``text`` is what to hand to the model either way; ``is_error`` and
``code`` (``FS_STALE_VERSION``, ``INVALID_ARGS``, ...) tell a program what
happened. :meth:`ToolResult.raise_for_error` turns a failure into a
:class:`ToolError` for frameworks that signal tool failures by raising.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native

__all__ = ["Session", "ToolError", "ToolResult", "definitions"]


class ToolError(Exception):
    """A failed tool call, raised by :meth:`ToolResult.raise_for_error`.

    ``str(error)`` is the model-facing text (``CODE: message``).
    """

    def __init__(self, code: str, message: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.message = message
        self.text = text


@dataclass(frozen=True)
class ToolResult:
    """The answer to one call.

    ``text`` is for the model, on success and on failure. ``code`` is a stable
    error code (``FS_STALE_VERSION``, ``FS_NOT_OBSERVED``, ``INVALID_ARGS``,
    ...) and ``message`` the text after it; both are ``None`` on success.
    """

    text: str
    is_error: bool
    code: Optional[str] = None
    message: Optional[str] = None

    def __str__(self) -> str:
        return self.text

    def raise_for_error(self) -> "ToolResult":
        """Raise :class:`ToolError` if the call failed; return ``self`` otherwise."""
        if self.is_error:
            raise ToolError(self.code or "INTERNAL_ERROR", self.message or self.text, self.text)
        return self


class Session:
    """One agent session on a directory (``root``) or an object-store prefix
    (``store="s3://BUCKET/PREFIX"``, with ``endpoint`` for MinIO or another
    S3-compatible server and ``region``; credentials come from the AWS
    environment variables, ``AWS_ACCESS_KEY_ID`` and so on).

    Nothing outside the root or prefix can be read or written. ``policy=False``
    turns the read-before-write/edit policy off. ``journal_bytes`` bounds the
    old text the change journal keeps for ``checkpoint``/``revert`` (0: none). A session may be shared by
    threads (its calls run one after the other); the GIL is released while a
    call runs, so ``asyncio.to_thread(session.execute, ...)`` does not block an
    event loop. Raises ``OSError`` (``FileNotFoundError``, ...) for a root that
    cannot be opened, ``ValueError`` for a bad store URL.
    """

    def __init__(
        self,
        root: Union[str, "os.PathLike[str]", None] = None,
        *,
        store: Optional[str] = None,
        endpoint: Optional[str] = None,
        region: Optional[str] = None,
        policy: bool = True,
        journal_bytes: int = 32 << 20,
    ) -> None:
        if (root is None) == (store is None):
            raise TypeError("Session needs exactly one of root=DIRECTORY or store='s3://BUCKET/PREFIX'")
        if store is None and (endpoint is not None or region is not None):
            raise TypeError("endpoint and region apply to store=, not to root=")
        self._native = _native.Session(
            None if root is None else os.fspath(root), store, endpoint, region, policy, journal_bytes
        )

    def execute(self, tool: str, arguments: Union[Mapping[str, Any], str, None] = None) -> ToolResult:
        """Run ``tool`` (``read``, ``write``, ``edit``, ``glob`` or ``grep``)
        with ``arguments`` (a mapping, or JSON text as a model wrote it).
        Never raises for a failed call: see :class:`ToolResult`."""
        if arguments is None:
            arguments = {}
        text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
        return ToolResult(*self._native.execute(tool, text))


def definitions(extra: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """The tools as the model sees them: a list of dicts with ``name``,
    ``description``, ``guidance`` (longer advice for a system prompt) and
    ``parameters`` (the arguments' JSON Schema). ``extra`` names extra tools
    to list after the five (``"multi_edit"``); a session runs them either
    way. An unknown name raises ``ValueError``."""
    return json.loads(_native.definitions(list(extra)))
