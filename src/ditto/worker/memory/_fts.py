"""Pure text helpers for the SQLite FTS5 index: what is indexed, what is matched.

Kept apart from the store so they can be tested (and reasoned about) without
a database: the store only binds their results as parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["MAX_QUERY_TOKENS", "index_text", "match_expression", "query_text", "query_tokens"]

#: More distinct terms than this add little recall and make bm25 scoring slow.
MAX_QUERY_TOKENS = 64

# FTS5's unicode61 tokenizer splits on everything that is not a letter or a number.
_TOKEN = re.compile(r"[^\W_]+")


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
    """The searchable text of a record: a string as is, otherwise its string leaves.

    Object keys, numbers and booleans are structure, not prose, so they are not
    indexed (``{"kind": "knowledge", "text": "..."}`` matches on its values only).
    """
    return "\n".join(_string_leaves(content))


def query_text(query: Any) -> str:
    """The text a query value stands for (same rule as :func:`index_text`)."""
    return index_text(query)


def query_tokens(query: Any) -> tuple[str, ...]:
    """Distinct word tokens of a query (case-insensitive), first occurrence first, at most 64.

    Case folding itself is left to FTS5's tokenizer so query and index agree.
    """
    seen: dict[str, str] = {}
    for token in _TOKEN.findall(query_text(query)):
        lowered = token.lower()
        if lowered not in seen:
            seen[lowered] = token
            if len(seen) == MAX_QUERY_TOKENS:
                break
    return tuple(seen.values())


def match_expression(tokens: tuple[str, ...]) -> str:
    """An FTS5 MATCH expression that ORs the tokens as quoted strings.

    Quoting makes every token a literal (no column filters, NEAR, ``*`` or
    operators can be smuggled in); OR gives the keyword recall the research
    workflow needs, and FTS5's bm25 ranks records matching more, and rarer,
    terms higher.
    """
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)
