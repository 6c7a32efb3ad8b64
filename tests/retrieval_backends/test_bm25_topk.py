"""Issue 18: the BM25 engine's top-k cut is exact, ties included."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from ditto.retrieval.engines import BM25Index

_WORDS = st.sampled_from(["memory", "agent", "migration", "store", "vector", "pasta"])


@given(docs=st.lists(st.lists(_WORDS, min_size=0, max_size=6), min_size=1, max_size=30),
       query=st.lists(_WORDS, min_size=1, max_size=3), limit=st.integers(1, 12), copies=st.integers(1, 4))
def test_top_k_is_the_prefix_of_the_full_ranking(docs: list[list[str]], query: list[str], limit: int,
                                                 copies: int) -> None:
    """Issue 18: ``search(limit=k)`` returns exactly the first ``k`` hits of an unlimited search, the same
    documents in the same order; equal scores (identical documents here) keep index order at the cut too."""
    index = BM25Index()
    index.add([{"id": f"d{n}-{c}", "content": " ".join(words)}
               for n, words in enumerate(docs) for c in range(copies)])
    everything = index.search(" ".join(query), limit=10_000)
    hits = index.search(" ".join(query), limit=limit)
    assert [(d.id, s) for d, s in hits] == [(d.id, s) for d, s in everything[:limit]]
    order = {f"d{n}-{c}": n * copies + c for n in range(len(docs)) for c in range(copies)}
    for (first, score), (second, next_score) in itertools.pairwise(everything):
        assert score > next_score or (score == next_score and order[first.id] < order[second.id])
