"""Registry (RET-3), SDK and worker (RET-2), error codes and cancellation (RET-5)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ditto import AbortController, CancelSignal, create_ditto, load_runtime_config_file
from ditto.retrieval import (
    RETRIEVAL_ERROR_CODES,
    RetrievalDefaults,
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalTargetRegistry,
    create_retrieval,
    create_retrieval_worker,
    retrieval_search_node,
)

from .providers import FailingProvider, ListProvider, SlowProvider, docs

REQUEST = {"query": {"content": "agent memory"}, "target": {"name": "kb"}}


def registry(**providers: Any) -> RetrievalTargetRegistry:
    default = next(iter(providers))
    return RetrievalTargetRegistry({"kb": {"defaultStrategy": default, "providers": providers}})


def test_error_codes_exact() -> None:
    """RET-5: exactly the ten codes; CANCELLED → cancelled, TIMEOUT → timeout."""
    assert {
        "RETRIEVAL_INVALID_INPUT", "RETRIEVAL_TARGET_NOT_FOUND", "RETRIEVAL_STRATEGY_UNSUPPORTED",
        "RETRIEVAL_PROVIDER_UNAVAILABLE", "RETRIEVAL_INVALID_BACKEND_OUTPUT", "RETRIEVAL_BACKEND_ERROR",
        "RETRIEVAL_INVALID_EMBEDDING", "RETRIEVAL_CANCELLED", "RETRIEVAL_TIMEOUT", "RETRIEVAL_PERMISSION_DENIED",
    } == RETRIEVAL_ERROR_CODES
    assert RetrievalError("RETRIEVAL_CANCELLED").status == "cancelled"
    assert RetrievalError("RETRIEVAL_TIMEOUT").status == "timeout"
    assert RetrievalError("RETRIEVAL_BACKEND_ERROR").status == "error"
    with pytest.raises(ValueError):
        RetrievalError("SOMETHING_ELSE")


async def test_registry_resolve_default_and_explicit_strategy() -> None:
    """RET-3: default strategy used when omitted; the chosen strategy reaches the provider and the output."""
    vector, hybrid = ListProvider(docs("a")), ListProvider(docs("b"))
    providers = RetrievalTargetRegistry({"kb": {"default_strategy": "vector",
                                                "providers": {"vector": vector, "hybrid": hybrid}}})
    out = await providers.resolve({"name": "kb"}).search(RetrievalSearchInput.model_validate(REQUEST))
    assert out["strategy"] == "vector" and vector.calls[0][0].strategy == "vector"
    out = await providers.resolve({"name": "kb"}, "hybrid").search(RetrievalSearchInput.model_validate(REQUEST))
    assert out["strategy"] == "hybrid" and hybrid.calls[0][0].strategy == "hybrid"


def test_registry_refusals() -> None:
    """RET-3: unknown target, unregistered strategy, rag, unregistered default are refused."""
    providers = registry(vector=ListProvider([]))
    with pytest.raises(RetrievalError) as info:
        providers.resolve({"name": "nope"})
    assert info.value.code == "RETRIEVAL_TARGET_NOT_FOUND"
    for strategy in ("bm25", "rag"):
        with pytest.raises(RetrievalError) as info:
            providers.resolve({"name": "kb"}, strategy)
        assert info.value.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"
    with pytest.raises(RetrievalError) as info:
        RetrievalTargetRegistry({"kb": {"default_strategy": "rag", "providers": {"rag": ListProvider([])}}})
    assert info.value.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"
    with pytest.raises(RetrievalError) as info:
        RetrievalTargetRegistry({"kb": {"default_strategy": "bm25", "providers": {"vector": ListProvider([])}}})
    assert info.value.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"
    with pytest.raises(RetrievalError) as info:
        RetrievalTargetRegistry({"kb": {"default_strategy": "x", "providers": {"x": object()}}})
    assert info.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE"
    for bad in ([], {"kb": "not a binding"}, {"kb": None}):
        with pytest.raises(RetrievalError) as info:
            RetrievalTargetRegistry(bad)  # type: ignore[arg-type]
        assert info.value.code == "RETRIEVAL_INVALID_INPUT"


class _AnyStrategyRegistry:
    """A custom registry that would hand out a provider for any strategy, ``rag`` included."""

    def __init__(self) -> None:
        self.provider = ListProvider(docs("a"))

    def resolve(self, target: Any, strategy: str | None = None) -> ListProvider:
        return self.provider


async def test_rag_strategy_refused_for_any_registry() -> None:
    """RET-3/RET-5: ``rag`` is never a strategy, even when a custom registry would resolve it; the
    provider is not called (seed: RETRIEVAL_STRATEGY_UNSUPPORTED "或使用 rag 策略")."""
    custom = _AnyStrategyRegistry()
    result = await create_retrieval(custom).search({**REQUEST, "strategy": "rag"})
    assert result.status == "error" and result.error is not None
    assert result.error.code == "RETRIEVAL_STRATEGY_UNSUPPORTED" and custom.provider.calls == []
    runtime = create_ditto(workers=[create_retrieval_worker(custom)])
    routed = await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, "strategy": "rag"})
    assert routed.error is not None and routed.error.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"
    assert (await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, "strategy": "vector"})).status == "success"
    await runtime.close()


async def test_registry_is_a_snapshot() -> None:
    """RET-3: bindings are copied at construction; later edits of the caller's dict change nothing."""
    bindings: dict[str, Any] = {"kb": {"default_strategy": "v", "providers": {"v": ListProvider([])}}}
    providers = RetrievalTargetRegistry(bindings)
    bindings["other"] = bindings.pop("kb")
    assert providers.resolve({"name": "kb"}).strategy == "v"
    with pytest.raises(RetrievalError):
        providers.resolve({"name": "other"})


