"""The persistent index's failures: one error class, a closed set of codes, messages safe to show.

Searching an index answers with RETRIEVAL's own codes (it is a search provider); these
codes are for opening, building and changing an index, where the caller is a person at a
shell or a program preparing a corpus, not a ``RETRIEVAL.SEARCH`` client.
"""

from __future__ import annotations

from typing import Final

from ...errors import DittoError

__all__ = [
    "INDEX_BUSY",
    "INDEX_ERROR_CODES",
    "INDEX_INVALID_INPUT",
    "INDEX_MODEL_MISMATCH",
    "INDEX_NEWER_FORMAT",
    "INDEX_NOT_FOUND",
    "INDEX_UNAVAILABLE",
    "SearchIndexError",
]

#: The directory holds no index (no ``manifest.json``), or one this version cannot read.
INDEX_NOT_FOUND: Final = "INDEX_NOT_FOUND"
#: The index was written by a newer ditto-agents (its ``format_version`` is above ours): upgrade to read it.
INDEX_NEWER_FORMAT: Final = "INDEX_NEWER_FORMAT"
#: Another process is writing this index (``ditto index`` holds its lock): the second writer is refused.
INDEX_BUSY: Final = "INDEX_BUSY"
#: The embedding model's id or dimension differs from the one the index's vectors were made with.
INDEX_MODEL_MISMATCH: Final = "INDEX_MODEL_MISMATCH"
#: A source cannot be indexed: an empty folder, a JSONL line that is not an object, a duplicate id...
INDEX_INVALID_INPUT: Final = "INDEX_INVALID_INPUT"
#: Something the operation needs is missing: vectors in the index, the ``embed`` extra, sqlite-vec.
INDEX_UNAVAILABLE: Final = "INDEX_UNAVAILABLE"

INDEX_ERROR_CODES: Final = frozenset({INDEX_NOT_FOUND, INDEX_NEWER_FORMAT, INDEX_BUSY, INDEX_MODEL_MISMATCH,
                                      INDEX_INVALID_INPUT, INDEX_UNAVAILABLE})


class SearchIndexError(DittoError):
    """Opening, building or changing a persistent index failed; ``code`` is one of :data:`INDEX_ERROR_CODES`."""

    codes = INDEX_ERROR_CODES
