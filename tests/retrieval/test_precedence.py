"""Limit and provider-number precedence end to end (RET-2, RET-6, RET-8).

Seed 000: final limit = request → worker defaults → runtime YAML → 10; provider
numbers = constructor options → worker defaults → YAML → built-in. The YAML layer
here is the runtime's own configuration (``create_ditto(config=...)``): the worker
definition is *not* handed the config, exactly as in the seed's setup example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ditto import create_ditto, load_runtime_config_file
from ditto.config import RuntimeConfig
from ditto.retrieval import (
    RetrievalDefaults,
    RetrievalExecutionContext,
    RetrievalTargetRegistry,
    create_cosine_reranker,
    create_hybrid_search_provider,
    create_rerank_search_provider,
    create_retrieval,
    create_retrieval_worker,
)

from .providers import ListProvider, docs
from .test_embedding import CountingEmbedding

REQUEST: dict[str, Any] = {"query": {"content": "agent memory"}, "target": {"name": "kb"}}
YAML = """
workers:
  retrieval:
    searchLimit: 6
    embedding:
      batchSize: 3
    hybrid:
      candidateLimit: 40
      rrfK: 5
    rerank:
      candidateLimit: 30
"""


class Setup:
    """One registry with a plain provider, hybrids with and without constructor numbers, and a rerank."""

    def __init__(self) -> None:
        self.plain = ListProvider(docs(*[str(i) for i in range(200)]))
        self.left = ListProvider(docs(*[f"l{i}" for i in range(200)]))
        self.right = ListProvider(docs(*[f"l{i}" for i in range(200)]))
        self.embedding = CountingEmbedding()
        hybrid = create_hybrid_search_provider([self.left, self.right])
        self.registry = RetrievalTargetRegistry({"kb": {"default_strategy": "plain", "providers": {
            "plain": self.plain,
            "hybrid": hybrid,
            "pinned": create_hybrid_search_provider([self.left, self.right], candidate_limit=7, rrf_k=1),
            "rerank": create_rerank_search_provider(hybrid, create_cosine_reranker(self.embedding)),
        }}})

    async def run(self, runtime: Any, **fields: Any) -> Any:
        result = await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, **fields})
        assert result.status == "success", result.error
        return result.output


@pytest.fixture
def config(tmp_path: Path) -> RuntimeConfig:
    (tmp_path / "ditto.yaml").write_text(YAML)
    return load_runtime_config_file(tmp_path / "ditto.yaml", {})


async def test_runtime_yaml_reaches_a_worker_built_without_config(config: RuntimeConfig) -> None:
    """RET-2/RET-8: create_ditto(config=...) is the YAML layer of a worker that was not given the config:
    limit request → YAML → 10, and hybrid/rerank/embedding numbers constructor → YAML → built-in."""
    setup = Setup()
    runtime = create_ditto(config=config, workers=[create_retrieval_worker(providers=setup.registry)])
    assert len((await setup.run(runtime)).candidates) == 6  # YAML searchLimit
    assert len((await setup.run(runtime, limit=2)).candidates) == 2  # request wins
    out = await setup.run(runtime, strategy="hybrid")
    assert [call[0].limit for call in (setup.left.calls[-1], setup.right.calls[-1])] == [40, 40]  # YAML pool
    assert len(out.candidates) == 6 and out.candidates[0].score == pytest.approx(2 / (5 + 1))  # YAML rrfK
    out = await setup.run(runtime, strategy="pinned")
    assert setup.left.calls[-1][0].limit == 7 and out.candidates[0].score == pytest.approx(2 / 2)  # constructor
    await setup.run(runtime, strategy="rerank", limit=4)
    assert setup.left.calls[-1][0].limit == 40  # rerank pool 30 (YAML) → hybrid pool max(30, 40)
    assert setup.embedding.batches == [3] * 10 + [1]  # 31 contents (query + 30) in YAML batches of 3
    await runtime.close()

    bare = create_ditto(workers=[create_retrieval_worker(providers=setup.registry)])
    assert len((await setup.run(bare)).candidates) == 10  # built-in
    out = await setup.run(bare, strategy="hybrid")
    assert setup.left.calls[-1][0].limit == 100 and out.candidates[0].score == pytest.approx(2 / 61)
    await bare.close()


async def test_worker_defaults_beat_runtime_yaml(config: RuntimeConfig) -> None:
    """RET-2/RET-6: worker defaults sit above the runtime YAML, field by field; a config pinned to the
    definition (config=) sits between the two."""
    setup = Setup()
    worker = create_retrieval_worker(providers=setup.registry,
                                     defaults={"searchLimit": 4, "hybrid": {"candidateLimit": 12}})
    runtime = create_ditto(config=config, workers=[worker])
    assert len((await setup.run(runtime)).candidates) == 4
    out = await setup.run(runtime, strategy="hybrid")
    assert setup.left.calls[-1][0].limit == 12  # worker defaults
    assert out.candidates[0].score == pytest.approx(2 / 6)  # rrfK still from the runtime YAML
    await runtime.close()

    pinned = create_retrieval_worker(providers=setup.registry, config={"searchLimit": 9})
    runtime = create_ditto(config=config, workers=[pinned])
    assert len((await setup.run(runtime)).candidates) == 9
    await setup.run(runtime, strategy="hybrid")
    assert setup.left.calls[-1][0].limit == 40  # the pinned layer sets no pool: runtime YAML applies
    await runtime.close()


async def test_same_definition_in_two_runtimes_uses_each_runtime_yaml(config: RuntimeConfig) -> None:
    """RET-8: one definition registered in runtimes with different YAML reads each runtime's layer."""
    setup = Setup()
    worker = create_retrieval_worker(providers=setup.registry)
    with_yaml, without = create_ditto(config=config, workers=[worker]), create_ditto(workers=[worker])
    for _ in range(2):
        assert len((await setup.run(with_yaml)).candidates) == 6
        assert len((await setup.run(without)).candidates) == 10
    await with_yaml.close()
    await without.close()


