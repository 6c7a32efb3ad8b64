"""The passages of one long text worth showing the model: a web page's, a knowledge record's.

A page or a record is found as a whole, but the model reads passages: the
text is cut by the structure-aware cutter (:mod:`..passages`) and the
passages that best match the task's queries (BM25 over that text's own
passages) are shown, in reading order, each under the query that matches it
best. A text of one passage is shown whole.

Example::

    for span, query in ranked_spans(page_text, ["wal checkpoint"], limit=2):
        page_text[span.start:span.end]
"""

from __future__ import annotations

from collections.abc import Sequence

from ....text import TextAnalyzer, score_documents
from ....text.passages import Layout, PassageSpan, cut_passages, heading_over

__all__ = ["ranked_spans"]

_ANALYZER = TextAnalyzer(cjk="unigram")


def ranked_spans(text: str, queries: Sequence[str], limit: int, *, fallback: bool = False,
                 coordinate: bool = False, layout: Layout = "wrapped") -> list[tuple[PassageSpan, str]]:
    """At most ``limit`` passages of ``text`` with their best query, in reading order.

    Only passages sharing a term with some query are shown; with ``fallback``, a
    text none of whose passages does (a record the search found by a field the
    model does not see) shows its first passage rather than nothing. ``coordinate``
    weighs each score by the share of the query's terms the passage holds (see
    :func:`~ditto.text.score_documents`): on a web page, a one-word table cell ("fail")
    or a heading otherwise outranks the paragraph that answers. ``layout`` is how the text's
    lines make paragraphs (``"lines"`` for a web page's extracted text, see :func:`~ditto.text.passages.cut_passages`).
    """
    spans = cut_passages(text, layout=layout)
    if not spans or limit <= 0 or not queries:
        return []
    # Scored with its heading path, as the documents index does: a section's paragraphs need not repeat its title.
    terms = [_ANALYZER.analyze(heading_over(text[span.start:span.end], span.heading)) for span in spans]
    wanted = [term for query in queries for term in _ANALYZER.analyze(query)]
    scores = score_documents(wanted, terms, coordinate=coordinate)
    ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
    chosen = sorted(ranked[:limit]) or ([0] if fallback else [])
    per_query = [_ANALYZER.analyze(query) for query in queries]
    result = []
    for index in chosen:
        best = max(range(len(queries)), key=lambda q: (score_documents(per_query[q], [terms[index]])[0], -q))
        result.append((spans[index], queries[best]))
    return result
