"""Vector search (RET-6): the in-memory numpy index and create_vector_search_provider."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalError,
    RetrievalTargetRegistry,
    compile_filter,
    create_retrieval,
    create_vector_search_provider,
)

from .test_embedding import CountingEmbedding

ROWS = [
    {"id": "a", "vector": [1.0, 0.0], "content": "A", "metadata": {"year": 2024, "lang": "en"}},
    {"id": "b", "vector": [0.6, 0.8], "content": "B", "metadata": {"year": 2023, "lang": "zh"}},
    {"id": "c", "vector": [0.0, 2.0], "content": "C", "metadata": {"year": 2025}},
]


def _ids(hits: Any) -> list[str]:
    return [h.id for h in hits]


def test_metrics_against_numpy() -> None:
    """RET-6: exact cosine, dot and L2 (negated distance) scores, best first."""
    query = [0.8, 0.6]
    for metric in ("cosine", "dot", "l2"):
        index = InMemoryVectorIndex(metric=metric)
        index.add(ROWS)
        hits = index.query(query, limit=3)
        matrix, q = np.array([r["vector"] for r in ROWS]), np.array(query)
        if metric == "cosine":
            expected = (matrix / np.linalg.norm(matrix, axis=1)[:, None]) @ (q / np.linalg.norm(q))
        elif metric == "dot":
            expected = matrix @ q
        else:
            expected = -np.linalg.norm(matrix - q, axis=1)
        assert [h.score for h in hits] == pytest.approx(sorted(expected, reverse=True))
    cosine = InMemoryVectorIndex()
    cosine.add(ROWS)
    assert _ids(cosine.query([0.8, 0.6], limit=2)) == ["b", "a"]
    dot = InMemoryVectorIndex(metric="dot")
    dot.add(ROWS)
    assert _ids(dot.query([0.0, 1.0], limit=1)) == ["c"]  # unnormalised length matters for dot


def test_add_replace_remove_and_ties() -> None:
    """RET-6: ids are replaced on re-add, removed on remove; ties keep insertion order."""
    index = InMemoryVectorIndex()
    index.add([{"id": "x", "vector": [1, 0]}, {"id": "y", "vector": [1, 0]}, {"id": "z", "vector": [0, 1]}])
    assert _ids(index.query([1, 0], limit=2)) == ["x", "y"]
    index.add([{"id": "x", "vector": [0, 1], "content": "new"}])
    assert _ids(index.query([1, 0], limit=1)) == ["y"] and len(index) == 3
    assert index.remove(["y", "missing"]) == 1
    assert _ids(index.query([1, 0], limit=3)) == ["x", "z"]
    with pytest.raises(RetrievalError) as info:
        index.add([{"id": "w", "vector": [1, 0, 0]}])
    assert info.value.code == "RETRIEVAL_INVALID_EMBEDDING"
    with pytest.raises(RetrievalError):
        index.add([{"id": "w", "vector": [0, 0]}])  # zero vector under cosine


def test_filters() -> None:
    """RET-6: equality, in/nin, ne and numeric gt/gte/lt/lte filters with the backends' semantics
    (shared parser); unsupported operators refused, never ignored."""
    index = InMemoryVectorIndex()
    index.add(ROWS)
    assert _ids(index.query([0.5, 1], limit=3, filter={"year": {"gte": 2024}})) == ["c", "a"]
    assert _ids(index.query([0.5, 1], limit=3, filter={"lang": "zh"})) == ["b"]
    assert _ids(index.query([0.5, 1], limit=3, filter={"lang": {"in": ["en", "fr"]}})) == ["a"]
    assert _ids(index.query([0.5, 1], limit=3, filter={"year": {"gt": 2023, "lt": 2025}})) == ["a"]
    assert _ids(index.query([0.5, 1], limit=3, filter={"lang": {"ne": "zh"}})) == ["c", "a"]
    for bad in ({"year": {"regex": "20.*"}}, {"year": {"gte": "2024"}}, {"lang": {"in": "en"}}, {"year": {}}):
        with pytest.raises(RetrievalError) as info:
            index.query([0.5, 1], limit=3, filter=bad)
        assert info.value.code == "RETRIEVAL_INVALID_INPUT"
    tagged = InMemoryVectorIndex()
    tagged.add([{"id": "t1", "vector": [1, 0], "metadata": {"tags": ["ai", "memory"], "flag": True, "n": 1}},
                {"id": "t2", "vector": [1, 0], "metadata": {"tags": ["cooking"], "flag": 1, "n": 1.0}},
                {"id": "t3", "vector": [1, 0]}])
    assert _ids(tagged.query([1, 0], limit=5, filter={"tags": "memory"})) == ["t1"]  # any element matches
    assert _ids(tagged.query([1, 0], limit=5, filter={"tags": {"nin": ["ai"]}})) == ["t2", "t3"]
    assert _ids(tagged.query([1, 0], limit=5, filter={"flag": True})) == ["t1"]  # True is not 1 (JSON types)
    assert _ids(tagged.query([1, 0], limit=5, filter={"n": 1})) == ["t1", "t2"]  # 1 == 1.0
    assert _ids(tagged.query([1, 0], limit=5, filter={"flag": {"gte": 1}})) == ["t2"]  # booleans are not numbers
    predicate = compile_filter({"n": {"lte": 1.5}})
    assert predicate is not None and predicate({"n": 1}) and not predicate({"n": math.nan}) and not predicate({})


async def test_vector_provider_modes() -> None:
    """RET-6: precomputed vector queries, external EmbeddingProvider xor native embedding."""
    model = CountingEmbedding(dimensions=32)
    index = InMemoryVectorIndex(embedding=model)
    await index.add_contents([{"id": "m", "content": "agent memory migration", "metadata": {"year": 2024}},
                              {"id": "c", "content": "cooking pasta recipes"}])
    external = create_vector_search_provider(index, embedding=model)
    native = create_vector_search_provider(index, native_embedding=True)
    bare = create_vector_search_provider(index)
    with pytest.raises(RetrievalError):
        create_vector_search_provider(index, embedding=model, native_embedding=True)
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "vector", "providers": {
        "vector": external, "native": native, "bare": bare}}})
    retrieval = create_retrieval(registry)
    for strategy in ("vector", "native"):
        result = await retrieval.search({"query": {"content": "agent memory"}, "target": {"name": "kb"},
                                         "strategy": strategy, "limit": 1})
        assert result.status == "success" and result.output is not None
        [top] = result.output.candidates
        assert (top.id, top.source.target, top.source.ref) == ("m", "kb", "m")  # type: ignore[union-attr]
        assert result.output.strategy == strategy
    text = await retrieval.search({"query": {"content": "x"}, "target": {"name": "kb"}, "strategy": "bare"})
    assert text.error is not None and text.error.code == "RETRIEVAL_INVALID_INPUT"
    short = await retrieval.search({"query": {"content": [1.0, 0.0]}, "target": {"name": "kb"}, "strategy": "bare"})
    assert short.error is not None and short.error.code == "RETRIEVAL_INVALID_EMBEDDING"
    filtered = await retrieval.search({"query": {"content": "agent"}, "target": {"name": "kb"},
                                       "filter": {"year": {"gte": 2024}}})
    assert [c.id for c in filtered.output.candidates] == ["m"]  # type: ignore[union-attr]
