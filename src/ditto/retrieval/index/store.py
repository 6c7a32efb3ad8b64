"""``index.sqlite``: the files, the passages and (with ``--embed``) a ``sqlite-vec`` vector table.

Tables::

    files(path PRIMARY KEY, kind, sha256, size, mtime_ns, raw)
        kind 'text': a Markdown/plain-text file, ``raw`` its exact bytes (research snapshots come from here);
        kind 'records': a JSONL or BEIR corpus file (``raw`` NULL; its records are the passages).
    extracted(path PRIMARY KEY, text)
        an HTML file's main text, which its passages were cut from and point into (``raw`` holds the HTML).
    skipped(path PRIMARY KEY, size, mtime_ns, reason)
        a file read and left out for a reason counted in one note (an HTML list of links): while its size and
        time stay, later runs count it again without reading it.
    passages(rowid, id UNIQUE, path, ordinal, start, end, line_start, line_end, sha256, heading, text, metadata)
        ``sha256`` is the passage text's hash; ``metadata`` JSON (what filters see).
    vectors USING vec0(embedding float[N] distance_metric=cosine)
        rowid = the passage's rowid; only when the index has an embedding model.
    sentences(passage, sha256, embedding)
        each distinct sentence of a passage (``sentence_texts``) by the SHA-256 of its text, with its vector
        (float32 bytes): the unit the research workflow reads a passage by, embedded once here rather than
        in every task. Only with an embedding model.

Python's own ``sqlite3`` loads ``sqlite-vec`` where the interpreter allows extensions; a
build without that (some pyenv and distribution builds) uses ``sqlean`` (``sqlean-py``,
the same DB-API with extensions enabled). Without either, BM25 works and vector
operations fail with ``INDEX_UNAVAILABLE``.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any, Final

from ...text.analysis import has_cjk
from ...text.sentences import split_sentences
from .errors import INDEX_UNAVAILABLE, SearchIndexError

__all__ = ["DB_FILE", "SCHEMA", "connect", "create_vector_table", "has_table", "sentence_key", "sentence_texts"]

DB_FILE: Final = "index.sqlite"

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('text', 'records')),
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    raw BLOB
);
CREATE TABLE IF NOT EXISTS passages (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    heading TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_path ON passages(path);
CREATE TABLE IF NOT EXISTS extracted (
    path TEXT PRIMARY KEY,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS skipped (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    reason TEXT NOT NULL
);
"""


def _vector_driver() -> Any:
    """A DB-API module whose connections can load extensions, or ``None``."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean
    except ImportError:
        return None
    return sqlean


def connect(path: Path, *, vectors: bool, read_only: bool = False) -> Any:
    """Open ``path`` (``vectors=True``: with sqlite-vec loaded, or ``INDEX_UNAVAILABLE``)."""
    driver = _vector_driver() if vectors else sqlite3
    if driver is None:
        raise SearchIndexError(INDEX_UNAVAILABLE, "this Python's sqlite3 cannot load extensions; install "
                                                  "ditto-agents[embed] (it brings sqlean-py) for vector search")
    target = f"{path.resolve().as_uri()}?mode=ro" if read_only else str(path)
    connection = driver.connect(target, uri=read_only, check_same_thread=False, isolation_level=None)
    if vectors:
        try:
            import sqlite_vec
        except ImportError:
            connection.close()
            raise SearchIndexError(INDEX_UNAVAILABLE, "vector search needs sqlite-vec: install "
                                                      "ditto-agents[embed]") from None
        connection.enable_load_extension(True)
        try:
            sqlite_vec.load(connection)
        finally:
            connection.enable_load_extension(False)
    return connection


def has_table(connection: Any, name: str) -> bool:
    """Whether the database holds the table ``name`` (``vectors``, ``sentences``: only with a model)."""
    return connection.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def create_vector_table(connection: Any, dimensions: int) -> None:
    """The passages' ``vec0`` table and the plain table of their sentences' vectors."""
    connection.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS vectors USING vec0("
                       f"embedding float[{int(dimensions)}] distance_metric=cosine)")
    connection.execute("CREATE TABLE IF NOT EXISTS sentences (passage INTEGER NOT NULL, sha256 BLOB NOT NULL, "
                       "embedding BLOB NOT NULL)")
    connection.execute("CREATE INDEX IF NOT EXISTS sentences_sha256 ON sentences(sha256)")
    connection.execute("CREATE INDEX IF NOT EXISTS sentences_passage ON sentences(passage)")


def sentence_texts(text: str) -> list[str]:
    """The distinct sentences of a passage's text that research may embed, in order: every sentence
    (``text.sentences.split_sentences``, as the built-in model cuts them), none of a passage in a CJK
    script (the default model reads English only, and research reads such passages by their words)."""
    if has_cjk(text):
        return []
    return list(dict.fromkeys(text[span.start:span.end] for span in split_sentences(text)))


def sentence_key(text: str) -> bytes:
    """A sentence's key in the ``sentences`` table: the SHA-256 of its UTF-8 (a lone surrogate kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
