"""One POST /v1/invoke driven straight through a worker app over ASGI (no socket, no HTTP parser): what the
in-process benches (tracing_cost.py, search_cost.py) time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any


def invoke_scope(token: str, body_length: int, extra: Sequence[tuple[bytes, bytes]] = ()) -> dict[str, Any]:
    """The ASGI scope of an authorised POST /v1/invoke with a JSON body of ``body_length`` bytes."""
    headers = [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json"),
               (b"authorization", f"Bearer {token}".encode()), (b"content-length", str(body_length).encode()),
               *extra]
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": "/v1/invoke", "raw_path": b"/v1/invoke",
            "query_string": b"", "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8080), "state": {}}


class Exchange:
    """``receive`` hands the app one whole body; ``send`` keeps the response statuses."""

    def __init__(self, body: bytes) -> None:
        self.request = {"type": "http.request", "body": body, "more_body": False}
        self.statuses: list[int] = []

    async def receive(self) -> dict[str, Any]:
        return self.request

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.statuses.append(message["status"])


def invoker(app: Any, token: str) -> Callable[[bytes], Awaitable[None]]:
    """An async function posting one body through ``app`` and checking that it answered 200."""

    async def call(body: bytes) -> None:
        exchange = Exchange(body)
        await app(invoke_scope(token, len(body)), exchange.receive, exchange.send)
        if exchange.statuses != [200]:
            raise SystemExit(f"the app answered {exchange.statuses}")

    return call
