"""Tampering helpers for the verify tests: copy a finished task and forge parts of it the way an attacker would.

:func:`rewrite_brief` writes an edited ``brief.json`` in ditto's own format,
re-renders ``brief.md`` and, with ``archive=True``, also rewrites the brief
checkpoint in ``memory.sqlite``, so that only the edit itself is wrong and
each check of ``verify`` is tested on its own.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ditto.workflows.research.brief import brief_markdown
from ditto.workflows.research.types import Brief

Edit = Callable[[dict[str, Any]], None]


def copy_task(good: Path, name: str) -> Path:
    copy = good.parent / name
    shutil.copytree(good, copy, symlinks=True)
    return copy


def read_brief(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    return data


def rearchive(directory: Path, data: dict[str, Any], request_id: str | None = None) -> None:
    """Replace the archived brief checkpoint in ``memory.sqlite`` by ``data`` (moved to ``request_id`` if given)."""
    with contextlib.closing(sqlite3.connect(directory / "memory.sqlite")) as connection:
        rows = connection.execute("SELECT key, content FROM memory_records WHERE key LIKE 'retrieval:%:brief%'"
                                  ).fetchall()
        assert rows, "the task archived no brief"
        key, content = rows[0]
        parts = key.split(":")
        parts[1] = request_id or parts[1]
        checkpoint = json.loads(content)
        checkpoint.update(requestId=parts[1], data=data)
        connection.execute("UPDATE memory_records SET key = ?, content = ? WHERE key = ?",
                           (":".join(parts), json.dumps(checkpoint, ensure_ascii=False), key))
        connection.commit()


def write_brief(directory: Path, data: dict[str, Any], *, archive: bool = True) -> None:
    """``data`` as ``brief.json`` (ditto's format), its ``brief.md`` and (``archive``) its memory checkpoint."""
    (directory / "artifacts" / "brief.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                                                         encoding="utf-8")
    try:
        markdown = brief_markdown(Brief.model_validate(data))
    except (ValidationError, KeyError, TypeError):
        return
    (directory / "artifacts" / "brief.md").write_text(markdown, encoding="utf-8")
    if archive:
        rearchive(directory, data)


def rewrite_brief(good: Path, name: str, change: Edit, *, archive: bool = True) -> Path:
    """A copy of ``good`` whose brief is edited by ``change`` and rewritten consistently (see module doc)."""
    copy = copy_task(good, name)
    data = read_brief(copy)
    change(data)
    write_brief(copy, data, archive=archive)
    return copy
