"""Bad factory options raise ContextArgumentError: ContextError INVALID_INPUT + InvalidArgumentError (CX-2, CX-8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ditto.errors import InvalidArgumentError
from ditto.worker.context import (
    ContextArgumentError,
    ContextError,
    create_context,
    create_context_execution,
    create_context_operation_queue,
    create_context_worker,
    create_in_memory_context_store,
    create_rag_strategy,
    create_redis_context_store,
)

from .helpers import error_code

MISTAKES: list[tuple[str, Callable[[], Any]]] = [
    ("policy number", lambda: create_context(policy={"maxItems": 0})),
    ("policy bool", lambda: create_context(policy={"maxTokens": True})),
    ("policy field", lambda: create_context(policy={"maxItemz": 3})),
    ("policy duplicate", lambda: create_context_execution({"duplicate": "merge"})),
    ("option field", lambda: create_context({"polcy": {}})),
    ("service shape", lambda: create_context(services={"selector": 3})),
    ("redis without client", lambda: create_context(redis={"ttlMs": 5})),
    ("redis and store", lambda: create_context(redis={"client": object()},
                                                services={"stateStore": create_in_memory_context_store()})),
    ("worker option on the SDK", lambda: create_context({"concurrency": 3})),
    ("concurrency", lambda: create_context_worker(concurrency=0)),
    ("services factory", lambda: create_context_worker(services_factory=3)),  # type: ignore[arg-type]
    ("store TTL", lambda: create_in_memory_context_store(ttl_ms=0)),
    ("store capacity", lambda: create_in_memory_context_store(max_entries=-1)),
    ("store option", lambda: create_in_memory_context_store({"ttl": 5})),
    ("redis client", lambda: create_redis_context_store(object())),  # type: ignore[arg-type]
    ("queue capacity", lambda: create_context_operation_queue(max_pending=0)),
    ("rag stage", lambda: create_rag_strategy(retrieve=3)),
]


@pytest.mark.parametrize(("what", "build"), MISTAKES, ids=[what for what, _ in MISTAKES])
def test_construction_mistakes(what: str, build: Callable[[], Any]) -> None:
    """CX-2 CX-8: a bad option is ContextError INVALID_INPUT (as before) and also an InvalidArgumentError."""
    with pytest.raises(ContextArgumentError) as caught:
        build()
    error = caught.value
    assert isinstance(error, ContextError) and isinstance(error, InvalidArgumentError) and isinstance(error, ValueError)
    assert error.code == "INVALID_INPUT" and error.status == "error"


def test_policy_messages_name_the_field() -> None:
    """CX-2: a refused policy says which field and why, never echoing the value."""
    with pytest.raises(ContextArgumentError) as caught:
        create_context(policy={"maxItems": 1_000_001})
    assert caught.value.message.startswith("policy.maxItems: ") and "1000001" not in caught.value.message


async def test_bad_requests_are_not_argument_errors() -> None:
    """CX-8: a call's bad input stays a plain ContextError INVALID_INPUT (a worker answer, not a build mistake)."""
    client = create_context()
    assert await error_code(client.select({"context": {"items": []}, "purpose": "chat"})) == "INVALID_INPUT"
    with pytest.raises(ContextError) as caught:
        await client.load({"sources": "nope"})
    assert not isinstance(caught.value, InvalidArgumentError)
