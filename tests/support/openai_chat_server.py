"""A scripted OpenAI-compatible ``POST /v1/chat/completions`` server for tests (real HTTP on 127.0.0.1).

Each test gives the server a script: one :class:`ChatStep` per request, in
order (valid answer, invalid JSON, schema-breaking answer, 429, 500, a slow
answer, 401...). When the script runs out the server answers ``default``.
Every request body and its ``authorization`` header are recorded, so a test
can check what the official ``openai`` SDK really sent.

A slow step waits for ``delay`` seconds or until the test's context exits
(``state.release``), so the server never keeps a test waiting at shutdown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .uvicorn_thread import serve_app

SERVER_SECRET = "db-password=hunter2 at 10.0.0.7"


@dataclass(frozen=True)
class ChatStep:
    """One scripted answer: ``content`` as the assistant message, or an HTTP ``status`` with ``body``."""

    content: str | None = None
    status: int = 200
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = (11, 7)


@dataclass
class ChatServerState:
    script: list[ChatStep] = field(default_factory=list)
    default: ChatStep = field(default_factory=lambda: ChatStep(content="{}"))
    api_key: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set when a request has arrived (a test waits for it instead of polling).
    received: asyncio.Event = field(default_factory=asyncio.Event)


def completion(content: str, model: str, finish_reason: str = "stop",
               usage: tuple[int, int] | None = (11, 7)) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        answer["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                           "total_tokens": usage[0] + usage[1]}
    return answer


def create_chat_app(state: ChatServerState) -> Starlette:
    async def chat(request: Request) -> Response:
        authorization = request.headers.get("authorization")
        state.authorizations.append(authorization)
        if state.api_key is not None and authorization != f"Bearer {state.api_key}":
            return Response(json.dumps({"error": {"message": f"Incorrect API key; {SERVER_SECRET}",
                                                  "type": "invalid_request_error"}}), 401,
                            media_type="application/json")
        body = json.loads(await request.body())
        state.requests.append(body)
        state.received.set()
        step = state.script.pop(0) if state.script else state.default
        if step.delay:
            with suppress(TimeoutError):
                await asyncio.wait_for(state.release.wait(), step.delay)
        if step.status != 200:
            text = step.body if step.body is not None else json.dumps(
                {"error": {"message": f"failure; {SERVER_SECRET}", "type": "server_error"}})
            return Response(text, step.status, headers=step.headers, media_type="application/json")
        payload = completion(step.content or "", body.get("model", ""), step.finish_reason, step.usage)
        return Response(json.dumps(payload), 200, headers=step.headers, media_type="application/json")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@asynccontextmanager
async def openai_chat_server(state: ChatServerState | None = None
                             ) -> AsyncIterator[tuple[str, ChatServerState]]:
    """Yield ``(base_url ending in /v1, state)`` for a uvicorn server running in this event loop."""
    state = state or ChatServerState()
    async with serve_app(create_chat_app(state)) as url:
        try:
            yield url + "/v1", state
        finally:
            state.release.set()
