"""The ``openai`` provider's retries, timed: backoff doubles between 429s, ``Retry-After`` is honoured and
capped, and no error carries the API key or the server's body (INF-3, INF-5).

Issue 15, "Tests that catch the bug" (INFER). The provider has no clock to inject, so the tests measure
what a server sees: a local OpenAI-compatible server (real uvicorn on 127.0.0.1, the real ``openai`` SDK)
records when each request arrives, and the gaps between arrivals are the waits. Backoffs are chosen so
that doubling, tripling, a constant wait and an uncapped wait are hundreds of milliseconds apart, far
more than the scheduling noise of a loaded machine.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from ditto.worker.infer import (
    ExcerptPassage,
    ExcerptTask,
    InferError,
    ModelConfig,
    OpenAIInferConfig,
    create_infer_client,
    create_openai_provider,
    response_format,
    task_messages,
)
from tests.support.openai_chat_server import SERVER_SECRET, ChatServerState, ChatStep, create_chat_app
from tests.support.uvicorn_thread import serve_app

KEY = "sk-retry-test-9d2e71"
TASK = ExcerptTask(question="How long are backups kept?",
                   passages=(ExcerptPassage(source_id="doc-1", text="Backups are kept for 30 days."),))
VALID = json.dumps({"excerpts": [{"sourceId": "doc-1", "quote": "Backups are kept for 30 days."}]})
#: Slack for one request's round trip plus the event loop's lateness on a busy machine.
SLACK = 0.15


@asynccontextmanager
async def timed_server(state: ChatServerState) -> AsyncIterator[tuple[str, list[float]]]:
    """The scripted chat server, with the monotonic arrival time of every HTTP request."""
    arrivals: list[float] = []
    app = create_chat_app(state)

    async def timed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            arrivals.append(time.monotonic())
        await app(scope, receive, send)

    async with serve_app(timed) as url:
        try:
            yield url + "/v1", arrivals
        finally:
            state.release.set()


def gaps(arrivals: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(arrivals)]


async def ask(url: str, **overrides: Any) -> Any:
    options: dict[str, Any] = {"base_url": url, "model": "test-model", "api_key": KEY, "timeout_ms": 20_000,
                               "max_retries": 2, "backoff_ms": 5, "max_backoff_ms": 10_000}
    options.update(overrides)
    async with create_openai_provider(OpenAIInferConfig(**options)) as provider:
        client = create_infer_client({"openai": provider})
        return await client.reasoning.sample(model=ModelConfig(provider="openai", model="test-model"),
                                             messages=task_messages(TASK), response_format=response_format(TASK))


async def test_backoff_doubles_between_429_retries() -> None:
    """INF-3, INF-5 (issue 15, backoff doubles): with backoff_ms=150 and no Retry-After, the waits between
    the four requests are 150, 300 and 600 ms (not constant, linear or tripled), then INFER_RATE_LIMITED."""
    state = ChatServerState(default=ChatStep(status=429))
    async with timed_server(state) as (url, arrivals):
        with pytest.raises(InferError) as caught:
            await ask(url, max_retries=3, backoff_ms=150)
    assert caught.value.code == "INFER_RATE_LIMITED"
    measured = gaps(arrivals)
    assert len(measured) == 3, measured
    for wait, expected in zip(measured, (0.15, 0.30, 0.60), strict=True):
        assert expected - 0.01 <= wait < expected + SLACK, measured


async def test_backoff_is_capped_by_max_backoff_ms() -> None:
    """INF-3 (issue 15): doubling stops at max_backoff_ms: 100, then 200 capped to 150, then 150 again."""
    state = ChatServerState(default=ChatStep(status=429))
    async with timed_server(state) as (url, arrivals):
        with pytest.raises(InferError) as caught:
            await ask(url, max_retries=3, backoff_ms=100, max_backoff_ms=150)
    assert caught.value.code == "INFER_RATE_LIMITED"
    measured = gaps(arrivals)
    assert len(measured) == 3, measured
    for wait, expected in zip(measured, (0.10, 0.15, 0.15), strict=True):
        assert expected - 0.01 <= wait < expected + SLACK, measured


@pytest.mark.parametrize("status", [429, 503])
async def test_retry_after_is_honoured(status: int) -> None:
    """INF-3 (issue 15, Retry-After): a server asking for 0.5 s gets 0.5 s, not our 5 ms backoff; then the
    answer is the result."""
    script = [ChatStep(status=status, headers={"retry-after": "0.5"}), ChatStep(VALID)]
    async with timed_server(ChatServerState(script=script)) as (url, arrivals):
        result = await ask(url)
    assert result.parsed["excerpts"][0]["sourceId"] == "doc-1"
    (wait,) = gaps(arrivals)
    assert 0.49 <= wait < 0.5 + SLACK


async def test_retry_after_is_capped_by_max_backoff_ms() -> None:
    """INF-3 (issue 15, Retry-After capped): a Retry-After of an hour waits max_backoff_ms (200 ms) and
    retries, instead of giving up or sleeping for an hour."""
    script = [ChatStep(status=429, headers={"retry-after": "3600"}), ChatStep(VALID)]
    async with timed_server(ChatServerState(script=script)) as (url, arrivals):
        result = await ask(url, max_backoff_ms=200)
    assert result.parsed is not None
    (wait,) = gaps(arrivals)
    assert 0.19 <= wait < 0.2 + SLACK


#: Every failure the provider maps, with the code INF-5 documents for it and how many requests it makes
#: (max_retries=1: statuses that are retried make two).
_REFUSED = "The model server refused the request (HTTP {})"
_CREDENTIALS = "The model server refused the credentials (HTTP {})"
_ANSWERED = "The model server answered HTTP {}"
FAILURES = [(400, "INFER_INVALID_INPUT", 1, _REFUSED), (401, "INFER_PROVIDER_UNAVAILABLE", 1, _CREDENTIALS),
            (403, "INFER_PROVIDER_UNAVAILABLE", 1, _CREDENTIALS), (404, "INFER_PROVIDER_UNAVAILABLE", 1, _ANSWERED),
            (409, "INFER_PROVIDER_UNAVAILABLE", 1, _ANSWERED), (422, "INFER_INVALID_INPUT", 1, _REFUSED),
            (429, "INFER_RATE_LIMITED", 2, "The model server is rate limiting us"),
            (500, "INFER_PROVIDER_UNAVAILABLE", 2, _ANSWERED), (502, "INFER_PROVIDER_UNAVAILABLE", 2, _ANSWERED),
            (503, "INFER_PROVIDER_UNAVAILABLE", 2, _ANSWERED)]


@pytest.mark.parametrize(("status", "code", "requests", "message"), FAILURES, ids=[str(f[0]) for f in FAILURES])
async def test_no_error_carries_the_key_or_the_servers_body(status: int, code: str, requests: int, message: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """INF-5 (issue 15, no key, no raw body): for every status the server may answer, the error has its
    documented code and a message of our own (at most the status number); neither the key nor the body
    the server sent is in the error, and the key is in no log line either (the body may be: operators
    read the log)."""
    body = json.dumps({"error": {"message": SERVER_SECRET, "type": "server_error", "code": "oops"}})
    state = ChatServerState(default=ChatStep(status=status, body=body))
    caplog.set_level(logging.DEBUG, logger="ditto.infer")
    async with timed_server(state) as (url, arrivals):
        with pytest.raises(InferError) as caught:
            await ask(url, max_retries=1)
    error = caught.value
    assert error.code == code and len(arrivals) == requests
    for text in (str(error), error.message, repr(error)):
        assert KEY not in text and SERVER_SECRET not in text and "hunter2" not in text and "oops" not in text
    assert error.message == message.format(status)
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    for record in caplog.records:
        logged = record.getMessage() + (logging.Formatter().formatException(record.exc_info)
                                        if record.exc_info else "")
        assert KEY not in logged
