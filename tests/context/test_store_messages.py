"""The state stores' refusals with their public messages, and their options (CX-10, CX-11, CX-12).

A caller of a store (directly, or through a scoped CONTEXT call) reads these messages; each case pins the code
and the exact text, so a refusal raised from the wrong branch or naming the wrong thing is caught. The option
cases check that each way of passing an option (dict, camelCase or snake_case, keyword) reaches the store.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from redis.asyncio import Redis

from ditto.contracts import Context
from ditto.worker.context import (
    ContextError,
    context_scope_key,
    create_context,
    create_in_memory_context_store,
    create_redis_context_store,
)
from tests.support.redis_server import RedisServer

SCOPE = {"sessionId": "msg"}


def _argument_refusal(call: Any) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        call()
    assert isinstance(caught.value, ValueError)  # a constructor given bad options raises InvalidArgumentError
    return caught.value.code, caught.value.message


async def _refusal(awaitable: Any) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        await awaitable
    return caught.value.code, caught.value.message


def _document(items: Any) -> str:
    return json.dumps({"version": "v1", "context": {"items": items}})


NO_ITEMS = "the stored context is corrupt: context.items is missing"
CORRUPT = [
    ("not json", "the stored context is not valid JSON"),
    ('{"version":"v1","context":{"items":[]},"n":NaN}', "the stored context is not valid JSON"),
    ("[1]", "the stored context has an unexpected shape"),
    (json.dumps({"version": "v1"}), "the stored context has an unexpected shape"),
    (json.dumps({"version": "", "context": {"items": []}}), "the stored context has no version"),
    (json.dumps({"version": 7, "context": {"items": []}}), "the stored context has no version"),
    (json.dumps({"version": "v1", "context": {"items": {}}}), NO_ITEMS),
    (json.dumps({"version": "v1", "context": {"other": []}}), NO_ITEMS),
    (_document([{"id": "a"}]), "the stored context is corrupt: an item has an unexpected shape"),
    (_document([["a"]]), "the stored context is corrupt: an item has an unexpected shape"),
    (_document([{"id": "a", "content": 1, "x": 1}]), "the stored context is corrupt: an item has an unexpected shape"),
    (_document([{"id": "", "content": 1}]), "the stored context is corrupt: an item id is missing"),
    (_document([{"content": 1}]), "the stored context is corrupt: an item id is missing"),
    (_document([{"id": "a", "content": 1, "metadata": [1]}]),
     "the stored context is corrupt: an item's metadata is not an object"),
    (_document([{"id": "a", "content": 1}, {"id": "a", "content": 2}]),
     "the stored context is corrupt: an item id appears twice"),
    ('{"version":"v1","context":{"items":[{"id":"a","content":"\\ud800"}]}}',
     "stored content is not valid JSON: strings must be valid Unicode (no lone surrogates)"),
    ('{"version":"v1","context":{"items":[{"id":"a","content":1,"metadata":{"k":"\\udfff"}}]}}',
     "stored metadata.k is not valid JSON: strings must be valid Unicode (no lone surrogates)"),
    (_document([{"id": "a", "content": 1, "source": {"uri": ""}}]), "stored source.uri must be a non-empty string"),
    (_document([{"id": "a", "content": 1, "source": {"mediaType": "t"}}]), "stored source.uri is required"),
]


@pytest.mark.parametrize(("raw", "message"), CORRUPT)
async def test_corrupt_documents_name_what_is_wrong(redis_client: Redis, raw: str, message: str) -> None:
    """CX-10/CX-11: each kind of corrupt stored document is INVALID_STATE with a message saying what is
    wrong (and never Redis's own text)."""
    store = create_redis_context_store(redis_client)
    await redis_client.set(store.key(SCOPE), raw)
    assert await _refusal(store.get(SCOPE)) == ("INVALID_STATE", message)


async def test_redis_store_conflicts_wrong_type_and_errors(redis_client: Redis, redis_proc: RedisServer) -> None:
    """CX-11: a failed CAS is STATE_CONFLICT, a key of another Redis type is INVALID_STATE, any other Redis
    error (here: a database index the server does not have) is STATE_STORE_UNAVAILABLE; a bad expected
    version passed to the store directly is INVALID_INPUT."""
    store = create_redis_context_store(redis_client)
    conflict = ("STATE_CONFLICT", "the scope's version changed, expired or already exists")
    first = await store.compare_and_set(SCOPE, None, Context())
    assert await _refusal(store.compare_and_set(SCOPE, None, Context())) == conflict
    assert await _refusal(store.compare_and_set(SCOPE, "other", Context())) == conflict
    for bad in ("", 5):
        assert await _refusal(store.compare_and_set(SCOPE, bad, Context())) == (  # type: ignore[arg-type]
            "INVALID_INPUT", "expectedVersion must be a non-empty string or None")
    assert (await store.compare_and_set(SCOPE, first.version, Context())).version != first.version
    await redis_client.rpush(store.key({"sessionId": "list"}), "x")
    wrong_type = ("INVALID_STATE", "the stored context is not a JSON string")
    assert await _refusal(store.get({"sessionId": "list"})) == wrong_type
    assert await _refusal(store.compare_and_set({"sessionId": "list"}, "v", Context())) == wrong_type
    missing_db = Redis.from_url(redis_proc.url + "/99")
    try:
        broken = create_redis_context_store(missing_db)
        unavailable = ("STATE_STORE_UNAVAILABLE", "the context state store (Redis) is unavailable")
        assert await _refusal(broken.get(SCOPE)) == unavailable
        assert await _refusal(broken.compare_and_set(SCOPE, None, Context())) == unavailable
    finally:
        await missing_db.aclose()


async def test_redis_store_reads_string_replies(redis_proc: RedisServer) -> None:
    """CX-11: a client created with ``decode_responses=True`` answers GET with ``str``; the store reads those
    documents the same as bytes, from a second store instance too."""
    client = Redis.from_url(redis_proc.url, decode_responses=True)
    try:
        written = await create_redis_context_store(client).compare_and_set(
            {"sessionId": "text"}, None, {"items": [{"id": "é", "content": {"k": "ü"}}]})
        read = await create_redis_context_store(client).get({"sessionId": "text"})
        assert read is not None and read.version == written.version and read.context == written.context
    finally:
        await client.aclose()


async def test_redis_store_options_reach_the_store(redis_client: Redis) -> None:
    """CX-10: ttlMs and keyPrefix given as a dict (camelCase or snake_case) or as keywords (which win) set the
    store's TTL and key; a bad option is INVALID_INPUT naming it."""
    default = create_redis_context_store(redis_client)
    assert (default.ttl_ms, default.key_prefix) == (3_600_000, "ditto:context:")
    for options in ({"ttlMs": 5000, "keyPrefix": "app:"}, {"ttl_ms": 5000, "key_prefix": "app:"}):
        store = create_redis_context_store(redis_client, options)
        assert (store.ttl_ms, store.key_prefix) == (5000, "app:")
        assert store.key(SCOPE) == context_scope_key(SCOPE, "app:")
    both = create_redis_context_store(redis_client, options={"ttlMs": 5000, "keyPrefix": "app:"}, ttl_ms=7000,
                                      key_prefix="kw:")
    assert (both.ttl_ms, both.key_prefix) == (7000, "kw:")
    positional = create_redis_context_store(redis_client, 6000, "pos:")  # CX-11's own order
    assert (positional.ttl_ms, positional.key_prefix) == (6000, "pos:")
    await both.compare_and_set(SCOPE, None, Context())
    assert 5000 < await redis_client.pttl(context_scope_key(SCOPE, "kw:")) <= 7000
    assert _argument_refusal(lambda: create_redis_context_store(redis_client, {"ttl": 1})) == (
        "INVALID_INPUT", "options has an unknown field 'ttl'")
    assert _argument_refusal(lambda: create_redis_context_store(redis_client, {"ttlMs": 0})) == (
        "INVALID_INPUT", "ttlMs must be an integer from 1 to 2147483647")
    assert _argument_refusal(lambda: create_redis_context_store(redis_client, "x")) == (  # type: ignore[arg-type]
        "INVALID_INPUT", "ttlMs must be an integer from 1 to 2147483647")

    class GetOnly:
        async def get(self, name: str) -> Any:
            return None

    class EvalOnly:
        def eval(self, script: str, numkeys: int, *args: Any) -> Any:
            return 1

    for client in (GetOnly(), EvalOnly()):
        assert _argument_refusal(lambda client=client: create_redis_context_store(client)) == (
            "INVALID_INPUT", "the Redis store needs a client with get() and eval()")


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_in_memory_store_refusals_and_options() -> None:
    """CX-12: the in-memory store's argument refusals and conflicts have fixed messages; options given as a
    dict (with its own clock) or as keywords reach the store."""
    bad: list[tuple[dict[str, Any], str]] = [
        ({"ttl_ms": 0}, "ttlMs must be an integer from 1 to 2147483647"),
        ({"ttl_ms": 1.5}, "ttlMs must be an integer from 1 to 2147483647"),
        ({"max_entries": 0}, "maxEntries must be a positive safe integer"),
        ({"max_entries": True}, "maxEntries must be a positive safe integer"),
        ({"now": 5}, "now must be a function returning milliseconds"),
    ]
    for options, message in bad:
        assert _argument_refusal(lambda options=options: create_in_memory_context_store(**options)) == (
            "INVALID_INPUT", message)
    assert _argument_refusal(lambda: create_in_memory_context_store({"size": 1})) == (
        "INVALID_INPUT", "options has an unknown field 'size'")
    default = create_in_memory_context_store()
    assert (default.ttl_ms, default.max_entries) == (3_600_000, 1000)
    clock = Clock(100.0)
    for options in ({"ttlMs": 50, "maxEntries": 3, "now": clock}, {"ttl_ms": 50, "max_entries": 3, "now": clock}):
        store = create_in_memory_context_store(options)
        assert (store.ttl_ms, store.max_entries) == (50, 3)
        await store.compare_and_set(SCOPE, None, Context())
        clock.now = 149.0
        assert await store.get(SCOPE) is not None
        clock.now = 150.0  # the dict's clock is the one the store reads: expired exactly at the TTL
        assert await store.get(SCOPE) is None
        clock.now = 100.0
    keywords = create_in_memory_context_store(options={"ttlMs": 50, "maxEntries": 3}, ttl_ms=70, max_entries=4,
                                              now=clock)
    assert (keywords.ttl_ms, keywords.max_entries) == (70, 4)
    positional = create_in_memory_context_store(80, 5, clock)  # CX-12's own order
    assert (positional.ttl_ms, positional.max_entries) == (80, 5)
    assert _argument_refusal(lambda: create_in_memory_context_store({"ttlMs": 1}, options={"ttlMs": 2})) == (
        "INVALID_INPUT", "options were given twice")
    store = create_in_memory_context_store(now=clock)
    first = await store.compare_and_set(SCOPE, None, Context())
    assert await _refusal(store.compare_and_set(SCOPE, None, Context())) == (
        "STATE_CONFLICT", "the scope already has a context")
    assert await _refusal(store.compare_and_set(SCOPE, "other", Context())) == (
        "STATE_CONFLICT", "the scope's version changed or expired")
    assert await _refusal(store.compare_and_set({"sessionId": "none"}, first.version, Context())) == (
        "STATE_CONFLICT", "the scope's version changed or expired")
    for version in ("", 3):
        assert await _refusal(store.compare_and_set(SCOPE, version, Context())) == (  # type: ignore[arg-type]
            "INVALID_INPUT", "expectedVersion must be a non-empty string or None")


async def test_a_full_in_memory_store_drops_expired_entries_before_live_ones() -> None:
    """CX-12: when a new scope needs room, expired entries go first; only then the least recently used."""
    clock = Clock()
    store = create_in_memory_context_store(ttl_ms=100, max_entries=2, now=clock)
    await store.compare_and_set({"sessionId": "old"}, None, Context())
    clock.now = 50.0
    await store.compare_and_set({"sessionId": "live"}, None, Context())
    await store.get({"sessionId": "old"})  # "old" is now the most recently used, but it expires first
    clock.now = 100.0  # "old" expires exactly now
    await store.compare_and_set({"sessionId": "new"}, None, Context())
    assert len(store) == 2
    assert await store.get({"sessionId": "live"}) is not None and await store.get({"sessionId": "new"}) is not None
    client = create_context(services={"stateStore": store})
    assert (await client.load({"scope": {"sessionId": "new"}})).items == ()


async def test_the_default_clock_counts_milliseconds() -> None:
    """CX-12: without an injected clock the TTL is in wall-clock milliseconds: a 5 ms entry is gone once
    50 ms have passed, and a one-minute entry is still there. (The wait is on the real clock the store reads;
    there is no event to await instead.)"""
    short = create_in_memory_context_store(ttl_ms=5)
    long = create_in_memory_context_store(ttl_ms=60_000)
    for store in (short, long):
        await store.compare_and_set(SCOPE, None, Context())
    await asyncio.sleep(0.05)  # ten times the short TTL
    assert await short.get(SCOPE) is None
    assert await long.get(SCOPE) is not None


async def test_redis_store_sends_the_script_by_hash_and_logs_failures(
        redis_client: Redis, redis_proc: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    """CX-11: with a client that has evalsha the CAS script is sent by hash (EVALSHA, not the script text
    each time); a client whose evalsha is not callable is used through eval; a Redis failure is logged
    once, as a warning with its traceback, while the caller only gets the fixed message."""
    store = create_redis_context_store(redis_client)
    await store.compare_and_set({"sessionId": "warm"}, None, Context())  # loads the script if needed
    await redis_client.config_resetstat()
    for n in range(3):
        await store.compare_and_set({"sessionId": f"hash{n}"}, None, Context())
    stats = await redis_client.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] == 3 and "cmdstat_eval" not in stats

    class NotCallableEvalsha:
        evalsha = "not a method"

        async def get(self, name: str) -> Any:
            return await redis_client.get(name)

        async def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any:
            return await redis_client.eval(script, numkeys, *keys_and_args)

    adapted = create_redis_context_store(NotCallableEvalsha())
    assert (await adapted.compare_and_set({"sessionId": "adapted"}, None, Context())).context == Context()
    missing_db = Redis.from_url(redis_proc.url + "/99")
    try:
        with caplog.at_level(logging.WARNING, logger="ditto.worker.context.stores"), pytest.raises(ContextError):
            await create_redis_context_store(missing_db).get(SCOPE)
        records = [r for r in caplog.records if r.name == "ditto.worker.context.stores"]
        assert len(records) == 1 and records[0].levelno == logging.WARNING
        assert records[0].getMessage() == "Redis context store call failed"
        assert records[0].exc_info is not None and "DB index is out of range" in str(records[0].exc_info[1])
    finally:
        await missing_db.aclose()
