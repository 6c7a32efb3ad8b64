"""Pure text helpers for the SQLite store's keyword search: what is indexed, matched and how it scores.

Kept apart from the store so they can be tested (and reasoned about) without
a database: the store binds their results as parameters and calls
:func:`bm25_score` with the term counts FTS5 reports for each candidate.

Why the store scores in Python rather than returning FTS5's ``bm25()``:
FTS5 floors the idf of any term that occurs in half or more of the rows at
1e-6, so in a small store (a task's dozen knowledge records) every score is
≈0 and the order is arbitrary. The Lucene form of BM25 used here,
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, stays positive, so a record
that matches more, and rarer, query terms always ranks higher.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

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
BM25_K1 = 1.2
BM25_B = 0.75

# FTS5's unicode61 tokenizer splits on everything that is not a letter or a number.
_TOKEN = re.compile(r"[^\W_]+")
# Han ideographs (unified, extension A, compatibility, extensions B–G) and Hiragana.
_UNIGRAM = re.compile("[\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


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
    Han and Hiragana characters are spaced apart: written without spaces, a
    whole Chinese sentence would otherwise be one FTS5 term that no question
    matches; one term per character is what Lucene's StandardTokenizer does.
    """
    return _UNIGRAM.sub(r" \g<0> ", "\n".join(_string_leaves(content)))


def fold(token: str) -> str:
    """Lower case without diacritics, as FTS5's ``unicode61 remove_diacritics 2`` folds a token."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).lower()


def token_count(text: str) -> int:
    """How many tokens FTS5's unicode61 tokenizer makes of ``text`` (the BM25 document length)."""
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


def bm25_score(term_frequencies: Mapping[str, int], document_length: int, document_frequency: Mapping[str, int],
               total_documents: int, average_length: float) -> float:
    """Okapi BM25 of one document (Lucene's non-negative idf).

    ``term_frequencies`` maps each distinct query term to its count in the
    document (as FTS5 matched it, stemming included); ``document_frequency``,
    ``total_documents`` and ``average_length`` describe the whole store.
    """
    relative_length = document_length / average_length if average_length > 0 else 1.0
    norm = BM25_K1 * (1 - BM25_B + BM25_B * relative_length)
    score = 0.0
    for term, tf in term_frequencies.items():
        if tf <= 0:
            continue
        df = min(document_frequency.get(term, 0), total_documents)
        idf = math.log(1 + (total_documents - df + 0.5) / (df + 0.5))
        score += idf * tf * (BM25_K1 + 1) / (tf + norm)
    return score
