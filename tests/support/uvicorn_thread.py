"""Serve an ASGI app with a real uvicorn server inside the test's own event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from .net import free_port


@asynccontextmanager
async def serve_port(app: Any, port: int | None = None, **config: Any) -> AsyncIterator[int]:
    """Yield the port (``port``, or a free one) of a uvicorn server running ``app`` on 127.0.0.1.

    ``config`` goes to ``uvicorn.Config`` as it is (``ssl_certfile``/``ssl_keyfile``
    for HTTPS, ``timeout_graceful_shutdown``). Start-up failures are raised here
    instead of waiting forever for ``started``.
    """
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                          lifespan="off", access_log=False, **config))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def serve_app(app: Any) -> AsyncIterator[str]:
    """Yield the base URL of a uvicorn server running ``app`` on 127.0.0.1."""
    async with serve_port(app) as port:
        yield f"http://127.0.0.1:{port}"
