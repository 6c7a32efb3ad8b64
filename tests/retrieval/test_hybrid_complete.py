"""Issue 18: a complete convex hybrid scores each branch's missing candidates with that branch's real score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalError,
    create_hybrid_search_provider,
    create_text_search_provider,
    create_vector_search_provider,
)
from ditto.retrieval.index import create_index_search_provider, open_index, update_index
from ditto.retrieval.providers.hybrid import (
    HybridBranch,
    HybridTuning,
    ScoringSearchProvider,
    convex_fuse,
    create_text_vector_hybrid,
)

from .index_support import WordHashEmbedder, write_docs

_WORDS = ["memory", "agent", "migration", "store", "vector", "backup", "restore", "alert", "pasta", "rust"]
_DOCS = [{"id": f"d{n}", "content": " ".join(_WORDS[(n * 7 + k) % len(_WORDS)] for k in range(1 + n % 4)),
          "metadata": {"n": n}} for n in range(24)]


def _request(query: str, limit: int = 5, **extra: Any) -> dict[str, Any]:
    return {"query": {"content": query}, "target": {"name": "kb"}, "limit": limit, **extra}


async def _full(provider: Any, query: str, **extra: Any) -> dict[str, float]:
    output = await provider.search(_request(query, 1000, **extra))
    return {c.id: c.score for c in output.candidates}


async def test_text_provider_scores_ids_as_its_search_does() -> None:
    """Issue 18: ``score_ids`` gives the BM25 score ``search`` gives, ``None`` for a non-hit, an unknown id and a
    document the filter leaves out; the keyword strategy's all-terms rule applies too."""
    provider = create_text_search_provider(_DOCS)
    assert isinstance(provider, ScoringSearchProvider)
    full = await _full(provider, "memory agent")
    ids = [d["id"] for d in _DOCS] + ["nope"]
    scores = await provider.score_ids(_request("memory agent"), ids)
    assert {i: s for i, s in zip(ids, scores, strict=True) if s is not None} == pytest.approx(full)
    assert scores[-1] is None
    filtered = await provider.score_ids(_request("memory agent", filter={"n": {"lt": 5}}), ids)
    assert {i for i, s in zip(ids, filtered, strict=True) if s is not None} == {i for i in full if int(i[1:]) < 5}
    keyword = await provider.score_ids(_request("memory agent", strategy="keyword"), ids)
    assert {i for i, s in zip(ids, keyword, strict=True) if s is not None} == set(
        await _full(provider, "memory agent", strategy="keyword"))


async def test_vector_provider_scores_ids_as_its_search_does() -> None:
    """Issue 18: the vector provider over the in-memory index scores ids like ``search`` (cosine), the filter
    applied; an index that cannot score by id answers ``None`` for every id (nothing is completed)."""
    embedder = WordHashEmbedder()
    index = InMemoryVectorIndex(metric="cosine", embedding=embedder)
    await index.add_contents(_DOCS)
    provider = create_vector_search_provider(index, embedding=embedder)
    full = await _full(provider, "memory agent")
    ids = [d["id"] for d in _DOCS]
    assert dict(zip(ids, await provider.score_ids(_request("memory agent"), ids), strict=True)) == pytest.approx(full)
    filtered = await provider.score_ids(_request("memory agent", filter={"n": {"gte": 20}}), ids)
    assert [i for i, s in zip(ids, filtered, strict=True) if s is not None] == ids[20:]

    class SearchOnly:
        async def search_vector(self, vector: Any, *, limit: int, filter: Any, context: Any = None) -> list[Any]:
            return []

    blind = create_vector_search_provider(SearchOnly(), embedding=embedder)
    assert await blind.score_ids(_request("memory"), ["d1", "d2"]) == [None, None]


@settings(max_examples=25, deadline=None)
@given(query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3), pool=st.integers(1, 6),
       alpha=st.sampled_from([0.2, 0.5, 0.8]), normalization=st.sampled_from(["minmax", "zscore"]))
