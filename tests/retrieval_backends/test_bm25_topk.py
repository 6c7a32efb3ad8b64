"""Issue 18: the BM25 engine's top-k cut is exact, ties included, whatever the mode and filter."""

from __future__ import annotations

import itertools

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