async def test_sdk_errors_become_node_results() -> None:
    """RET-2/RET-5: the SDK returns NodeResults for every failure; backend text is hidden."""
    cases: list[tuple[Any, str, str]] = [
        (FailingProvider(RuntimeError("password=hunter2")), "error", "RETRIEVAL_BACKEND_ERROR"),
        (FailingProvider(RetrievalError("RETRIEVAL_PERMISSION_DENIED", "tenant")), "error",
         "RETRIEVAL_PERMISSION_DENIED"),
        (FailingProvider(RetrievalError("RETRIEVAL_TIMEOUT", "slow")), "timeout", "RETRIEVAL_TIMEOUT"),
        (FailingProvider(TimeoutError("db host 10.0.0.7")), "error", "RETRIEVAL_BACKEND_ERROR"),
    ]
    for provider, status, code in cases:
        result = await create_retrieval(registry(x=provider)).search(REQUEST)
        assert (result.status, result.error and result.error.code) == (status, code)
        assert result.error is not None and "hunter2" not in result.error.message
        assert "10.0.0.7" not in result.error.message
    result = await create_retrieval(registry(x=ListProvider([]))).search({**REQUEST, "target": {"name": "zz"}})
    assert result.error is not None and result.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
    result = await create_retrieval(registry(x=ListProvider([]))).search({**REQUEST, "strategy": "rag"})
    assert result.error is not None and result.error.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"


class _NoSearchRegistry:
    def resolve(self, target: Any, strategy: str | None = None) -> Any:
        return object()


async def test_provider_unavailable() -> None:
    """RET-5: a custom registry returning an object without search → RETRIEVAL_PROVIDER_UNAVAILABLE."""
    result = await create_retrieval(_NoSearchRegistry()).search(REQUEST)  # type: ignore[arg-type]
    assert result.error is not None and result.error.code == "RETRIEVAL_PROVIDER_UNAVAILABLE"
    with pytest.raises(RetrievalError) as not_a_registry:
        create_retrieval(object())  # type: ignore[arg-type]
    assert not_a_registry.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE"


async def test_sdk_cancel_with_aborted_signal() -> None:
    """RET-2/RET-5: an aborted signal in context → status cancelled, RETRIEVAL_CANCELLED; provider not called."""
    provider = ListProvider(docs("a"))
    retrieval = create_retrieval(registry(custom=provider), defaults={"searchLimit": 5})
    controller = AbortController()
    controller.abort()
    result = await retrieval.search({**REQUEST, "limit": 5}, {"searchLimit": 10}, {"signal": controller.signal})
    assert result.status == "cancelled" and result.error is not None
    assert result.error.code == "RETRIEVAL_CANCELLED"
    assert provider.calls == []


