"""Text helpers for the stores' keyword search: what is indexed, matched and how it scores.

A term is :mod:`ditto.text`'s (the boundaries of :func:`~ditto.text.word_terms`): each CJK
character on its own (``CJK_CLASS``), otherwise a run of letters and digits.
FTS5's ``unicode61`` tokenizer splits on everything that is not a letter or a
number, so the indexed text puts spaces around every CJK character and FTS5
then sees exactly those terms; the query is split the same way. Scoring is
:func:`ditto.text.bm25_score` over the term counts FTS5 reports.

The PostgreSQL store needs the same terms without FTS5 as its index:
:func:`search_terms` asks FTS5 itself (a private in-memory table, through
``fts5vocab``) for the terms of each text, so both stores index exactly the
same folded, stemmed terms and neither can drift from the other (a Python
re-implementation of ``unicode61`` folding and FTS5's byte-wise Porter stemmer
differed on Greek accents, ``ß``, ``œ`` and ligatures).

Why the stores score in Python rather than returning FTS5's ``bm25()``:
FTS5 floors the idf of any term that occurs in half or more of the rows at
1e-6, so in a small store (a task's dozen knowledge records) every score is
≈0 and the order is arbitrary. The Lucene form of BM25 in ``ditto.text``,
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, stays positive, so a record
that matches more, and rarer, query terms always ranks higher.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...text import CJK_CLASS
from ...text.bm25 import BM25_B, BM25_K1, bm25_score

__all__ = [
    "BM25_B",
    "BM25_K1",
    "MAX_QUERY_TOKENS",
    "bm25_score",
    "fold",
    "index_text",
    "match_expression",
    "query_tokens",
    "search_terms",
    "token_count",
]

#: More distinct terms than this add little recall and make a search slow.
MAX_QUERY_TOKENS = 64

#: The tokenizer of the SQLite store's FTS5 table (``sqlite_store``): the one definition of a term.
FTS5_TOKENIZE = "porter unicode61 remove_diacritics 2"

# Term boundaries once every CJK character stands alone: ``ditto.text.word_terms``' terms, case kept
# (FTS5 folds case itself; the original spelling is what the MATCH expression quotes).
_TOKEN = re.compile(r"[^\W_]+")
_UNIGRAM = re.compile(f"[{CJK_CLASS}]")


def _string_leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _string_leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _string_leaves(item)


def index_text(content: Any) -> str:
    """The searchable text of a record (or query): a string as is, otherwise its string leaves.

    Object keys, numbers and booleans are structure, not prose, so they are not
    indexed (``{"kind": "knowledge", "text": "..."}`` matches on its values only).
    CJK characters are spaced apart: written without spaces, a whole Chinese
    sentence would otherwise be one FTS5 term that no question matches; one
    term per character is what Lucene's StandardTokenizer does.
    """
    return _UNIGRAM.sub(r" \g<0> ", "\n".join(_string_leaves(content)))


def fold(token: str) -> str:
    """Lower case without diacritics, as FTS5's ``unicode61 remove_diacritics 2`` folds a token."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).lower()


def token_count(text: str) -> int:
    """How many terms FTS5's unicode61 tokenizer makes of an :func:`index_text` (the BM25 document length).

    Counted on the text as stored (not ``word_terms``' lower-cased copy, whose length
    can differ for a few letters such as ``İ``), so the length is FTS5's own.
    """
    return sum(1 for _ in _TOKEN.finditer(text))


def query_tokens(query: Any) -> tuple[tuple[str, str], ...]:
    """Distinct ``(original, folded)`` query tokens, first occurrence first, at most 64."""
    seen: dict[str, str] = {}
    for token in _TOKEN.findall(index_text(query)):
        folded = fold(token)
        if folded and folded not in seen:
            seen[folded] = token
            if len(seen) == MAX_QUERY_TOKENS:
                break
    return tuple((original, folded) for folded, original in seen.items())


def match_expression(tokens: Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the tokens as quoted strings.

    Quoting makes every token a literal (no column filters, NEAR, ``*`` or
    operators can be smuggled in); OR gives the keyword recall the research
    workflow needs, and the BM25 score orders the results.
    """
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)


_local = threading.local()


def _vocabulary() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table and its ``instance`` vocabulary (one term per token)."""
    connection: sqlite3.Connection | None = getattr(_local, "connection", None)
    if connection is None:
        connection = sqlite3.connect(":memory:", isolation_level=None)
        connection.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{FTS5_TOKENIZE}')")
        connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _local.connection = connection
    return connection


def search_terms(texts: Sequence[str]) -> list[list[str]]:
    """The FTS5 terms of each :func:`index_text`, in text order (folded and stemmed: ``Connections`` →
    ``connect``); ``len(search_terms([t])[0]) == token_count(t)``.

    Blocking (SQLite in this thread); nothing is kept between calls.
    """
    if not texts:
        return []
    connection = _vocabulary()
    terms: list[list[str]] = [[] for _ in texts]
    connection.execute("BEGIN")
    try:
        connection.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)",
                               ((row, text) for row, text in enumerate(texts)))
        for row, term in connection.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            terms[row].append(term)
    finally:
        connection.execute("ROLLBACK")
    return terms
