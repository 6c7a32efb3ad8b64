"""The brief a task archived in its own MEMORY store, read for ``ditto verify`` without trusting the folder.

Before writing ``brief.json`` the workflow archives the same content as the
``retrieval:<requestId>:brief:<taskId>`` checkpoint in ``memory.sqlite``
(``<taskId>`` from ``.task-id``). Comparing the
two catches edits to ``brief.json`` that are consistent with the snapshots and
the request (a quote added from a snapshot the model never chose, edited
coverage notes, a changed ``createdAt``, a request and brief rewritten
together), unless ``memory.sqlite`` was rewritten as well.

The database (and its ``-wal`` file, if any) is read with the same no-link,
size-capped reads as every other file and opened as a private copy in a
temporary folder, so SQLite never touches the task folder. The lookup reads
the MEMORY SQLite store's ``memory_records(key, content)`` table.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from typing import Any, Final

from .checkpoints import checkpoint_key
from .untrusted_files import UntrustedFileError, parse_json, read_file

__all__ = ["MEMORY_FILE", "ArchiveError", "archived_brief"]

MEMORY_FILE: Final = "memory.sqlite"
MAX_MEMORY_BYTES: Final = 256 << 20


class ArchiveError(Exception):
    """The archived brief cannot be read; the message says why, in words."""


def _copy(root: int, name: str, target: str, *, optional: bool = False) -> None:
    try:
        data = read_file(root, name, MAX_MEMORY_BYTES)
    except UntrustedFileError as error:
        if optional and error.missing:
            return
        raise ArchiveError(f"{name} {error.reason}") from None
    with open(target, "wb") as handle:
        handle.write(data)


def archived_brief(root: int, request_id: str, task_id: str | None) -> dict[str, Any] | None:
    """The brief archived for ``request_id`` by task ``task_id`` in the folder's ``memory.sqlite``; ``None`` if none.

    ``ArchiveError`` when the store cannot be read (a link, not SQLite, a malformed checkpoint).
    """
    with tempfile.TemporaryDirectory(prefix="ditto-verify-") as scratch:
        path = os.path.join(scratch, MEMORY_FILE)
        _copy(root, MEMORY_FILE, path)
        _copy(root, MEMORY_FILE + "-wal", path + "-wal", optional=True)
        try:
            with contextlib.closing(sqlite3.connect(path)) as connection:
                row = connection.execute("SELECT content FROM memory_records WHERE key = ?",
                                         (checkpoint_key(request_id, "brief", task_id),)).fetchone()
        except sqlite3.Error:
            raise ArchiveError(f"{MEMORY_FILE} is not a readable MEMORY store") from None
    if row is None:
        return None
    content = row[0]
    try:
        checkpoint = parse_json(content.encode("utf-8") if isinstance(content, str) else bytes(content))
    except (ValueError, TypeError):
        raise ArchiveError(f"the archived brief in {MEMORY_FILE} is not JSON") from None
    data = checkpoint.get("data") if isinstance(checkpoint, dict) else None
    if (not isinstance(checkpoint, dict) or checkpoint.get("kind") != "research-checkpoint"
            or checkpoint.get("stage") != "brief" or checkpoint.get("requestId") != request_id
            or checkpoint.get("taskId") != task_id or not isinstance(data, dict)):
        raise ArchiveError(f"the archived brief in {MEMORY_FILE} is not a brief checkpoint of this request")
    return data
