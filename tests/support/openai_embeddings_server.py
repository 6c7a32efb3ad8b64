"""A small OpenAI-compatible ``POST /v1/embeddings`` server for tests (real HTTP on 127.0.0.1).

Embeddings are deterministic hashed bags of words (so similar texts get
similar vectors). The requested ``model`` name selects a behaviour, the way a
real deployment serves several models:

* ``hash-bow`` (any other name too) — correct answers
* ``wrong-count`` — one vector too few
* ``nan`` — a NaN inside the first vector (sent as the JSON ``NaN`` literal)
* ``wrong-dim`` — the first vector has one number missing
* ``bad-index`` — every item claims ``index`` 0
* ``shuffled`` — items in reverse order with correct ``index`` values
* ``slow`` — sleeps ``slow_seconds`` before answering
* ``error-500`` — HTTP 500 whose body holds a secret-looking text
* ``huge`` — one vector of 2,000,000 numbers (about 22 MB of JSON, built once per server)
* ``big-number`` — a 400-digit integer inside the first vector
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .uvicorn_thread import serve_app

SERVER_SECRET = "db-password=hunter2 at 10.0.0.7"
_WORD = re.compile(r"\w+", re.UNICODE)


def hashed_bow(text: str, dimensions: int) -> list[float]:
    """Unit-length hashed bag of words (zero text → a fixed unit vector)."""
    vector = [0.0] * dimensions
    for token in _WORD.findall(text.lower()):
        digest = hashlib.sha256(token.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimensions] += 1.0 if digest[4] % 2 == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


@dataclass
class EmbeddingServerState:
    dimensions: int = 32
    api_key: str | None = None
    slow_seconds: float = 2.0
    #: Simulated service time of every request, so that overlapping requests would be seen in ``max_in_flight``.
    latency_seconds: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    _huge: bytes | None = None

    def huge_answer(self) -> bytes:
        if self._huge is None:
            vector = ",".join(["0.12345678901"] * 2_000_000)
            self._huge = ('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[' + vector
                          + ']}],"model":"huge"}').encode()
        return self._huge


def create_embeddings_app(state: EmbeddingServerState) -> Starlette:
    async def embeddings(request: Request) -> Response:
        if state.api_key is not None and request.headers.get("authorization") != f"Bearer {state.api_key}":
            return Response(json.dumps({"error": {"message": f"bad key; {SERVER_SECRET}"}}), 401,
                            media_type="application/json")
        body = json.loads(await request.body())
        state.requests.append(body)
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if state.latency_seconds:
                await asyncio.sleep(state.latency_seconds)
        finally:
            state.in_flight -= 1
        model = body.get("model", "")
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if model == "error-500":
            return Response(f"internal failure: {SERVER_SECRET}", 500)
        if model == "slow":
            await asyncio.sleep(state.slow_seconds)
        if model == "huge":
            return Response(state.huge_answer(), 200, media_type="application/json")
        vectors = [hashed_bow(str(text), state.dimensions) for text in inputs]
        items: list[dict[str, Any]] = [{"object": "embedding", "index": i, "embedding": v}
                                       for i, v in enumerate(vectors)]
        if model == "wrong-count":
            items = items[:-1]
        elif model == "nan":
            items[0]["embedding"] = [math.nan, *items[0]["embedding"][1:]]
        elif model == "wrong-dim":
            items[0]["embedding"] = items[0]["embedding"][:-1]
        elif model == "bad-index":
            for item in items:
                item["index"] = 0
        elif model == "shuffled":
            items.reverse()
        elif model == "big-number":
            items[0]["embedding"] = [10**400, *items[0]["embedding"][1:]]
        payload = {"object": "list", "data": items, "model": model,
                   "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}
        return Response(json.dumps(payload, allow_nan=True), 200, media_type="application/json")

    return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


@asynccontextmanager
async def openai_embeddings_server(state: EmbeddingServerState | None = None
                                   ) -> AsyncIterator[tuple[str, EmbeddingServerState]]:
    """Yield ``(base_url, state)`` for a uvicorn server running in this event loop."""
    state = state or EmbeddingServerState()
    async with serve_app(create_embeddings_app(state)) as url:
        yield url, state
