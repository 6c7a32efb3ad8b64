"""Seed 000 behaviours that an audit found differing or untested (issue 10), one test each.

Every docstring names the spec id and the seed line (``seed 000 line N``) it pins.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ditto import (
    CancelSignal,
    RoutingError,
    WorkerDefinition,
    create_ditto,
    load_runtime_config_file,
)
from ditto.retrieval import (
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalTarget,
    RetrievalTargetRegistry,
    create_http_embedding_provider,
    create_hybrid_search_provider,
    create_retrieval,
    create_retrieval_worker,
    embed_contents,
    retrieval_search_node,
)
from ditto.retrieval.adapters.memory import RemoteRetrievalSearchProvider
from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store

from ..runtime.test_http import serve_and_call
from ..support.uvicorn_thread import serve_app
from .providers import FailingProvider, ListProvider, SlowProvider, docs

REQUEST: dict[str, Any] = {"query": {"content": "agent memory"}, "target": {"name": "kb"}}


def registry(**providers: Any) -> RetrievalTargetRegistry:
    default = next(iter(providers))
    return RetrievalTargetRegistry({"kb": {"defaultStrategy": default, "providers": providers}})


class GateProvider:
    """Holds every call until ``gate`` is set; counts how many calls are inside at once."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.inside = 0
        self.most_inside = 0
        self.all_inside = asyncio.Event()
        self.expected = 0

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                     ) -> dict[str, Any]:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        if self.inside == self.expected:
            self.all_inside.set()
        try:
            await self.gate.wait()
        finally:
            self.inside -= 1
        return {"candidates": [], "target": input.target.model_dump(exclude_none=True)}


# -- create_retrieval takes concurrency and ignores it ---------------------------------------


async def test_create_retrieval_accepts_concurrency_and_does_not_limit() -> None:
    """RET-2, seed 000 lines 123/128/293: ``concurrency`` is part of the shared options object; the
    direct SDK accepts it (object form and keyword) and still runs every call at once."""
    for make in (lambda r: create_retrieval({"providers": r, "concurrency": 1}),
                 lambda r: create_retrieval(r, concurrency=1)):
        provider = GateProvider()
        provider.expected = 5
        sdk = make(registry(custom=provider))
        calls = [asyncio.create_task(sdk.search(REQUEST)) for _ in range(5)]
        await asyncio.wait_for(provider.all_inside.wait(), 5)  # all five inside although concurrency=1
        provider.gate.set()
        results = await asyncio.gather(*calls)
        assert [result.status for result in results] == ["success"] * 5
        assert provider.most_inside == 5


# -- a handler returning a NodeResult is that result ----------------------------------------


async def test_descriptor_handler_returning_node_result_becomes_it() -> None:
    """RET-2, seed 000 lines 344–351: ``retrieval_search_node.define("RETRIEVAL", lambda input:
    retrieval.search(input))`` — the SDK's NodeResult is the call's result (status, output, error), not a
    success wrapping it; the execution id and node are the runtime's."""
    retrieval = create_retrieval(registry(custom=ListProvider(docs("a", "b"))))
    runtime = create_ditto(workers=[retrieval_search_node.define("RETRIEVAL", lambda input: retrieval.search(input))])
    ok = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert ok.status == "success" and ok.error is None
    assert [c.id for c in ok.output.candidates] == ["a", "b"]
    assert ok.node == "RETRIEVAL.SEARCH" and len(ok.execution_id) >= 16
    missing = await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, "target": {"name": "nope"}})
    assert missing.status == "error" and missing.output is None
    assert missing.error is not None and missing.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
    await runtime.close()


async def test_descriptor_handler_node_result_over_http() -> None:
    """RET-2/RET-8, seed 000 lines 344–351: the same over the HTTP transport — an error NodeResult returned
    by the handler arrives as status error with its code, not as a success carrying an error object."""
    retrieval = create_retrieval(registry(custom=ListProvider(docs("a"))))
    server = create_ditto(workers=[retrieval_search_node.define("RETRIEVAL", lambda input: retrieval.search(input))])
    async with serve_and_call(server) as caller:
        ok = await caller.invoke("RETRIEVAL.SEARCH", REQUEST)
        assert ok.status == "success" and ok.output["candidates"][0]["id"] == "a"
        missing = await caller.invoke("RETRIEVAL.SEARCH", {**REQUEST, "target": {"name": "nope"}})
        assert missing.status == "error" and missing.output is None
        assert missing.error is not None and missing.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
    await server.close()


# -- the output target is the request's logical identity -------------------------------------


