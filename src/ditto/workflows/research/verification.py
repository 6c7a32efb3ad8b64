"""What the application checks before anything becomes evidence (seed 004).

The model chooses queries and excerpts; these pure functions decide whether
its answer may be used: queries must honour the query contract (count,
distinct, vocabulary membership); each excerpt must name a source id the task
gave it, be at most 1000 characters and appear verbatim in that source's
passage, within the per-source and per-page limits. An answer that fails any
check is rejected as a whole with a :class:`ResearchError` code; nothing is
trimmed, re-quoted or otherwise fixed up.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...worker.infer import ExcerptTask, QueryTask
from ...worker.infer.tasks import MAX_ANSWER_SENTENCES, MAX_QUERY_CHARS
from .config import MAX_PASSAGES_PER_PAGE, MAX_QUOTE_CHARS
from .errors import ResearchError
from .records import Passage
from .types import Answer, AnswerSentence, Evidence, QueryRecord

__all__ = ["Passage", "VerifiedExcerpt", "line_range", "locate_quote", "verify_answer", "verify_excerpts",
           "verify_queries"]


@dataclass(frozen=True, slots=True)
class VerifiedExcerpt:
    passage: Passage
    quote: str
    start: int  # into the snapshot text
    end: int


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else None


def verify_queries(answer: Any, task: QueryTask, provenance: str) -> list[QueryRecord]:
    """The chosen queries, or a rejection: wrong count, repeats, or a query outside the vocabulary."""
    queries = _field(answer, "queries")
    if not isinstance(queries, (list, tuple)) or not all(isinstance(query, str) for query in queries):
        raise ResearchError("RESEARCH_MODEL_FAILED", "the model's answer holds no list of queries")
    if not task.min_queries <= len(queries) <= task.max_queries:
        raise ResearchError("RESEARCH_QUERY_COUNT",
                            f"the model chose {len(queries)} queries; the contract asks for "
                            f"{task.min_queries}-{task.max_queries}")
    if len(set(queries)) != len(queries):
        raise ResearchError("RESEARCH_QUERY_DUPLICATE", "the model chose the same query twice")
    records = []
    for query in queries:
        if not query.strip() or len(query) > MAX_QUERY_CHARS or "\x00" in query:
            raise ResearchError("RESEARCH_QUERY_COUNT", "the model chose a blank or oversized query")
        if task.vocabulary is not None and query not in task.vocabulary:
            raise ResearchError("RESEARCH_QUERY_OUT_OF_VOCABULARY",
                                "the model chose a query that is not an entry of the controlled vocabulary")
        records.append(QueryRecord(text=query, provenance=provenance,  # type: ignore[arg-type]
                                   vocabulary_entry=query if task.vocabulary is not None else None))
    return records


def verify_excerpts(answer: Any, task: ExcerptTask, passages: Sequence[Passage]) -> list[VerifiedExcerpt]:
    """The excerpts, each located verbatim in its passage, or a rejection of the whole answer."""
    excerpts = _field(answer, "excerpts")
    if not isinstance(excerpts, (list, tuple)):
        raise ResearchError("RESEARCH_MODEL_FAILED", "the model's answer holds no list of excerpts")
    if len(excerpts) > task.max_excerpts:
        raise ResearchError("RESEARCH_TOO_MANY_EXCERPTS",
                            f"the model chose {len(excerpts)} excerpts; at most {task.max_excerpts} are allowed")
    by_id = {passage.id: passage for passage in passages}
    per_source: Counter[str] = Counter()
    per_page: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    verified = []
    for excerpt in excerpts:
        source_id, quote = _field(excerpt, "sourceId"), _field(excerpt, "quote")
        if not isinstance(source_id, str) or source_id not in by_id:
            raise ResearchError("RESEARCH_UNKNOWN_SOURCE", "the model cited a source id the task did not give it")
        if not isinstance(quote, str) or not quote.strip():
            raise ResearchError("RESEARCH_QUOTE_NOT_FOUND", "the model gave an empty quote")
        limit = min(task.max_quote_chars, MAX_QUOTE_CHARS)
        _check_length(quote, limit)
        passage = by_id[source_id]
        offset, quote = locate_quote(passage.text, quote)
        if offset < 0:
            raise ResearchError("RESEARCH_QUOTE_NOT_FOUND", f"a quote is not verbatim in source {source_id}")
        _check_length(quote, limit)  # located with the source's own whitespace, it may have grown
        if (source_id, quote) in seen:
            raise ResearchError("RESEARCH_TOO_MANY_EXCERPTS", "the model chose the same excerpt twice")
        seen.add((source_id, quote))
        per_source[source_id] += 1
        if per_source[source_id] > task.max_per_source:
            raise ResearchError("RESEARCH_TOO_MANY_EXCERPTS",
                                f"more than {task.max_per_source} excerpts from source {source_id}")
        if passage.page is not None:
            per_page[passage.page] += 1
            if per_page[passage.page] > MAX_PASSAGES_PER_PAGE:
                raise ResearchError("RESEARCH_TOO_MANY_EXCERPTS",
                                    f"more than {MAX_PASSAGES_PER_PAGE} excerpts from one web page")
        start = passage.start + offset
        verified.append(VerifiedExcerpt(passage, quote, start, start + len(quote)))
    return verified


def _check_length(quote: str, limit: int) -> None:
    if len(quote) > limit:
        raise ResearchError("RESEARCH_QUOTE_TOO_LONG",
                            f"a quote has {len(quote)} characters; at most {MAX_QUOTE_CHARS} are allowed")


def locate_quote(text: str, quote: str) -> tuple[int, str]:
    """Where ``quote`` is in ``text`` and the text found there: ``(-1, quote)`` when it is not.

    An exact match wins. Otherwise a quote that differs from the text *only in
    whitespace* (runs of spaces, tabs and line breaks collapsed, changed or
    trimmed at the ends — what chat models do to hard-wrapped text) is located
    at the first span of ``text`` whose words and order are the same, and the
    text's own characters are returned, so the evidence stays verbatim. Nothing
    else is normalised: a changed letter, quote mark, dash or case is not found.
    """
    offset = text.find(quote)
    if offset >= 0:
        return offset, quote
    words = quote.split()
    if not words:
        return -1, quote
    pattern = r"\s+".join(re.escape(word) for word in words)
    found = re.search(pattern, text)
    if found is None:
        return -1, quote
    return found.start(), found.group(0)


def line_range(text: str, start: int, end: int) -> tuple[int, int]:
    """1-based first and last line of ``text[start:end]`` (lines end at ``\\n``)."""
    first = text.count("\n", 0, start) + 1
    last = first + text.count("\n", start, max(start, end - 1))
    return first, last


def verify_answer(answer: Any, evidence: Sequence[Evidence], kind: str) -> Answer | None:
    """The brief's answer, or a rejection: each sentence non-empty, citing only known evidence ids, at least one.

    ``kind`` ``extractive`` (the built-in model) also requires each sentence to be
    verbatim in one of the quotes it cites; ``model`` answers are the model's own
    wording, checked only for their citations. An empty list is no answer.
    """
    sentences = _field(answer, "sentences")
    if not isinstance(sentences, (list, tuple)):
        raise ResearchError("RESEARCH_MODEL_FAILED", "the model's answer holds no list of sentences")
    if len(sentences) > MAX_ANSWER_SENTENCES:
        raise ResearchError("RESEARCH_ANSWER_UNCITED", f"the answer has {len(sentences)} sentences; at most "
                                                       f"{MAX_ANSWER_SENTENCES} are allowed")
    quotes = {item.id: item.quote for item in evidence}
    checked: list[AnswerSentence] = []
    for sentence in sentences:
        text, cited = _field(sentence, "text"), _field(sentence, "evidence")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_QUOTE_CHARS:
            raise ResearchError("RESEARCH_ANSWER_UNCITED", "an answer sentence is empty or over 1000 characters")
        if not isinstance(cited, (list, tuple)) or not cited or not all(isinstance(item, str) for item in cited):
            raise ResearchError("RESEARCH_ANSWER_UNCITED", "every answer sentence must cite evidence ids")
        unknown = [item for item in cited if item not in quotes]
        if unknown:
            raise ResearchError("RESEARCH_UNKNOWN_SOURCE", f"the answer cites evidence {unknown[0]!r}, which the "
                                                           "brief does not hold")
        if kind == "extractive" and not any(text in quotes[item] for item in cited):
            raise ResearchError("RESEARCH_QUOTE_NOT_FOUND", "an extractive answer sentence is not verbatim in the "
                                                            "evidence it cites")
        checked.append(AnswerSentence(text=text, evidence=tuple(dict.fromkeys(cited))))
    if not checked:
        return None
    return Answer(kind=kind, sentences=tuple(checked))  # type: ignore[arg-type]
