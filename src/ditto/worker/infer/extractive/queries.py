"""Search queries for a question (``choose_queries``): with a vocabulary, its best-matching entries; without,
the question's content words, then its Latin-script names or its subject."""

from __future__ import annotations

import itertools
import re
from typing import Final

from ....text import CJK_CLASS, CJK_STOPWORDS, score_documents
from ..tasks import (
    MAX_QUERY_CHARS,
    QueryTask,
)
from .excerpts import FOLLOW_UP_SHARE
from .terms import _CJK_SPLIT, _STOPWORDS, CJK_QUESTION_WORDS, _distinct, analyze

__all__ = ["SUBJECT_QUERY_WORDS", "choose_queries", "keyword_query", "latin_words"]
#: Content words a question needs for a second keyword query of its first half's words (shorter
#: questions are one subject already; chosen on SciFact train and the real-documents train questions).
SUBJECT_QUERY_WORDS: Final = 4
#: A query's words as written: a command-line option keeps its dashes (``-p``, ``--parents``), so a search
#: that indexes options can tell ``mkdir -p`` from the rest of the page.
_SURFACE = re.compile(r"(?<![\w-])--?[A-Za-z0-9][A-Za-z0-9-]*|"
                      f"[{CJK_CLASS}]+|[^\\W_{CJK_CLASS}]+(?:['’][^\\W_{CJK_CLASS}]+)*")


def _without_cjk_question_words(text: str) -> str:
    if _CJK_SPLIT.search(text) is None:
        return text
    for word in CJK_QUESTION_WORDS:
        text = text.replace(word, " ")
    return text


def keyword_query(question: str) -> str:
    """The question's content words as they were written, stop and question words dropped, once each.

    In CJK text the question words (:data:`CJK_QUESTION_WORDS`: 什么, 哪个, 多久 …) are dropped too:
    a retriever that matches characters one by one would otherwise rank passages by "什" and "么".
    """
    words: dict[str, str] = {}
    for word in _SURFACE.findall(_without_cjk_question_words(question)):
        if word[0] in CJK_STOPWORDS and len(word) == 1:
            continue
        key = word.lower()
        if key in _STOPWORDS or key in words or _contracted_stopword(key):
            continue
        words[key] = word
    return " ".join(words.values()) or question.strip()


def _contracted_stopword(word: str) -> bool:
    """A contraction of stop words: "what's", "it's", "don't", "isn't" (a retriever would search "what",
    "don", "isn"); a possessive of a content word ("user's") is kept."""
    base, apostrophe, _ = word.replace("’", "'").partition("'")
    return bool(apostrophe) and (base in _STOPWORDS or word.endswith(("n't", "n’t")))


def latin_words(query: str) -> str:
    """The words of a mixed-script query that are not CJK, in order (``"mkdir -p"`` of
    ``"mkdir -p 选项 作用"``); empty when the query has no CJK or nothing else."""
    if _CJK_SPLIT.search(query) is None:
        return ""
    return " ".join(word for word in query.split() if _CJK_SPLIT.search(word) is None)


def choose_queries(task: QueryTask) -> list[str]:
    """``minQueries``–``maxQueries`` distinct queries: vocabulary entries ranked by BM25, or keywords."""
    if task.vocabulary:
        entries = _distinct(task.vocabulary)
        # An entry is a label, not a document: its length says nothing (b=0), or "backup interval" would beat
        # "backup retention period" for "how long do we keep the backups?" on "backup" alone; equal scores
        # keep the caller's vocabulary order.
        scores = score_documents(analyze(task.question), [analyze(entry) for entry in entries], b=0.0)
        order = sorted(range(len(entries)), key=lambda i: (-scores[i], i))
        chosen = order[:task.min_queries]
        best = scores[order[0]] if order else 0.0
        for index in order[task.min_queries:task.max_queries]:
            if scores[index] <= 0 or scores[index] < FOLLOW_UP_SHARE * best:
                break
            chosen.append(index)
        return [entries[index] for index in chosen]
    first = _bounded_query(keyword_query(task.question))
    queries = [first]
    words = first.split(" ")
    latin = latin_words(first)
    if task.max_queries > 1 and latin and latin != first:
        # A Chinese question names commands, options and products in Latin script ("mkdir 的 -p"):
        # those words alone find the passage that a character-by-character match of the rest drowns.
        queries.append(latin)
    elif task.max_queries > 1 and len(words) >= SUBJECT_QUERY_WORDS:
        # A long question (a claim) is ranked by its rarest words wherever they occur; the words of its
        # first half, usually its subject, alone find the documents about that subject which the matches
        # of the rest outrank (SciFact train: a relevant abstract among those shown 0.69 -> 0.74), and
        # when a third query is allowed, the second half (what is said of the subject) finds those
        # that the first half's matches outrank in turn (hybrid, the first 300 train claims: 0.76 -> 0.80).
        half = (len(words) + 1) // 2
        queries.append(" ".join(words[:half]))
        rest = " ".join(words[half:])
        if task.max_queries > 2 and rest not in queries:
            queries.append(rest)
    # More queries than one are asked for: adjacent pairs of content words, in question order.
    for left, right in itertools.pairwise(words):
        if len(queries) >= task.min_queries:
            break
        pair = f"{left} {right}"
        if pair not in queries:
            queries.append(pair)
    return queries


def _bounded_query(query: str) -> str:
    """``query`` within :data:`MAX_QUERY_CHARS`: cut after its last whole word that fits (a long question's
    keywords), or at the limit when one word is longer. Its halves, cut from it, fit too."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS + 1].rsplit(" ", 1)[0] if " " in query[:MAX_QUERY_CHARS + 1] else ""
    return (cut or query[:MAX_QUERY_CHARS]).rstrip()
