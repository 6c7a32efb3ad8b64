"""Pure text helpers for the SQLite store's keyword search: what is indexed, matched and how it scores.

A term is :mod:`ditto.text`'s (the boundaries of :func:`~ditto.text.word_terms`): each CJK
character on its own (``CJK_CLASS``), otherwise a run of letters and digits.
FTS5's ``unicode61`` tokenizer splits on everything that is not a letter or a
number, so the indexed text puts spaces around every CJK character and FTS5
then sees exactly those terms; the query is split the same way. Scoring is
:func:`ditto.text.bm25_score` over the term counts FTS5 reports.

Why the store scores in Python rather than returning FTS5's ``bm25()``:
FTS5 floors the idf of any term that occurs in half or more of the rows at
1e-6, so in a small store (a task's dozen knowledge records) every score is
≈0 and the order is arbitrary. The Lucene form of BM25 in ``ditto.text``,
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, stays positive, so a record
that matches more, and rarer, query terms always ranks higher.
"""

from __future__ import annotations

import re
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
    "token_count",
]

#: More distinct terms than this add little recall and make a search slow.
MAX_QUERY_TOKENS = 64

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
