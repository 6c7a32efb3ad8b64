"""Seed 000 behaviours that an audit found differing or untested (issue 10), one test each.

Every docstring names the spec id and the seed line (``seed 000 line N``) it pins.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ditto import create_ditto, create_http_transport, create_worker_http_app
from ditto.retrieval import (
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalTargetRegistry,
    create_retrieval,
    retrieval_search_node,
)
from ditto.runtime import Runtime

from ..support.uvicorn_thread import serve_app
from .providers import ListProvider, docs

REQUEST: dict[str, Any] = {"query": {"content": "agent memory"}, "target": {"name": "kb"}}
TOKEN = "seed-gaps-token-0123456789"


def registry(**providers: Any) -> RetrievalTargetRegistry:
    default = next(iter(providers))
    return RetrievalTargetRegistry({"kb": {"defaultStrategy": default, "providers": providers}})


@asynccontextmanager
async def serve_and_call(server: Runtime) -> AsyncIterator[Runtime]:
    """Serve ``server`` over real HTTP; yield a caller runtime with its single worker registered remotely."""
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            create_http_transport(id="svc", url=url, token=TOKEN) as transport:
        caller = create_ditto(transports=[transport])
        (worker,) = await transport.workers()
        caller.register_remote(address=worker["address"], transport_id="svc", capabilities=worker["capabilities"])
        yield caller


class GateProvider:
    """Holds every call until ``gate`` is set; counts how many calls are inside at once."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.inside = 0
        self.most_inside = 0
        self.all_inside = asyncio.Event()
        self.expected = 0

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                     ) -> dict[str, Any]:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        if self.inside == self.expected:
            self.all_inside.set()
        try:
            await self.gate.wait()
        finally:
            self.inside -= 1
        return {"candidates": [], "target": input.target.model_dump(exclude_none=True)}


# -- create_retrieval takes concurrency and ignores it ---------------------------------------


async def test_create_retrieval_accepts_concurrency_and_does_not_limit() -> None:
    """RET-2, seed 000 lines 123/128/293: ``concurrency`` is part of the shared options object; the
    direct SDK accepts it (object form and keyword) and still runs every call at once."""
    for make in (lambda r: create_retrieval({"providers": r, "concurrency": 1}),
                 lambda r: create_retrieval(r, concurrency=1)):
        provider = GateProvider()
        provider.expected = 5
        sdk = make(registry(custom=provider))
        calls = [asyncio.create_task(sdk.search(REQUEST)) for _ in range(5)]
        await asyncio.wait_for(provider.all_inside.wait(), 5)  # all five inside although concurrency=1
        provider.gate.set()
        results = await asyncio.gather(*calls)
        assert [result.status for result in results] == ["success"] * 5
        assert provider.most_inside == 5


# -- a handler returning a NodeResult is that result ----------------------------------------


async def test_descriptor_handler_returning_node_result_becomes_it() -> None:
    """RET-2, seed 000 lines 344–351: ``retrieval_search_node.define("RETRIEVAL", lambda input:
    retrieval.search(input))`` — the SDK's NodeResult is the call's result (status, output, error), not a
    success wrapping it; the execution id and node are the runtime's."""
    retrieval = create_retrieval(registry(custom=ListProvider(docs("a", "b"))))
    runtime = create_ditto(workers=[retrieval_search_node.define("RETRIEVAL", lambda input: retrieval.search(input))])
    ok = await runtime.invoke("RETRIEVAL.SEARCH", REQUEST)
    assert ok.status == "success" and ok.error is None
    assert [c.id for c in ok.output.candidates] == ["a", "b"]
    assert ok.node == "RETRIEVAL.SEARCH" and len(ok.execution_id) >= 16
    missing = await runtime.invoke("RETRIEVAL.SEARCH", {**REQUEST, "target": {"name": "nope"}})
    assert missing.status == "error" and missing.output is None
    assert missing.error is not None and missing.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
    await runtime.close()


async def test_descriptor_handler_node_result_over_http() -> None:
    """RET-2/RET-8, seed 000 lines 344–351: the same over the HTTP transport — an error NodeResult returned
    by the handler arrives as status error with its code, not as a success carrying an error object."""
    retrieval = create_retrieval(registry(custom=ListProvider(docs("a"))))
    server = create_ditto(workers=[retrieval_search_node.define("RETRIEVAL", lambda input: retrieval.search(input))])
    async with serve_and_call(server) as caller:
        ok = await caller.invoke("RETRIEVAL.SEARCH", REQUEST)
        assert ok.status == "success" and ok.output["candidates"][0]["id"] == "a"
        missing = await caller.invoke("RETRIEVAL.SEARCH", {**REQUEST, "target": {"name": "nope"}})
        assert missing.status == "error" and missing.output is None
        assert missing.error is not None and missing.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
    await server.close()


# -- the output target is the request's logical identity -------------------------------------


async def test_output_target_keeps_request_metadata() -> None:
    """RET-4, seed 000 line 167: the output target uses the request's logical identity — a provider that
    echoes only name/type/namespace does not drop the request's ``target.metadata``; a provider that
    returns its own target metadata keeps it."""

    class NameOnly:
        async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                         ) -> dict[str, Any]:
            return {"candidates": [], "target": {"name": input.target.name, "namespace": input.target.namespace}}

    class OwnMetadata:
        async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                         ) -> dict[str, Any]:
            return {"candidates": [], "target": {**input.target.model_dump(exclude_none=True),
                                                 "metadata": {"shard": 3}}}

    request = {**REQUEST, "target": {"name": "kb", "namespace": "tenant-a", "metadata": {"tenant": "a"}}}
    sdk = create_retrieval(registry(custom=NameOnly(), own=OwnMetadata()))
    result = await sdk.search(request)
    assert result.status == "success"
    assert result.output.target.model_dump(exclude_none=True) == request["target"]
    own = await sdk.search({**request, "strategy": "own"})
    assert own.status == "success" and own.output.target.metadata == {"shard": 3}
