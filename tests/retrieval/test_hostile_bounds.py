"""Hostile numbers and text in RETRIEVAL are documented refusals (issue 19 finding 10)."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.retrieval import (
    HybridBranch,
    RetrievalError,
    RetrievalTargetRegistry,
    create_hybrid_search_provider,
    create_rerank_search_provider,
    create_retrieval,
    create_text_search_provider,
    parse_search_input,
    validate_vector,
)

from .providers import ListProvider

HUGE = 10**400
DOCS = [{"id": "a", "content": "agent memory", "metadata": {"year": 2024}},
        {"id": "b", "content": "memory of agents", "metadata": {"year": 2020}}]


def _retrieval(provider: Any) -> Any:
    targets = {"kb": {"default_strategy": "bm25", "providers": {"bm25": provider}}}
    return create_retrieval(RetrievalTargetRegistry(targets))


@pytest.mark.parametrize("filter", [{"year": HUGE}, {"year": {"gte": HUGE}}, {"year": {"in": [1, -HUGE]}},
                                    {"year": {"lt": 2**1024}}], ids=["eq", "gte", "in", "lt"])
async def test_a_filter_number_beyond_a_double_is_invalid_input(filter: dict[str, Any]) -> None:
    """Issue 19 finding 10: a filter value of 10**400 is RETRIEVAL_INVALID_INPUT, not BACKEND_ERROR."""
    retrieval = _retrieval(create_text_search_provider(DOCS))
    refused = await retrieval.search({"query": {"content": "memory"}, "target": {"name": "kb"}, "filter": filter})
    assert refused.error is not None and refused.error.code == "RETRIEVAL_INVALID_INPUT"
    from ditto.retrieval.engines.filters import parse_filter

    with pytest.raises(RetrievalError) as direct:  # the filter language itself, for providers called directly
        parse_filter(filter)
    assert direct.value.code == "RETRIEVAL_INVALID_INPUT"
    found = await retrieval.search({"query": {"content": "memory"}, "target": {"name": "kb"},
                                    "filter": {"year": {"gte": 2**1000}}})
    assert found.status == "success" and found.output is not None and found.output.candidates == ()


@pytest.mark.parametrize("weight", [HUGE, -HUGE, 2**1024], ids=["1e400", "-1e400", "2**1024"])
def test_a_branch_weight_beyond_a_double_is_a_documented_refusal(weight: int) -> None:
    """Issue 19 finding 10: a branch weight of 10**400 is RETRIEVAL_INVALID_INPUT (an argument error), not a raw
    OverflowError."""
    with pytest.raises(RetrievalError) as refused:
        create_hybrid_search_provider([HybridBranch(ListProvider([]), weight=weight)])  # type: ignore[arg-type]
    assert refused.value.code == "RETRIEVAL_INVALID_INPUT" and isinstance(refused.value, ValueError)


class _Keep:
    async def rerank(self, _query: Any, candidates: Any, _context: Any = None) -> Any:
        return candidates


@pytest.mark.parametrize("factory", [
    lambda n: create_hybrid_search_provider([ListProvider([])], candidate_limit=n),
    lambda n: create_rerank_search_provider(ListProvider([]), reranker=_Keep(), candidate_limit=n),
])
def test_candidate_limit_is_bounded(factory: Any) -> None:
    """Issue 19 finding 10: candidate_limit above 10,000 (the largest search limit) is refused; 10,000 is not."""
    for bad in (10**9, 10_001, HUGE):
        with pytest.raises(RetrievalError) as refused:
            factory(bad)
        assert refused.value.code == "RETRIEVAL_INVALID_INPUT"
    factory(10_000)


async def test_candidate_limit_from_defaults_is_bounded() -> None:
    """Issue 19 finding 10: a pool size above 10,000 coming from the defaults is refused at configuration."""
    from ditto.config import RuntimeConfig

    with pytest.raises(Exception) as refused:
        RuntimeConfig.model_validate({"workers": {"retrieval": {"hybrid": {"candidateLimit": 10**9}}}})
    assert "candidate" in str(refused.value).lower()


@pytest.mark.parametrize("query", [{"content": "agent \ud800 memory"}, {"content": {"text": "\udfff"}},
                                   {"content": "x", "metadata": {"k": "\ud800"}}, {"content": [HUGE]}],
                         ids=["text", "object", "metadata", "number"])
def test_a_lone_surrogate_or_huge_number_in_a_query_is_invalid_input(query: dict[str, Any]) -> None:
    """Issue 19 finding 10: a lone surrogate in a query is refused as MEMORY and CONTEXT refuse it."""
    with pytest.raises(RetrievalError) as refused:
        parse_search_input({"query": query, "target": {"name": "kb"}})
    assert refused.value.code == "RETRIEVAL_INVALID_INPUT"


@pytest.mark.parametrize("filter", [{"k\ud800": 1}, {"k": "\ud800"}])
def test_a_lone_surrogate_in_a_filter_is_invalid_input(filter: dict[str, Any]) -> None:
    """Issue 19 finding 10: the filter is checked like the query."""
    with pytest.raises(RetrievalError) as refused:
        parse_search_input({"query": {"content": "x"}, "target": {"name": "kb"}, "filter": filter})
    assert refused.value.code == "RETRIEVAL_INVALID_INPUT"


@pytest.mark.parametrize("vector", [[0.1, HUGE], [-HUGE], [2**1024]], ids=["1e400", "-1e400", "2**1024"])
def test_a_400_digit_number_in_an_embedding_is_invalid_embedding(vector: list[Any]) -> None:
    """Issue 19 finding 10: an embedding with a 400-digit number is RETRIEVAL_INVALID_EMBEDDING, not BACKEND_ERROR."""
    with pytest.raises(RetrievalError) as refused:
        validate_vector(vector)
    assert refused.value.code == "RETRIEVAL_INVALID_EMBEDDING"
    assert validate_vector([1, 2**100]) == (1.0, float(2**100))


async def test_a_huge_embedding_answer_is_refused_within_the_deadline() -> None:
    """Issue 19 finding 5: an embedding server answering a 2,000,000-number vector (22 MB) to a call with
    timeout_ms=3000 is refused (RETRIEVAL_BACKEND_ERROR, the answer is over the size cap) well within the
    deadline, where parsing it after the deadline took 5.9–8.2 s; a 400-digit number in an answer is
    RETRIEVAL_INVALID_EMBEDDING."""
    import time

    from ditto.retrieval import create_http_embedding_provider
    from tests.support.openai_embeddings_server import EmbeddingServerState, openai_embeddings_server

    state = EmbeddingServerState()
    state.huge_answer()  # built before the clock starts
    async with openai_embeddings_server(state) as (url, _state):
        async with create_http_embedding_provider(url=url, model="huge", timeout_ms=3000) as embedder:
            started = time.monotonic()
            with pytest.raises(RetrievalError) as refused:
                await embedder.embed(["agent memory"])
            assert time.monotonic() - started < 3.0
            assert refused.value.code == "RETRIEVAL_BACKEND_ERROR" and "bytes" in refused.value.message
        async with create_http_embedding_provider(url=url, model="big-number") as embedder:
            with pytest.raises(RetrievalError) as big:
                await embedder.embed(["agent memory"])
            assert big.value.code == "RETRIEVAL_INVALID_EMBEDDING"
        async with create_http_embedding_provider(url=url, model="hash-bow") as embedder:
            assert len((await embedder.embed(["agent memory"]))[0]) == 32