async def test_output_target_keeps_request_metadata() -> None:
    """RET-4, seed 000 line 167: the output target uses the request's logical identity — a provider that
    echoes only name/type/namespace does not drop the request's ``target.metadata``; a provider that
    returns its own target metadata keeps it."""

    class NameOnly:
        async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                         ) -> dict[str, Any]:
            return {"candidates": [], "target": {"name": input.target.name, "namespace": input.target.namespace}}

    class OwnMetadata:
        async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                         ) -> dict[str, Any]:
            return {"candidates": [], "target": {**input.target.model_dump(exclude_none=True),
                                                 "metadata": {"shard": 3}}}

    request = {**REQUEST, "target": {"name": "kb", "namespace": "tenant-a", "metadata": {"tenant": "a"}}}
    sdk = create_retrieval(registry(custom=NameOnly(), own=OwnMetadata()))
    result = await sdk.search(request)
    assert result.status == "success"
    assert result.output.target.model_dump(exclude_none=True) == request["target"]
    own = await sdk.search({**request, "strategy": "own"})
    assert own.status == "success" and own.output.target.metadata == {"shard": 3}


# -- a bare TimeoutError inside a provider is a backend failure ------------------------------


async def test_bare_timeout_error_is_backend_error(caplog: pytest.LogCaptureFixture) -> None:
    """RET-5, seed 000 lines 255–259: a Python ``TimeoutError`` raised by a provider (directly or in a hybrid
    branch) is an unclassified backend failure — RETRIEVAL_BACKEND_ERROR, text hidden, logged once with its
    traceback — while an explicit RetrievalError(TIMEOUT) and the caller's deadline stay timeouts."""
    leaked = "db host 10.0.0.7"
    hybrid = create_hybrid_search_provider([FailingProvider(TimeoutError(leaked)), ListProvider(docs("a"))])
    sdk = create_retrieval(registry(plain=FailingProvider(TimeoutError(leaked)), hybrid=hybrid,
                                    explicit=FailingProvider(RetrievalError("RETRIEVAL_TIMEOUT", "slow")),
                                    slow=SlowProvider(30)))
    for strategy in ("plain", "hybrid"):
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="ditto.retrieval"):
            result = await sdk.search({**REQUEST, "strategy": strategy})
        assert (result.status, result.error and result.error.code) == ("error", "RETRIEVAL_BACKEND_ERROR")
        assert result.error is not None and leaked not in result.error.message
        logged = [record for record in caplog.records if record.exc_info is not None]
        assert len(logged) == 1 and isinstance(logged[0].exc_info[1], TimeoutError)  # type: ignore[index]
    explicit = await sdk.search({**REQUEST, "strategy": "explicit"})
    assert (explicit.status, explicit.error and explicit.error.code) == ("timeout", "RETRIEVAL_TIMEOUT")
    deadline = await sdk.search({**REQUEST, "strategy": "slow"}, None, {"signal": CancelSignal.timeout(0.05)})
    assert (deadline.status, deadline.error and deadline.error.code) == ("timeout", "RETRIEVAL_TIMEOUT")


# -- works today; pinned here ----------------------------------------------------------------


async def test_yaml_alone_starts_no_worker(tmp_path: Path) -> None:
    """RET-8, seed 000 line 19 ("YAML 配置不会启动 Worker"): a runtime built from a YAML with a complete
    ``workers.retrieval`` section has no worker and no RETRIEVAL.SEARCH route until one is registered."""
    path = tmp_path / "ditto.yaml"
    path.write_text("workers:\n  retrieval:\n    searchLimit: 3\n    hybrid:\n      candidateLimit: 50\n",
                    encoding="utf-8")
    config = load_runtime_config_file(path, {})
    assert config.retrieval.search_limit == 3
    runtime = create_ditto(config=config)
    assert runtime.workers() == []
    with pytest.raises(RoutingError) as info:
        await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert info.value.code == "UNKNOWN_NODE"
    runtime.register(create_retrieval_worker(registry(custom=ListProvider(docs(*"abcdef")))))
    answer = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert answer.status == "success" and len(answer.output.candidates) == 3  # now the YAML applies
    await runtime.close()


async def test_one_provider_under_several_strategies() -> None:
    """RET-3, seed 000 line 157 ("可以将同一个 Provider 注册到多个策略"): one provider object bound to
    two strategies receives, and reports, whichever strategy the call chose."""
    provider = ListProvider(docs("a"))
    providers = RetrievalTargetRegistry({"kb": {"default_strategy": "vector",
                                                "providers": {"vector": provider, "hybrid": provider}}})
    sdk = create_retrieval(providers)
    default = await sdk.search(REQUEST)
    chosen = await sdk.search({**REQUEST, "strategy": "hybrid"})
    assert (default.output.strategy, chosen.output.strategy) == ("vector", "hybrid")
    assert [call.strategy for call, _ in provider.calls] == ["vector", "hybrid"]
    assert providers.targets() == {"kb": ("vector", ("vector", "hybrid"))}


