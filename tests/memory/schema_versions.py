"""Rewrite a record of a SQLite memory file the way an older schema version indexed it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def as_older_version(path: Path, record_id: str, body: str, *, total_tokens: int, version: int) -> None:
    """Index ``record_id`` as one term ``body`` (length 1), set the store's token total and ``user_version``.

    That is what versions 1 and 2 wrote for a CJK or Hangul run, so an upgrade test starts
    from a file as the older code left it.
    """
    with sqlite3.connect(path) as raw:
        seq = raw.execute("SELECT seq FROM memory_records WHERE id = ?", (record_id,)).fetchone()[0]
        raw.execute("UPDATE memory_fts SET body = ? WHERE rowid = ?", (body, seq))
        raw.execute("UPDATE memory_records SET length = 1 WHERE seq = ?", (seq,))
        raw.execute("UPDATE memory_stats SET tokens = ?", (total_tokens,))
        raw.execute(f"PRAGMA user_version = {int(version)}")
    raw.close()