async def test_complete_fusion_equals_fusing_the_completed_pools(query: list[str], pool: int, alpha: float,
                                                                 normalization: str) -> None:
    """Issue 18 (hypothesis): a complete convex hybrid ranks exactly as ``convex_fuse`` over each branch's pool
    extended by the other branch's candidates with this branch's own scores (from unlimited searches)."""
    text = " ".join(query)
    first = create_text_search_provider(_DOCS)
    second = create_text_search_provider(_DOCS, {"k1": 0.3, "b": 0.1, "stemmer": None})
    hybrid = create_hybrid_search_provider([HybridBranch(first, weight=alpha), HybridBranch(second, weight=1 - alpha)],
                                           candidate_limit=pool, fusion="convex", normalization=normalization,
                                           complete=True)
    output = await hybrid.search(_request(text, pool))
    full = [await _full(first, text), await _full(second, text)]
    pools = [list(scores.items())[:pool] for scores in full]
    union = dict.fromkeys(i for ranking in pools for i, _ in ranking)
    completed = [ranking + [(i, scores[i]) for i in union if i not in dict(ranking) and i in scores]
                 for ranking, scores in zip(pools, full, strict=True)]
    expected = convex_fuse(completed, key=lambda hit: hit[0], score=lambda hit: hit[1], weights=[alpha, 1 - alpha],
                           normalization=normalization)  # type: ignore[arg-type]
    assert [c.id for c in output.candidates] == [hit[0] for hit, _ in expected[:pool]]
    assert [c.score for c in output.candidates] == pytest.approx([score for _, score in expected[:pool]])


async def test_complete_is_convex_only_and_checks_what_branches_return() -> None:
    """Issue 18: ``complete`` needs convex fusion (``RETRIEVAL_INVALID_INPUT``); a branch whose ``score_ids``
    returns the wrong count or a non-finite score fails the search with ``RETRIEVAL_INVALID_BACKEND_OUTPUT``."""
    text = create_text_search_provider(_DOCS)
    with pytest.raises(RetrievalError) as refused:
        create_hybrid_search_provider([text, text], fusion="rrf", complete=True)
    assert refused.value.code == "RETRIEVAL_INVALID_INPUT"

    class Broken:
        def __init__(self, answer: str) -> None:
            self.answer = answer

        async def search(self, input: Any, context: Any = None) -> Any:
            return {"candidates": [{"id": "zzz", "content": "x", "score": 1.0, "source": {"target": "kb"}}],
                    "target": {"name": "kb"}}

        async def score_ids(self, input: Any, ids: Any, context: Any = None) -> list[Any]:
            return [] if self.answer == "short" else [float("nan")] * len(ids)

    for answer in ("short", "nan"):
        hybrid = create_hybrid_search_provider([text, Broken(answer)], fusion="convex", complete=True)
        with pytest.raises(RetrievalError) as failed:
            await hybrid.search(_request("memory agent"))
        assert failed.value.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"


async def test_index_hybrid_completes_both_branches(tmp_path: Path) -> None:
    """Issue 18: the index's branches score ids like their searches (BM25 and the vectors' cosine), so the
    index's hybrid strategy can complete; a tuning with ``complete`` is what ``create_text_vector_hybrid`` uses."""
    embedder = WordHashEmbedder()
    await update_index(tmp_path / "idx", [write_docs(tmp_path / "docs")], embedding=embedder)
    with open_index(tmp_path / "idx") as index:
        tuning = HybridTuning(fusion="convex", vector_weight=0.5, text_weight=0.5, candidate_limit=1,
                              normalization="zscore", complete=True)
        provider = create_index_search_provider(index, embedding=embedder, tuning=tuning)
        query = "backups restore memory"
        for strategy in ("bm25", "vector"):
            full = await _full(provider, query, strategy=strategy)
            branch = provider._hybrid.branches[0 if strategy == "vector" else 1].provider
            ids = [*full, "missing#0"]
            scores = await branch.score_ids(_request(query, strategy=strategy), ids)
            assert scores[:-1] == pytest.approx(list(full.values())) and scores[-1] is None
        output = await provider.search(_request(query, 3))
        assert output.candidates and all(c.score is not None for c in output.candidates)
    hybrid = create_text_vector_hybrid(create_text_search_provider(_DOCS), create_text_search_provider(_DOCS),
                                       tuning=tuning)
    assert hybrid.complete and hybrid.fusion == "convex"