async def test_sdk_cancel_midway_stops_provider() -> None:
    """RET-5: cancelling during the provider call stops the provider (no early release, no leak)."""
    provider = SlowProvider(5.0)
    retrieval = create_retrieval(registry(custom=provider))
    controller = AbortController()
    task = asyncio.create_task(retrieval.search(REQUEST, None, RetrievalExecutionContext(signal=controller.signal)))
    await provider.started.wait()
    controller.abort()
    result = await task
    assert result.status == "cancelled" and result.error is not None
    assert result.error.code == "RETRIEVAL_CANCELLED"
    assert provider.cancelled and not provider.finished
    assert provider.signals == [controller.signal]


async def test_sdk_deadline_signal_is_timeout() -> None:
    """RET-5: a deadline signal (CancelSignal.timeout) ends as status timeout, RETRIEVAL_TIMEOUT."""
    provider = SlowProvider(5.0)
    result = await create_retrieval(registry(custom=provider)).search(
        REQUEST, context={"signal": CancelSignal.timeout(0.05)})
    assert result.status == "timeout" and result.error is not None and result.error.code == "RETRIEVAL_TIMEOUT"
    assert provider.cancelled


async def test_limit_precedence_sdk() -> None:
    """RET-2: limit = request → factory defaults → runtime_defaults (YAML) → 10; context.defaults replaced."""
    provider = ListProvider(docs(*[str(i) for i in range(30)]))
    plain = create_retrieval(registry(custom=provider))
    await plain.search(REQUEST)
    assert provider.calls[-1][0].limit == 10
    await plain.search(REQUEST, {"searchLimit": 7})
    assert provider.calls[-1][0].limit == 7
    tuned = create_retrieval(registry(custom=provider), defaults={"search_limit": 4, "hybrid": {"rrfK": 5}})
    result = await tuned.search(REQUEST, {"searchLimit": 7, "hybrid": {"rrf_k": 9, "candidate_limit": 11}},
                                {"defaults": {"searchLimit": 99}})
    assert provider.calls[-1][0].limit == 4
    assert result.output is not None and len(result.output.candidates) == 4
    context = provider.calls[-1][1]
    assert context is not None and context.defaults.hybrid is not None
    assert (context.defaults.hybrid.rrf_k, context.defaults.hybrid.candidate_limit) == (5, 11)
    await tuned.search({**REQUEST, "limit": 2})
    assert provider.calls[-1][0].limit == 2


async def test_worker_single_node_and_limit_precedence(tmp_path: Path) -> None:
    """RET-2/RET-8: one leaf RETRIEVAL.SEARCH; limit request → worker defaults → YAML → 10."""
    (tmp_path / "ditto.yaml").write_text(
        "workers:\n  retrieval:\n    searchLimit: 6\n    hybrid:\n      candidateLimit: 40\n")
    config = load_runtime_config_file(tmp_path / "ditto.yaml", {})
    provider = ListProvider(docs(*[str(i) for i in range(30)]))
    worker = create_retrieval_worker(providers=registry(custom=provider), config=config, concurrency=2)
    assert worker.type == "RETRIEVAL" and tuple(worker.nodes) == ("RETRIEVAL.SEARCH",)
    assert retrieval_search_node.type == "RETRIEVAL.SEARCH"
    runtime = create_ditto(config=config, workers=[worker])
    result = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert result.status == "success" and len(result.output.candidates) == 6
    context = provider.calls[-1][1]
    assert context is not None and context.defaults.hybrid is not None
    assert context.defaults.hybrid.candidate_limit == 40
    with_defaults = create_retrieval_worker(registry(custom=provider), defaults=RetrievalDefaults(search_limit=3),
                                            config=config.retrieval)
    runtime2 = create_ditto(workers=[with_defaults])
    assert len((await runtime2.invoke("RETRIEVAL.SEARCH", REQUEST)).output.candidates) == 3
    assert len((await runtime2.invoke("RETRIEVAL.SEARCH", {**REQUEST, "limit": 8})).output.candidates) == 8
    bare = create_ditto(workers=[create_retrieval_worker(registry(custom=provider))])
    assert len((await bare.invoke("RETRIEVAL.SEARCH", REQUEST)).output.candidates) == 10
    for rt in (runtime, runtime2, bare):
        await rt.close()