async def test_seed_worked_example_through_the_worker() -> None:
    """RET-6 (seed worked example): final limit 8, two hybrid branches with candidateLimit 100 and an outer
    rerank with candidateLimit 50: the inner pool grows to 50, each branch still reads 100, 8 come back."""
    left, right = ListProvider(docs(*[f"a{i}" for i in range(150)])), ListProvider(docs(*[f"b{i}" for i in range(150)]))
    embedding = CountingEmbedding()
    hybrid = create_hybrid_search_provider([left, right], candidate_limit=100)
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "rerank", "providers": {
        "rerank": create_rerank_search_provider(hybrid, create_cosine_reranker(embedding), candidate_limit=50)}}})
    runtime = create_ditto(workers=[create_retrieval_worker(providers=registry)])
    for result in (await create_retrieval(registry).search({**REQUEST, "limit": 8}),
                   await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, "limit": 8})):
        assert result.status == "success" and result.output is not None and len(result.output.candidates) == 8
        assert [left.calls[-1][0].limit, right.calls[-1][0].limit] == [100, 100]
        assert embedding.batches[-1] == 1 + 50  # the reranker saw the query and the 50-candidate inner pool
    assert len(left.calls) == 2
    await runtime.close()


async def test_direct_provider_calls_fall_back_to_context_defaults() -> None:
    """RET-2/RET-6: hybrid and rerank providers called directly without a limit use the context's
    search_limit (the same layer the SDK applies), then 10."""
    setup = Setup()
    tuned = RetrievalExecutionContext(defaults=RetrievalDefaults(search_limit=3))
    for strategy in ("hybrid", "rerank"):
        provider = setup.registry.resolve({"name": "kb"}, strategy)
        assert len((await provider.search(REQUEST, tuned)).candidates) == 3
        assert len((await provider.search(REQUEST)).candidates) == 10
