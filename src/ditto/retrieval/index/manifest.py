"""``manifest.json``: what an index directory holds, and the one file whose replacement publishes a change.

A writer builds a complete new *generation* (a sub-directory) and then replaces the
manifest atomically (write to a temporary file, ``fsync``, ``os.replace``). A reader
follows the manifest to its generation, so it sees the old index or the new one, never
a mixture, and a writer killed at any moment leaves the previous manifest, which still
names a complete generation.

``format_version`` is the layout's version. A reader refuses an index whose version is
newer than :data:`FORMAT_VERSION` with ``INDEX_NEWER_FORMAT`` (it cannot know what
changed); older versions are read as they are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

from pydantic import Field, ValidationError

from ...contracts import DittoModel
from .errors import INDEX_NEWER_FORMAT, INDEX_NOT_FOUND, SearchIndexError

__all__ = ["FORMAT", "FORMAT_VERSION", "MANIFEST_FILE", "EmbeddingInfo", "Manifest", "read_manifest",
           "write_manifest"]

FORMAT: Final = "ditto-index"
#: The layout this version writes and the newest it reads.
FORMAT_VERSION: Final = 1
MANIFEST_FILE: Final = "manifest.json"
_MAX_MANIFEST_BYTES: Final = 1 << 20


class EmbeddingInfo(DittoModel):
    """The model the index's vectors were made with: a query must be embedded by the same one."""

    model: str = Field(min_length=1, max_length=512)
    dimensions: int = Field(ge=1, le=65_536)


class Manifest(DittoModel):
    """The published state of an index directory."""

    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    #: The sub-directory holding this state (``g-000001``...).
    generation: str = Field(pattern=r"^g-[0-9]{6,}$")
    passages: int = Field(default=0, ge=0)
    files: int = Field(default=0, ge=0)
    #: The BM25 analysis (``TextAnalyzer.config()``), fixed when the index is created.
    analyzer: dict[str, Any] = Field(default_factory=dict)
    embedding: EmbeddingInfo | None = None
    #: When the generation was published (seconds since the epoch).
    updated: float = 0.0
    #: The version of the passage cutter its files were cut with (``text.passages.PASSAGES_VERSION``; 0: not
    #: recorded, an index written before it was). A later run with another cutter cuts every file again.
    cutter: int = Field(default=0, ge=0)
    #: Whether every passage's sentences have vectors too (the ``sentences`` table: what research reads a
    #: passage by). An index written before it had none gains them on its next run with embeddings.
    sentences: bool = False


def read_manifest(directory: Path) -> Manifest:
    """The manifest of ``directory``; ``INDEX_NOT_FOUND`` or ``INDEX_NEWER_FORMAT`` when it cannot be used."""
    path = directory / MANIFEST_FILE
    try:
        with path.open("rb") as handle:
            raw = handle.read(_MAX_MANIFEST_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= _MAX_MANIFEST_BYTES else None
    except FileNotFoundError:
        raise SearchIndexError(INDEX_NOT_FOUND, f"{directory} holds no index (no {MANIFEST_FILE}); "
                                                "build one with `ditto index SOURCE --index DIR`") from None
    except NotADirectoryError:  # a corpus (corpus.jsonl) named where its index was meant
        raise SearchIndexError(INDEX_NOT_FOUND, f"{directory} is a file, not an index folder; build an index of "
                                                f"it with `ditto index {directory} --index DIR`") from None
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SearchIndexError(INDEX_NOT_FOUND, f"{directory}/{MANIFEST_FILE} is not a ditto index manifest")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:  # "2", true, 0: not ours
        raise SearchIndexError(INDEX_NOT_FOUND, f"{directory}/{MANIFEST_FILE} is damaged (its format_version is "
                                                "not a positive integer)")
    if version > FORMAT_VERSION:
        raise SearchIndexError(INDEX_NEWER_FORMAT, f"{directory} was written in index format {version}; this "
                                                   f"ditto-agents reads up to format {FORMAT_VERSION} "
                                                   "(upgrade ditto-agents)")
    try:
        return Manifest.model_validate(data)
    except ValidationError:
        raise SearchIndexError(INDEX_NOT_FOUND, f"{directory}/{MANIFEST_FILE} is damaged") from None


def write_manifest(directory: Path, manifest: Manifest) -> None:
    """Publish ``manifest`` atomically (temporary file, fsync, rename, fsync of the folder)."""
    payload = json.dumps(manifest.model_dump(mode="json"), indent=2).encode("utf-8") + b"\n"
    temporary = directory / f".{MANIFEST_FILE}.{os.getpid()}.tmp"
    with temporary.open("wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, directory / MANIFEST_FILE)
    sync_folder(directory)


def sync_folder(directory: Path) -> None:
    """``fsync`` a folder so a rename in it survives a power cut (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
