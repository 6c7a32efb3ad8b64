"""Passages that say the same thing: one text in two files is shown once (the documents source).

Documentation folders hold one text in several files: Node.js's ships each API page as HTML and as its Markdown
source (``fs.html``, ``fs.md``), SQLite's ``changes.html`` is ``changelog.html.gz`` and ``fileformat2.html`` is
``fileformat.html``, pydoc's ``json`` page repeats a paragraph under ``dump`` and ``dumps``. Shown twice, one text
takes two of a query's three documents and the brief quotes it twice.

Example::

    says_the_same(passage_words(html_passage), passage_words(markdown_passage))   # True
"""

from __future__ import annotations

import itertools
from typing import Final

from ....text.analysis import word_terms

__all__ = ["passage_words", "says_the_same"]

#: Two passages say the same when at least this share of the word pairs of the one with fewer are in the other,
#: and it has at least :data:`_SAME_MIN_PAIRS` of them (a line of a few words is in many passages).
_SAME_PAIRS_SHARE: Final = 0.8
_SAME_MIN_PAIRS: Final = 12


def passage_words(text: str) -> frozenset[str]:
    """The distinct pairs of consecutive words of a passage (CJK characters are words one by one, so a pair is
    about a Chinese word), as :func:`says_the_same` compares them."""
    terms = word_terms(text)
    return frozenset(f"{first} {second}" for first, second in itertools.pairwise(terms))


def says_the_same(words: frozenset[str], other: frozenset[str]) -> bool:
    """Whether two passages (their :func:`passage_words`) say the same: nearly all the word pairs of the shorter
    are in the longer. Pairs, not words: two passages of one topic share most of their words, and two Chinese
    passages most of their characters. Containment, not equality: the copies are cut into passages at other
    places and differ in markup."""
    smaller = min(len(words), len(other))
    return smaller >= _SAME_MIN_PAIRS and len(words & other) >= _SAME_PAIRS_SHARE * smaller
