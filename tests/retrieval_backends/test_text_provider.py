"""``create_text_search_provider`` (RET-6) over the embedded BM25 engine, alone and behind the worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from ditto.retrieval import (
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalTargetRegistry,
    create_retrieval,
    create_retrieval_worker,
)
from ditto.retrieval.providers.text import TextSearchProvider, create_text_search_provider
from ditto.runtime import create_ditto

from .conftest import DOCS


def _request(content: object = "agent memory migration", **extra: object) -> dict[str, object]:
    return {"query": {"content": content}, "target": {"name": "kb"}, **extra}


@pytest.fixture
def provider() -> TextSearchProvider:
    return create_text_search_provider(DOCS)


async def test_ret6_candidates_have_id_content_score_source_and_metadata(provider: TextSearchProvider) -> None:
    """RET-6: text candidates carry id, content, score, source {target, ref} and metadata."""
    output = await provider.search(_request(strategy="bm25", limit=2))
    assert output.strategy == "bm25"
    assert output.target.name == "kb"
    assert len(output.candidates) == 2
    first = output.candidates[0]
    assert first.id in {"d1", "d3"}
    assert first.content == next(d["content"] for d in DOCS if d["id"] == first.id)
    assert first.score is not None and first.score > output.candidates[1].score  # type: ignore[operator]
    assert first.source is not None and (first.source.target, first.source.ref) == ("kb", first.id)
    assert first.metadata is not None and first.metadata["lang"] == "en"
    with pytest.raises(TypeError):
        first.metadata["lang"] = "fr"  # type: ignore[index]


async def test_ret6_keyword_strategy_requires_all_terms(provider: TextSearchProvider) -> None:
    """RET-6: strategy ``keyword`` is conjunctive, ``bm25`` disjunctive; the default is bm25."""
    keyword = await provider.search(_request("agent memory", strategy="keyword"))
    bm25 = await provider.search(_request("agent memory"))
    assert {c.id for c in keyword.candidates} == {"d1", "d3"}
    assert {c.id for c in bm25.candidates} == {"d1", "d2", "d3"}
    assert bm25.strategy == "bm25"


async def test_ret6_limit_filter_and_empty_result(provider: TextSearchProvider) -> None:
    """RET-6: limit respected; filters applied; no match → ``candidates == ()`` with target kept."""
    assert len((await provider.search(_request("memory", limit=1))).candidates) == 1
    filtered = await provider.search(_request("memory 记忆", filter={"year": {"gte": 2024}, "lang": "zh"}))
    assert [c.id for c in filtered.candidates] == ["d4"]
    empty = await provider.search(_request("quantum chromodynamics"))
    assert empty.candidates == ()
    assert empty.target.name == "kb"


async def test_ret6_limit_comes_from_context_defaults_when_request_has_none() -> None:
    """RET-6: without a request limit the provider uses the worker/YAML defaults, else 10."""
    provider = create_text_search_provider([{"id": str(i), "content": "memory"} for i in range(30)])
    assert len((await provider.search(_request("memory"))).candidates) == 10
    context = RetrievalExecutionContext.model_validate({"defaults": {"search_limit": 3}})
    assert len((await provider.search(_request("memory"), context)).candidates) == 3


async def test_ret6_chinese_query_through_the_provider(provider: TextSearchProvider) -> None:
    """RET-6: a Chinese query finds the Chinese documents."""
    output = await provider.search(_request("混合检索"))
    assert output.candidates[0].id == "d5"


@pytest.mark.parametrize(("request_", "code"), [
    (_request(["not", "text"]), "RETRIEVAL_INVALID_INPUT"),
    (_request(filter={"year": {"regex": "20.*"}}), "RETRIEVAL_INVALID_INPUT"),
    (_request(strategy="vector"), "RETRIEVAL_STRATEGY_UNSUPPORTED"),
    ({"query": {}, "target": {"name": "kb"}}, "RETRIEVAL_INVALID_INPUT"),
    (_request(limit=0), "RETRIEVAL_INVALID_INPUT"),
])
async def test_ret5_text_provider_error_codes(provider: TextSearchProvider, request_: dict[str, object],
                                              code: str) -> None:
    """RET-5: bad query/filter/strategy/input map to their RETRIEVAL_* codes."""
    with pytest.raises(RetrievalError) as caught:
        await provider.search(request_)
    assert caught.value.code == code


async def test_ret6_add_and_remove_documents_and_offloaded_search() -> None:
    """RET-6: documents added/removed through the provider are searchable at once (also when
    searches run in a worker thread because the index is over ``offload_threshold``)."""
    provider = create_text_search_provider(DOCS, {"offload_threshold": 1})
    assert await provider.add_documents([{"id": "n1", "content": "Neural ranking models", "ref": "kb/n1.md"}]) == 1
    output = await provider.search(_request("ranking"))
    assert [(c.id, c.source.ref) for c in output.candidates] == [("n1", "kb/n1.md")]  # type: ignore[union-attr]
    assert await provider.remove_documents(["n1"]) == 1
    assert (await provider.search(_request("ranking"))).candidates == ()


async def test_ret6_provider_save_and_load(tmp_path: Path, provider: TextSearchProvider) -> None:
    """RET-6: a provider's index saved and loaded answers identically."""
    await provider.save(tmp_path / "kb")
    loaded = await TextSearchProvider.load(tmp_path / "kb")
    for request in (_request(), _request("记忆"), _request("memory", filter={"tags": {"in": ["memory"]}})):
        assert (await loaded.search(request)) == (await provider.search(request))
    with pytest.raises(ValueError):
        create_text_search_provider(options={"k1": 2.0}, index=loaded.index)


def test_ret6_progress_callback_and_rich_progress() -> None:
    """RET-6: indexing progress is reported to a callback, or shown as a rich progress bar."""
    seen: list[tuple[int, int]] = []
    docs = [{"id": str(i), "content": f"document number {i}"} for i in range(700)]
    create_text_search_provider(docs, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(512, 700), (700, 700)]
    provider = create_text_search_provider(docs, progress=True)
    assert len(provider.index) == 700


async def test_ret6_text_provider_behind_the_retrieval_worker_and_sdk(provider: TextSearchProvider) -> None:
    """RET-6: the provider serves RETRIEVAL.SEARCH through the registry, SDK and runtime."""
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "bm25",
                                               "providers": {"bm25": provider, "keyword": provider}}})
    runtime = create_ditto(workers=[create_retrieval_worker(providers=registry)])
    try:
        routed = await runtime.invoke("RETRIEVAL.SEARCH", _request("agent memory", strategy="keyword",
                                                                    filter={"year": {"gte": 2025}}))
        assert routed.status == "success", routed.error
        assert [c.id for c in routed.output.candidates] == ["d3"]
        assert routed.output.strategy == "keyword"
        bad = await runtime.invoke("RETRIEVAL.SEARCH", _request(filter={"year": {"like": 1}}))
        assert (bad.status, bad.error.code) == ("error", "RETRIEVAL_INVALID_INPUT")
    finally:
        await runtime.close()
    local = await create_retrieval(providers=registry).search(_request(limit=1))
    assert local.status == "success" and len(local.output.candidates) == 1


async def test_ret6_typed_and_dict_inputs_give_the_same_answer(provider: TextSearchProvider) -> None:
    """RET-6: providers accept the typed input the SDK hands over, and plain (camelCase) dicts."""
    typed = RetrievalSearchInput.model_validate(_request(limit=3))
    assert (await provider.search(typed)) == (await provider.search(_request(limit=3)))
