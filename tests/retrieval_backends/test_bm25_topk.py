"""Issue 18: the BM25 engine's top-k cut is exact, ties included, whatever the mode and filter."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.retrieval.engines import BM25Index, parse_filter

_WORDS = st.sampled_from(["memory", "agent", "migration", "store", "vector", "pasta"])


@given(docs=st.lists(st.lists(_WORDS, min_size=1, max_size=6), min_size=8, max_size=40),
       query=st.lists(_WORDS, min_size=1, max_size=3), limit=st.integers(1, 8), copies=st.integers(1, 4),
       mode=st.sampled_from(["any", "all"]), parity=st.sampled_from([None, 0, 1]))
def test_top_k_is_the_prefix_of_the_full_ranking(docs: list[list[str]], query: list[str], limit: int,
                                                 copies: int, mode: str, parity: int | None) -> None:
    """Issue 18: ``search(limit=k)`` returns exactly the first ``k`` hits of an unlimited search, the same
    documents in the same order; equal scores (identical documents here) keep index order at the cut too,
    with or without a filter, in both match modes."""
    index = BM25Index()
    index.add([{"id": f"d{n}-{c}", "content": " ".join(words), "metadata": {"parity": (n + c) % 2}}
               for n, words in enumerate(docs) for c in range(copies)])
    conditions = parse_filter({"parity": parity}) if parity is not None else ()
    text = " ".join(query)
    everything = index.search(text, limit=10_000, mode=mode, conditions=conditions)  # type: ignore[arg-type]
    hits = index.search(text, limit=limit, mode=mode, conditions=conditions)  # type: ignore[arg-type]
    assert [(d.id, s) for d, s in hits] == [(d.id, s) for d, s in everything[:limit]]
    assert all(score > 0 for _, score in everything)
    if parity is not None:
        assert all(d.metadata is not None and d.metadata["parity"] == parity for d, _ in everything)
    order = {f"d{n}-{c}": n * copies + c for n in range(len(docs)) for c in range(copies)}
    for (first, score), (second, next_score) in itertools.pairwise(everything):
        assert score > next_score or (score == next_score and order[first.id] < order[second.id])


@given(docs=st.lists(st.lists(_WORDS, min_size=1, max_size=6), min_size=2, max_size=20),
       query=st.lists(_WORDS, min_size=1, max_size=4))
def test_coordinate_matches_the_pure_bm25_coordination(docs: list[list[str]], query: list[str]) -> None:
    """Issue 18: ``coordinate=True`` ranks as :func:`ditto.text.bm25.score_documents` with ``coordinate=True``
    (repeated query terms once, idf-weighted share of the query held): one factor apart for every document of
    a query (Lucene's ``k1 + 1`` when every query term occurs; the engine leaves out terms no document has),
    and ``score`` gives the same numbers as ``search``."""
    from ditto.text.analysis import TextAnalyzer
    from ditto.text.bm25 import score_documents

    analyzer = TextAnalyzer(stopwords=None, stemmer=None)
    index = BM25Index(analyzer=analyzer)
    index.add([{"id": f"d{n}", "content": " ".join(words)} for n, words in enumerate(docs)])
    text = " ".join(query)
    hits = index.search(text, limit=100, coordinate=True)
    expected = score_documents(analyzer.analyze(text), [analyzer.analyze(" ".join(words)) for words in docs],
                               coordinate=True)
    got = {d.id: s for d, s in hits}
    assert set(got) == {f"d{n}" for n, value in enumerate(expected) if value > 0}
    ratios = [value / got[f"d{n}"] for n, value in enumerate(expected) if value > 0]
    assert ratios == pytest.approx([ratios[0]] * len(ratios), rel=1e-6) if ratios else True
    if all(term in {w for words in docs for w in words} for term in query):
        assert ratios == pytest.approx([1.2 + 1] * len(ratios), rel=1e-6) if ratios else True
    ids = [f"d{n}" for n in range(len(docs))]
    scored = index.score(text, ids, coordinate=True)
    assert [i for i, value in zip(ids, scored, strict=True) if value is not None] == [i for i in ids if i in got]
    assert [value for value in scored if value is not None] == pytest.approx([got[i] for i in ids if i in got])
