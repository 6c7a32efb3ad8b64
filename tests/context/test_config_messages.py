"""CONTEXT options: every construction refusal's message, and each option reaching the client or worker
(CX-2, CX-3, CX-8, CX-10, CX-16).

The refusals pin code and exact message; the plumbing cases build a client or worker from each kind of input
(dict, ``ContextOptions``, ``RuntimeConfig``, YAML sections, keywords) and compare every resulting option.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from ditto import create_ditto
from ditto.config import ContextWorkerConfig, load_runtime_config
from ditto.contracts import ContextPolicy
from ditto.errors import ConfigError
from ditto.worker.context import (
    ContextError,
    ContextOptions,
    ContextServices,
    InMemoryContextStore,
    InProcessContextQueue,
    RedisContextStore,
    context_options_from_config,
    create_context,
    create_context_execution,
    create_context_operation_queue,
    create_context_redis_client,
    create_context_worker,
    create_in_memory_context_store,
)


def _refusal(call: Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        call()
    return caught.value.code, caught.value.message


def test_option_refusals_name_the_option() -> None:
    """CX-2/CX-8: each bad option of create_context is INVALID_INPUT naming the option and what it needs."""
    store = create_in_memory_context_store()
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: create_context("x"), "options must be an object"),  # type: ignore[arg-type]
        (lambda: create_context({"polcy": {}}), "options has an unknown field 'polcy'"),
        (lambda: create_context(policy=5), "policy must be an object"),  # type: ignore[arg-type]
        (lambda: create_context(policy={"maxItemz": 3}), "policy has an unknown field 'maxItemz'"),
        (lambda: create_context(policy={"maxTokens": -1}), "policy.maxTokens: Input should be greater than or "
                                                           "equal to 1"),
        (lambda: create_context(services=[1]), "services must be an object"),  # type: ignore[arg-type]
        (lambda: create_context(services={"x": 1}), "services has an unknown field 'x'"),
        (lambda: create_context(services={"selector": 3}), "services.selector must provide select"),
        (lambda: create_context(services={"stateStore": lambda scope: None}),
         "services.stateStore must provide get, compare_and_set"),
        (lambda: create_context(services={"state_store": {"get": lambda scope: None}}),
         "services.stateStore must provide get, compare_and_set"),
        (lambda: create_context(services={"tokenEstimator": {"estimate": 1}}),
         "services.tokenEstimator must provide estimate"),
        (lambda: create_context(redis=5), "redis must be an object"),  # type: ignore[arg-type]
        (lambda: create_context(redis={"client": Redis(), "ttl": 1}), "redis has an unknown field 'ttl'"),
        (lambda: create_context(redis={"ttlMs": 5}), "redis.client is required"),
        (lambda: create_context(redis={"client": Redis()}, services={"stateStore": store}),
         "pass either redis or services.stateStore, not both"),
        (lambda: create_context(redis={"client": Redis(), "ttlMs": 0}),
         "ttlMs must be an integer from 1 to 2147483647"),
        (lambda: create_context({"concurrency": 2}), "servicesFactory and concurrency are worker options"),
        (lambda: create_context_worker(concurrency=0), "concurrency must be a positive integer"),
        (lambda: create_context_worker(services_factory=3),  # type: ignore[arg-type]
         "servicesFactory must be a function"),
    ]
    for call, message in cases:
        assert _refusal(call) == ("INVALID_INPUT", message), message


def test_redis_url_helper() -> None:
    """CX-16: the Redis URL comes from DITTO_WORKER_CONTEXT_REDIS_URL; unset or empty is CONFIG_MISSING_ENV
    with a message naming the variable; ``cluster=True`` makes a cluster client (no connection is made)."""
    for env in ({}, {"DITTO_WORKER_CONTEXT_REDIS_URL": ""}):
        with pytest.raises(ConfigError) as caught:
            create_context_redis_client(env)
        assert (caught.value.code, caught.value.message) == (
            "CONFIG_MISSING_ENV", "DITTO_WORKER_CONTEXT_REDIS_URL is not set")
    env = {"DITTO_WORKER_CONTEXT_REDIS_URL": "redis://127.0.0.1:1/2"}
    plain = create_context_redis_client(env)
    assert type(plain) is Redis and plain.connection_pool.connection_kwargs["db"] == 2
    cluster = create_context_redis_client({"DITTO_WORKER_CONTEXT_REDIS_URL": "redis://127.0.0.1:1"}, cluster=True)
    assert isinstance(cluster, RedisCluster)


async def test_options_reach_the_client_from_each_kind_of_input() -> None:
    """CX-2/CX-10: policy, services and redis options given as ContextOptions, a dict, a RuntimeConfig or
    keywords reach the client; keywords override the options object; redis ttlMs/keyPrefix reach the store."""
    from_model = create_context(ContextOptions(policy={"maxItems": 3}))
    assert from_model.execution.policy.max_items == 3
    from_dict = create_context({"policy": {"maxItems": 3}}, policy={"maxItems": 4})
    assert from_dict.execution.policy.max_items == 4
    config = load_runtime_config({"workers": {"context": {"policy": {"maxTokens": 77}}}}, {})
    assert create_context(config).execution.policy.max_tokens == 77
    redis = create_context(redis={"client": Redis(), "ttlMs": 4321, "keyPrefix": "k:"})
    store = redis.execution.services.state_store
    assert isinstance(store, RedisContextStore) and (store.ttl_ms, store.key_prefix) == (4321, "k:")
    services = create_context(services={"selector": lambda request: None,
                                        "stateStore": {"get": lambda scope: None,
                                                       "compare_and_set": lambda *args: None}})
    assert repr(services.execution.services.selector) == "<service select>"
    assert repr(services.execution.services.state_store) == "<service get, compare_and_set>"
    execution = create_context_execution({"maxItems": 2}, {"tokenEstimator": lambda content: 1})
    assert execution.policy.max_items == 2 and execution.services.token_estimator is not None


async def test_worker_options_reach_the_definition() -> None:
    """CX-1/CX-2: create_context_worker passes concurrency to the definition and its policy to every call,
    from keywords or a dict."""
    worker = create_context_worker({"policy": {"maxItems": 1}}, concurrency=3)
    assert worker.type == "CONTEXT" and worker.concurrency == 3
    assert create_context_worker(concurrency=None).concurrency is None
    runtime = create_ditto(workers=[worker])
    try:
        result = await runtime.invoke("CONTEXT.LOAD", {"sources": [{"id": "a", "content": 1},
                                                                   {"id": "b", "content": 2}]})
        assert result.status == "error" and result.error is not None
        assert result.error.code == "ITEM_LIMIT_EXCEEDED"
    finally:
        await runtime.close()


def test_yaml_sections_become_options_field_by_field() -> None:
    """CX-16: context_options_from_config turns each YAML section into its option: cache + a Redis client →
    redis (only the fields given), local_cache → an in-memory store (only without Redis), queue → a queue;
    explicit services win and concurrency passes through."""
    section = ContextWorkerConfig.model_validate({"policy": {"maxItems": 9}, "cache": {"ttlMs": 1234},
                                                  "localCache": {"ttlMs": 500, "maxEntries": 3},
                                                  "queue": {"maxPending": 7}})
    client = Redis()
    shared = context_options_from_config(section, redis_client=client, concurrency=4)
    assert shared.redis == {"client": client, "ttl_ms": 1234}  # no keyPrefix given: the store's default
    assert shared.concurrency == 4 and isinstance(shared.policy, ContextPolicy) and shared.policy.max_items == 9
    assert isinstance(shared.services, ContextServices)
    assert shared.services.state_store is None  # Redis, not the local cache
    assert isinstance(shared.services.operation_queue, InProcessContextQueue)
    assert shared.services.operation_queue.max_pending == 7
    local = context_options_from_config(section)
    assert local.redis is None and local.concurrency is None and isinstance(local.services, ContextServices)
    store = local.services.state_store
    assert isinstance(store, InMemoryContextStore) and (store.ttl_ms, store.max_entries) == (500, 3)
    mine_store, mine_queue = create_in_memory_context_store(), create_context_operation_queue()
    explicit = context_options_from_config(section, services={"stateStore": mine_store,
                                                              "operationQueue": mine_queue})
    assert isinstance(explicit.services, ContextServices)
    assert explicit.services.state_store is mine_store and explicit.services.operation_queue is mine_queue
    bare = context_options_from_config(None)
    assert (bare.policy, bare.services, bare.redis, bare.concurrency) == (None, None, None, None)
    no_cache = context_options_from_config(ContextWorkerConfig(), redis_client=client)
    assert no_cache.redis == {"client": client} and no_cache.services is None
    config = load_runtime_config({"workers": {"context": {"cache": {"keyPrefix": "y:"}}}}, {})
    assert context_options_from_config(config, redis_client=client).redis == {"client": client, "key_prefix": "y:"}


class _PlainEstimator:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def estimate(self, content: Any) -> int:
        self.calls.append((content,))
        return 1


class _OptionsEstimator:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def estimate(self, content: Any, options: Any) -> int:
        self.calls.append((content, options))
        return 1


async def test_token_estimator_arity_and_answers() -> None:
    """CX-3: an estimator is called with the call options only when it takes them (methods, functions and
    ``*args`` alike), and an answer that is not a non-negative safe integer is INVALID_PROVIDER_OUTPUT."""
    sources = {"sources": [{"id": "a", "content": "alpha"}, {"id": "b", "content": "bravo"}]}
    plain, with_options = _PlainEstimator(), _OptionsEstimator()
    seen: list[int] = []

    def variadic(*args: Any) -> int:
        seen.append(len(args))
        return 1

    for estimator in (plain, with_options, variadic, len):
        client = create_context(services={"tokenEstimator": estimator})
        context = await client.load(sources)
        chosen = await client.select({"context": context, "purpose": "infer", "maxTokens": 100})
        assert sorted(chosen.selected_item_ids) == ["a", "b"]
    assert sorted(plain.calls) == [("alpha",), ("bravo",)]
    assert sorted(call[0] for call in with_options.calls) == ["alpha", "bravo"]
    assert all(call[1] is not None and hasattr(call[1], "signal") for call in with_options.calls)
    assert seen == [2, 2]
    for answer in (-1, True, 1.5, 2**53, "3"):
        client = create_context(services={"tokenEstimator": lambda content, answer=answer: answer})
        context = await client.load(sources)
        with pytest.raises(ContextError) as caught:
            await client.select({"context": context, "purpose": "infer", "maxTokens": 100})
        assert (caught.value.code, caught.value.message) == (
            "INVALID_PROVIDER_OUTPUT", "the token estimator must return a non-negative safe integer"), answer
    for answer in (0, 2**53 - 1):
        client = create_context(services={"tokenEstimator": lambda content, answer=answer: answer})
        context = await client.load(sources)
        assert len((await client.select({"context": context, "purpose": "infer"})).selected_item_ids) == 2
