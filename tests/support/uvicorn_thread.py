"""Serve an ASGI app with a real uvicorn server inside the test's own event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from .net import free_port


@asynccontextmanager
async def serve_app(app: Any) -> AsyncIterator[str]:
    """Yield the base URL of a uvicorn server running ``app`` on 127.0.0.1."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                          lifespan="off", access_log=False))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