async def test_coordinating_tuning_reaches_the_text_branch(tmp_path: Path) -> None:
    """Issue 18: a tuning with ``coordinate`` makes the hybrid's BM25 branch rank with the coordination factor,
    for the text provider (``coordinated()``, same index) and for the index's own BM25 branch."""
    text = create_text_search_provider(_DOCS)
    coordinated = text.coordinated()
    assert coordinated.index is text.index and coordinated.options.coordinate and not text.options.coordinate
    query = "memory memory pasta agent"
    engine = [(d.id, s) for d, s in text.index.search(query, limit=5, coordinate=True)]
    output = await coordinated.search(_request(query))
    assert [(c.id, c.score) for c in output.candidates] == engine
    assert engine != [(d.id, s) for d, s in text.index.search(query, limit=5)]
    tuning = HybridTuning(fusion="convex", vector_weight=0.5, text_weight=0.5, candidate_limit=5, coordinate=True)
    hybrid = create_text_vector_hybrid(text, create_text_search_provider(_DOCS), tuning=tuning)
    assert hybrid.branches[1].provider.options.coordinate  # type: ignore[attr-defined]

    embedder = WordHashEmbedder()
    await update_index(tmp_path / "idx", [write_docs(tmp_path / "docs")], embedding=embedder)
    with open_index(tmp_path / "idx") as index:
        provider = create_index_search_provider(index, embedding=embedder, tuning=tuning)
        branch = provider._hybrid.branches[1].provider
        found = await branch.search(_request("backups backups restore memory", 10))
        expected = index.bm25.search("backups backups restore memory", limit=10, coordinate=True)
        assert [(c.id, c.score) for c in found.candidates] == [(d.id, s) for d, s in expected]


async def test_index_branches_fuse_across_two_indexes_of_one_folder(tmp_path: Path) -> None:
    """Issue 18: ``IndexSearchProvider.branch`` gives one strategy as a scoring provider of its own, so two indexes
    of the same folder built with different models fuse into one three-branch hybrid keyed by passage id; the
    branches score ids as the strategies search, and a branch the index cannot run is refused."""
    docs = write_docs(tmp_path / "docs")
    first, second = WordHashEmbedder(model_id="hash-16"), WordHashEmbedder(dimensions=8, model_id="hash-8")
    await update_index(tmp_path / "a", [docs], embedding=first)
    await update_index(tmp_path / "b", [docs], embedding=second)
    await update_index(tmp_path / "plain", [docs])
    with open_index(tmp_path / "a") as a, open_index(tmp_path / "b") as b, open_index(tmp_path / "plain") as plain:
        one = create_index_search_provider(a, embedding=first, coordinate=True)
        two = create_index_search_provider(b, embedding=second)
        query = "backups restore memory"
        for provider, strategy in ((one, "bm25"), (one, "vector"), (two, "vector")):
            branch = provider.branch(strategy)
            assert isinstance(branch, ScoringSearchProvider)
            full = await _full(branch, query)
            assert full == await _full(provider, query, strategy=strategy)
            assert await branch.score_ids(_request(query), [*full, "nowhere#0"]) == [*full.values(), None]
        repeated = "backups backups restore memory"
        coordinated = await _full(one.branch("bm25"), repeated)
        assert coordinated == {d.id: s for d, s in a.bm25.search(repeated, limit=1000, coordinate=True)}
        assert coordinated != await _full(create_index_search_provider(a).branch("bm25"), repeated)
        fused = create_hybrid_search_provider(
            [HybridBranch(one.branch("bm25"), weight=0.35), HybridBranch(one.branch("vector"), weight=0.325),
             HybridBranch(two.branch("vector"), weight=0.325)],
            fusion="convex", normalization="zscore", complete=True, candidate_limit=50)
        output = await fused.search(_request(query, 50))
        ids = [c.id for c in output.candidates]
        assert len(ids) == len(set(ids)) and set(ids) <= {d.id for d in a.bm25.documents()}
        assert set(ids) >= set(await _full(one.branch("bm25"), query))  # one record per passage of both indexes
        with pytest.raises(RetrievalError) as refused:
            create_index_search_provider(plain).branch("vector")
        assert refused.value.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"
        with pytest.raises(RetrievalError):
            one.branch("hybrid")
