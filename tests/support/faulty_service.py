"""A raw ASGI ``/v1/invoke`` that answers like a ditto server, with faults chosen by the node name.

Used in-process (``serve_port(FaultyService())``) and as its own uvicorn process
(:func:`serve_faulty`), where a server that logs a traceback before dropping a
connection gives a client time to reuse it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .net import free_port, wait_http_ok

__all__ = ["FaultyService", "app", "serve_faulty"]

ROOT = Path(__file__).resolve().parents[2]


class FaultyService:
    """A raw ASGI ``/v1/invoke`` that answers like a ditto server, with faults chosen by the node name.

    ``FAULT.DROP_500``: a 500 without ``Connection: close``, then the app raises, so uvicorn drops the
    connection (what a Starlette app did after any unhandled error). ``FAULT.DROP_200``: the same after a
    good answer. ``FAULT.NAN`` / ``FAULT.DEEP`` / ``FAULT.BIG``: a 200 whose body is not strict JSON, nested
    3,000 levels, or 2 MB. Every other node echoes its input. ``handled`` counts the requests that ran.
    """

    def __init__(self) -> None:
        self.handled = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # lifespan
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/healthz":
            await self._answer(send, 200, b'{"status":"ok"}')
            return
        self.handled += 1
        request = json.loads(body)
        node = request["node"]
        output = {"FAULT.NAN": b"NaN", "FAULT.DEEP": b"[" * 3000 + b"]" * 3000,
                  "FAULT.BIG": b'"' + b"x" * 2_000_000 + b'"'}.get(node) or json.dumps(request["input"]).encode()
        status, payload = 200, b'{"executionId":%s,"node":%s,"status":"success","output":%s}' % (
            json.dumps(request["executionId"]).encode(), json.dumps(node).encode(), output)
        if node == "FAULT.DROP_500":
            status, payload = 500, b'{"error":{"code":"INTERNAL","message":"boom"}}'
        await self._answer(send, status, payload)
        if node in {"FAULT.DROP_500", "FAULT.DROP_200"}:
            raise RuntimeError("the app fails after answering; uvicorn closes the connection")

    @staticmethod
    async def _answer(send: Any, status: int, payload: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


app = FaultyService()


@contextmanager
def serve_faulty() -> Iterator[str]:
    """Yield the URL of :data:`app` served by its own uvicorn process (tracebacks to /dev/null)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
                                "--no-access-log", "tests.support.faulty_service:app"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http_ok(f"{url}/healthz")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
