"""The eight entries in one table: what each reads, how it chooses queries, its limits and defaults.

The stages, the Python API (:func:`~ditto.workflows.research.api.build_request`)
and the CLI all read this table, so an entry's behaviour lives in one row.
Adding an entry is a row here plus its module with ``run(runtime, input,
options=None)``.

Example::

    spec = ENTRY_SPECS["expand"]
    spec.query_mode, spec.min_queries, spec.max_queries   # ('expand', 2, 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

__all__ = ["ENTRIES", "ENTRY_SPECS", "Entry", "EntrySpec", "QueryMode", "entry_name", "entry_spec"]

Entry = Literal["document-search", "knowledge-base", "web-search", "web-read", "multi-source", "rewrite", "expand",
                "source-location"]
ENTRIES: Final[tuple[Entry, ...]] = ("document-search", "knowledge-base", "web-search", "web-read", "multi-source",
                                     "rewrite", "expand", "source-location")

#: ``model``: the model writes its own queries; ``rewrite``/``expand``: it picks vocabulary entries.
QueryMode = Literal["model", "rewrite", "expand"]


@dataclass(frozen=True, slots=True)
class EntrySpec:
    """One entry: its sources when the request names none, its query mode and counts, its defaults.

    ``max_queries`` for a model query without a vocabulary is 3 for the local
    sources (the question, then its two halves: each query is one more index
    search) and 2 where a query costs a web search and a page read; with a
    vocabulary every mode takes at most 3 entries, never more than the vocabulary has.
    """

    entry: Entry
    summary: str
    sources: tuple[str, ...]
    query_mode: QueryMode = "model"
    min_queries: int = 1
    max_queries: int = 2
    needs_vocabulary: bool = False
    sample_question: str = "How long are database backups retained, and how often do backups run?"

    def query_counts(self, vocabulary_size: int | None) -> tuple[int, int]:
        """``(min, max)`` queries the model must choose for a request with that vocabulary size."""
        if self.query_mode == "rewrite":
            return 1, 1
        if vocabulary_size is None:
            return self.min_queries, self.max_queries
        return self.min_queries, max(self.min_queries, min(3, vocabulary_size))


_WEB_QUESTION: Final = "How does SQLite write-ahead logging work?"
#: Model queries an entry over local sources may make (a web query also costs a page read: 2 there).
_LOCAL_QUERIES: Final = 3

ENTRY_SPECS: Final = MappingProxyType({spec.entry: spec for spec in (
    EntrySpec("document-search", "Search Markdown and text files; quotes carry the file URI, lines and snapshot.",
              ("documents",), max_queries=_LOCAL_QUERIES),
    EntrySpec("knowledge-base", "Search internal (MEMORY) and/or external (SQLite FTS5, PostgreSQL, a RETRIEVAL "
                                "target) knowledge, kept apart.", ("knowledge",), max_queries=_LOCAL_QUERIES),
    EntrySpec("web-search", "Search the web (Wikipedia or any MediaWiki; Brave with a key) and read the first "
                            "allowed page.", ("web",), sample_question=_WEB_QUESTION),
    EntrySpec("web-read", "Read given HTML pages (SQLite's documentation by default) and extract their text.",
              ("web",), sample_question=_WEB_QUESTION),
    EntrySpec("multi-source", "Search documents, knowledge and the web, one after the other; merge the evidence.",
              ("documents", "knowledge", "web")),
    EntrySpec("rewrite", "Rewrite a colloquial question into one query of a controlled vocabulary and run it.",
              ("knowledge",), query_mode="rewrite", max_queries=1, needs_vocabulary=True,
              sample_question="how long do we keep the backups around?"),
    EntrySpec("expand", "Pick 2-3 distinct vocabulary queries, run each, dedupe, keep each hit's queries.",
              ("knowledge",), query_mode="expand", min_queries=2, max_queries=3, needs_vocabulary=True,
              sample_question="what are the rules for our database backups?"),
    EntrySpec("source-location", "Link each excerpt to file lines, a database record or web text lines, with "
                                 "the snapshot SHA-256.", ("documents", "knowledge"), max_queries=_LOCAL_QUERIES),
)})

assert tuple(ENTRY_SPECS) == ENTRIES, "the entry table and ENTRIES list the same entries in the same order"


def entry_name(name: object) -> Entry | None:
    """The entry ``name`` means, ``None`` when it means none.

    Its CLI spelling (``document-search``) or the Python name of its module
    (``document_search``): a caller who read the API should not be refused for
    spelling the entry the way Python does. Callers raise their own error for ``None``.
    """
    if not isinstance(name, str):
        return None
    wanted = name.replace("_", "-")
    return next((entry for entry in ENTRIES if entry == wanted), None)


def entry_spec(entry: str) -> EntrySpec:
    """The row of ``entry``; ``KeyError`` for an unknown one (callers check ``ENTRIES`` first)."""
    return ENTRY_SPECS[entry]  # type: ignore[index]