async def test_custom_registry_gets_none_strategy_and_permission_denied_passes() -> None:
    """RET-3/RET-5, seed 000 lines 161/257: a custom RetrievalProviderRegistry receives ``None`` when the
    call names no strategy (it interprets the default itself) and its RETRIEVAL_PERMISSION_DENIED reaches
    the caller unchanged, code and message, through the SDK and the worker."""

    class TenantRegistry:
        def __init__(self) -> None:
            self.seen: list[tuple[str | None, str | None]] = []
            self.provider = ListProvider(docs("a"))

        def resolve(self, target: RetrievalTarget, strategy: str | None = None) -> ListProvider:
            self.seen.append((target.namespace, strategy))
            if target.namespace != "tenant-a":
                raise RetrievalError("RETRIEVAL_PERMISSION_DENIED", "tenant not allowed")
            return self.provider

    custom = TenantRegistry()
    sdk = create_retrieval(custom)
    allowed = await sdk.search({**REQUEST, "target": {"name": "kb", "namespace": "tenant-a"}})
    assert allowed.status == "success" and allowed.output.strategy is None
    assert custom.provider.calls[0][0].strategy is None
    denied = await sdk.search({**REQUEST, "target": {"name": "kb", "namespace": "tenant-b"}})
    assert denied.status == "error" and denied.error is not None
    assert (denied.error.code, denied.error.message) == ("RETRIEVAL_PERMISSION_DENIED", "tenant not allowed")
    runtime = create_ditto(workers=[create_retrieval_worker(custom)])
    routed = await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, "target": {"name": "kb", "namespace": "x"}})
    assert routed.error is not None and routed.error.code == "RETRIEVAL_PERMISSION_DENIED"
    await runtime.close()
    assert custom.seen == [("tenant-a", None), ("tenant-b", None), ("x", None)]


async def test_explicit_runtime_wins_inside_a_worker_call(tmp_path: Path) -> None:
    """RET-7, seed 000 line 372 ("显式 runtime 始终优先"): a RemoteRetrievalSearchProvider given ``runtime=``
    sends RETRIEVAL.SEARCH there even while it runs inside another runtime's MEMORY call; without it, the
    executing runtime is used."""
    def memory_hit(name: str) -> list[dict[str, Any]]:
        return [{"id": name, "content": {"id": name, "content": f"from {name}"}}]

    def retrieval_worker(name: str) -> WorkerDefinition:
        return create_retrieval_worker(RetrievalTargetRegistry({"memories": {
            "default_strategy": "keyword", "providers": {"keyword": ListProvider(memory_hit(name))}}}))

    other = create_ditto(workers=[retrieval_worker("other")])
    async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as store:
        explicit = RemoteRetrievalSearchProvider(target={"name": "memories"}, runtime=other)
        inherited = RemoteRetrievalSearchProvider(target={"name": "memories"})
        home = create_ditto(workers=[retrieval_worker("home"), create_memory_worker(store=store, search=explicit)])
        hits = await home.invoke("MEMORY.SEARCH", {"query": "anything"})
        assert hits.status == "success" and [hit.memory.id for hit in hits.output] == ["other"]
        inheriting = create_ditto(workers=[retrieval_worker("home"),
                                           create_memory_worker(store=store, search=inherited)])
        hits = await inheriting.invoke("MEMORY.SEARCH", {"query": "anything"})
        assert hits.status == "success" and [hit.memory.id for hit in hits.output] == ["home"]
        await home.close()
        await inheriting.close()
    await other.close()


async def test_embedding_batches_never_overlap() -> None:
    """RET-6, seed 000 line 41 ("embedContents 顺序执行有界批次…不是并行度"): a local OpenAI-compatible
    server records when each batch request starts and ends; batches of at most ``batch_size`` arrive one
    after another, never two at once — through ``embed_contents`` and the HTTP provider's own batching."""
    spans: list[tuple[float, float, int]] = []

    async def embeddings(request: Request) -> Response:
        start = time.monotonic()
        body = json.loads(await request.body())
        await asyncio.sleep(0.02)  # long enough that a second, concurrent batch would start meanwhile
        data = [{"object": "embedding", "index": i, "embedding": [1.0, float(i)]} for i in range(len(body["input"]))]
        spans.append((start, time.monotonic(), len(body["input"])))
        return Response(json.dumps({"object": "list", "data": data}), 200, media_type="application/json")

    async with serve_app(Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])) as url, \
            create_http_embedding_provider(url=url, model="m", batch_size=2) as http:
        texts = [f"text {i}" for i in range(7)]
        via_function = await embed_contents(http, texts, batch_size=3)
        assert len(via_function) == 7 and [size for *_, size in spans] == [2, 1, 2, 1, 1]
        assert len(await http.embed(texts)) == 7
        assert [size for *_, size in spans[5:]] == [2, 2, 2, 1]
    ordered = sorted(spans)
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(ordered))
