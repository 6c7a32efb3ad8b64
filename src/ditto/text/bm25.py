"""Okapi BM25 over a handful of texts, as pure functions.

For scoring that needs no index: MEMORY re-scores the rows FTS5 preselected,
and the built-in INFER model ranks the passages and vocabulary entries it was
given. Large corpora go to RETRIEVAL's engine (bm25s), which uses the same
analysis (:mod:`ditto.text.analysis`).

The idf is Lucene's non-negative form ``ln(1 + (N - df + 0.5) / (df + 0.5))``:
the classic form is negative for a term in more than half the documents, which
in a small corpus (ten passages, a dozen records) makes every score ≈ 0 and the
order arbitrary.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["BM25_B", "BM25_K1", "bm25_score", "coordination_weights", "score_documents"]

BM25_K1 = 1.2
BM25_B = 0.75


def bm25_score(term_frequencies: Mapping[str, int], document_length: int, document_frequency: Mapping[str, int],
               total_documents: int, average_length: float, *, k1: float = BM25_K1, b: float = BM25_B) -> float:
    """BM25 of one document.

    ``term_frequencies`` maps each distinct query term to its count in the
    document; ``document_frequency``, ``total_documents`` and ``average_length``
    describe the whole collection.
    """
    relative_length = document_length / average_length if average_length > 0 else 1.0
    norm = k1 * (1 - b + b * relative_length)
    score = 0.0
    for term, tf in term_frequencies.items():
        if tf <= 0:
            continue
        idf = _idf(document_frequency.get(term, 0), total_documents)
        score += idf * tf * (k1 + 1) / (tf + norm)
    return score


def score_documents(query_terms: Sequence[str], documents: Sequence[Sequence[str]], *, k1: float = BM25_K1,
                    b: float = BM25_B, coordinate: bool = False) -> list[float]:
    """The BM25 score of each analysed document for the analysed query, in document order.

    Repeated query terms count once (a question that says "sleep" twice is not
    twice as much about sleep). O(total terms): fine for tens or hundreds of
    documents, not for a corpus.

    ``coordinate`` multiplies each score by the idf-weighted share of the query's
    distinct terms the document holds (Lucene's old *coordination factor*, with
    idf weights): a short passage that repeats one query word ("mkdir(2)") no
    longer outranks the passage that holds every word ("mkdir … -p, --parents").
    """
    wanted = set(query_terms)
    if not wanted or not documents:
        return [0.0] * len(documents)
    counts = [Counter(term for term in document if term in wanted) for document in documents]
    frequency: Counter[str] = Counter()
    for count in counts:
        frequency.update(count.keys())
    average = sum(len(document) for document in documents) / len(documents)
    scores = [bm25_score(count, len(document), frequency, len(documents), average, k1=k1, b=b)
              for count, document in zip(counts, documents, strict=True)]
    if not coordinate:
        return scores
    shares = coordination_weights(wanted, frequency, len(documents))
    return [score * sum(shares[term] for term in count) if score > 0 else score
            for score, count in zip(scores, counts, strict=True)]


def coordination_weights(query_terms: Iterable[str], document_frequency: Mapping[str, int],
                         total_documents: int) -> dict[str, float]:
    """Each distinct query term's share of the query's idf (the shares sum to 1): the coordination factor
    of a document is the sum of the shares of the terms it holds.

    One definition for every BM25 here: :func:`score_documents` applies it to a handful of texts, the
    index engine (:class:`ditto.retrieval.engines.BM25Index`, ``coordinate=True``) to a corpus, so a
    folder searched in memory and the same folder searched through an index rank alike. A term no
    document holds has the largest idf: it lowers every document's factor alike (no order changes).
    """
    weights = {term: _idf(document_frequency.get(term, 0), total_documents) for term in query_terms}
    total = sum(weights.values())
    return {term: weight / total for term, weight in weights.items()} if total > 0 else dict.fromkeys(weights, 0.0)


def _idf(df: int, total_documents: int) -> float:
    df = min(df, total_documents)
    return math.log(1 + (total_documents - df + 0.5) / (df + 0.5))
