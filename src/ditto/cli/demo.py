"""A self-contained tour: one worker, called in-process and through a real HTTP server."""

from __future__ import annotations

import asyncio
import secrets
import socket
from typing import Any

import uvicorn

from ..runtime import WorkerDefinition, create_ditto, graph
from ..transport import create_http_transport, create_worker_http_app


async def _word_stats(input: Any) -> dict[str, Any]:
    text = str(input.get("text", "")) if isinstance(input, dict) else str(input)
    words = text.split()
    return {"words": len(words), "characters": len(text), "longest": max(words, key=len) if words else None}


def text_stats_worker() -> WorkerDefinition:
    """A tiny worker used by the demo and by ``ditto serve`` examples."""
    return WorkerDefinition("TEXT", {"TEXT.STATS": _word_stats}, concurrency=8)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def run_demo() -> dict[str, Any]:
    text = "Ditto keeps an agent's working context honest"
    server_runtime = create_ditto(workers=[text_stats_worker()])
    token = secrets.token_urlsafe(24)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_worker_http_app(server_runtime, token=token), host="127.0.0.1",
                                          port=port, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
        await asyncio.sleep(0.01)
    transport = create_http_transport(id="demo", url=f"http://127.0.0.1:{port}", token=token)
    caller = create_ditto(transports=[transport])
    try:
        local = await server_runtime.invoke("TEXT.STATS", {"text": text})
        (remote_worker,) = await transport.workers()
        caller.register_remote(address=remote_worker["address"], transport_id="demo",
                               capabilities=remote_worker["capabilities"])
        remote = await caller.invoke("TEXT.STATS", {"text": text})
        plan = graph("demo").node("stats", "TEXT.STATS").node(
            "again", "TEXT.STATS", ["stats"], lambda _i, deps: {"text": str(deps["stats"].output)})
        ran = await caller.run(plan, {"text": text})
        return {
            "local": {"status": local.status, "output": local.output},
            "http": {"status": remote.status, "output": remote.output, "url": transport.url},
            "graph": {node_id: result.status for node_id, result in ran.results.items()},
        }
    finally:
        await caller.close()
        await transport.aclose()
        server.should_exit = True
        await serving
        await server_runtime.close()