async def test_worker_errors_and_signal() -> None:
    """RET-2/RET-5: worker failures are NodeResults with the same codes; ctx.signal reaches the provider."""
    slow = SlowProvider(5.0)
    runtime = create_ditto(workers=[create_retrieval_worker(registry(custom=slow), concurrency=1)])
    bad = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {}, "target": {"name": "kb"}})
    assert bad.status == "error" and bad.error is not None and bad.error.code == "RETRIEVAL_INVALID_INPUT"
    controller = AbortController()
    task = asyncio.create_task(runtime.invoke("RETRIEVAL.SEARCH", REQUEST, signal=controller.signal))
    await slow.started.wait()
    busy = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert busy.status == "rejected"  # concurrency 1: the slot stays taken while the provider runs
    controller.abort()
    result = await task
    assert result.status == "cancelled"
    assert slow.cancelled and slow.signals[0] is not None
    again = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST, timeout=0.05)
    assert again.status == "timeout"
    await runtime.close()
    failing = create_ditto(workers=[create_retrieval_worker(
        registry(custom=FailingProvider(RuntimeError("secret dsn"))))])
    result = await failing.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert result.error is not None and result.error.code == "RETRIEVAL_BACKEND_ERROR"
    assert "secret" not in result.error.message


async def test_descriptor_define_reuses_sdk() -> None:
    """RET-2: retrieval_search_node.define builds a definition without registering; the handler can reuse
    the SDK's validation and NodeResult wrapping."""
    retrieval = create_retrieval(registry(custom=ListProvider(docs("a"))))

    async def handler(input: Any) -> Any:
        result = await retrieval.search(input)
        if result.status != "success":
            assert result.error is not None
            raise RetrievalError(result.error.code, result.error.message)
        return result.output

    definition = retrieval_search_node.define("RETRIEVAL", handler)
    runtime = create_ditto(workers=[definition])
    ok = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert ok.status == "success" and ok.output.candidates[0].id == "a"
    bad = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": 1}, "target": {"name": ""}})
    assert bad.error is not None and bad.error.code == "RETRIEVAL_INVALID_INPUT"
    await runtime.close()


class CleanupProvider:
    """Takes 0.2 s to clean up after being cancelled (like closing a cursor)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cleaning = asyncio.Event()
        self.cleaned = False

    async def search(self, input: Any, context: Any = None) -> Any:
        self.started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            self.cleaning.set()
            await asyncio.sleep(0.2)
            self.cleaned = True
            raise
        return {"candidates": [], "target": {"name": "kb"}}


async def test_no_early_release_of_the_slot() -> None:
    """RET-5/RET-2: a cancelled call keeps its concurrency slot until the provider has really stopped
    (no Promise.race-style release); the SDK answers only after the provider's cleanup."""
    provider = CleanupProvider()
    runtime = create_ditto(workers=[create_retrieval_worker(registry(custom=provider), concurrency=1)])
    controller = AbortController()
    task = asyncio.create_task(runtime.invoke("RETRIEVAL.SEARCH", REQUEST, signal=controller.signal))
    await provider.started.wait()
    controller.abort()
    await provider.cleaning.wait()
    assert (await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)).status == "rejected"
    assert (await task).status == "cancelled" and provider.cleaned
    await runtime.close()
    sdk_provider = CleanupProvider()
    sdk = create_retrieval(registry(custom=sdk_provider))
    sdk_controller = AbortController()
    sdk_task = asyncio.create_task(sdk.search(REQUEST, context={"signal": sdk_controller.signal}))
    await sdk_provider.started.wait()
    sdk_controller.abort()
    result = await sdk_task
    assert result.status == "cancelled" and sdk_provider.cleaned


async def test_seed_options_object_form() -> None:
    """RET-2: the seed's single options object is accepted by both factories; unknown keys refused."""
    provider = ListProvider(docs("a", "b", "c"))
    providers = registry(custom=provider)
    worker = create_retrieval_worker({"providers": providers, "concurrency": 8, "defaults": {"searchLimit": 2}})
    assert worker.concurrency == 8
    runtime = create_ditto(workers=[worker])
    assert len((await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)).output.candidates) == 2
    await runtime.close()
    sdk = create_retrieval({"providers": providers, "defaults": {"search_limit": 1}})
    assert len((await sdk.search(REQUEST)).output.candidates) == 1  # type: ignore[union-attr]
    with pytest.raises(RetrievalError) as info:
        create_retrieval({"providers": providers, "bogus": 2})
    assert info.value.code == "RETRIEVAL_INVALID_INPUT"
    with pytest.raises(RetrievalError) as info:
        create_retrieval_worker({"defaults": {}})
    assert info.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE"
