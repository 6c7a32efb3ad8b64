"""A user's module written against the installed package only (no path aliases): the package check
type-checks it with ``mypy --strict`` in a fresh virtual environment, then runs it.

It touches the public face of every package, so a missing ``py.typed``, an export that only resolves
from ``src/`` or a public signature that loses its types fails the check.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import ditto
import ditto.errors
from ditto import (
    CancelSignal,
    DittoError,
    MissingExtraError,
    NodeResult,
    Runtime,
    create_context,
    create_context_worker,
    create_ditto,
    graph,
    load_runtime_config,
)
from ditto.config import RuntimeConfig
from ditto.contracts import Context, ContextItem, ContextSelection, Message
from ditto.retrieval import (
    Retrieval,
    RetrievalSearchOutput,
    RetrievalTargetRegistry,
    create_retrieval,
    create_retrieval_worker,
    create_text_search_provider,
)
from ditto.runtime import NodeDescriptor, WorkerDefinition
from ditto.signal import AbortController
from ditto.testing import MemoryStoreContract, RetrievalProviderContract
from ditto.text import word_terms
from ditto.transport import create_http_transport, create_worker_http_app
from ditto.worker.context import ContextError, create_in_memory_context_store, update_with_retry
from ditto.worker.infer import BUILTIN_MODEL, InferClient, create_infer_client
from ditto.worker.interaction import Interaction, ToolResult, create_interaction, tool
from ditto.worker.memory import Memory, MemoryItem, create_memory, create_sqlite_memory_store
from ditto.workflows.research import ResearchRequest, ResearchResult, create_task, verify_task


@tool
def double(value: int) -> int:
    """Twice ``value``."""
    return 2 * value


async def use_context() -> ContextSelection:
    context = create_context(services={"stateStore": create_in_memory_context_store()})
    scope = {"sessionId": "consumer"}
    loaded: Context = await context.load({"scope": scope, "sources": [Message(role="system", content="Be brief.")]})
    assert isinstance(loaded.items[0], ContextItem)
    updated = await update_with_retry(context, {"scope": scope, "add": [{"role": "user", "content": "hi"}]})
    assert updated is not None and len(updated.items) == 2
    return await context.select({"scope": scope, "purpose": "infer", "limit": 2})


async def use_retrieval() -> RetrievalSearchOutput | None:
    provider = create_text_search_provider([{"id": "a", "content": "backups run nightly"}])
    retrieval: Retrieval = create_retrieval(RetrievalTargetRegistry.single(provider))
    result: NodeResult[RetrievalSearchOutput] = await retrieval.search("backups")
    return result.output


async def use_runtime() -> str:
    worker: WorkerDefinition = create_context_worker()
    provider = create_text_search_provider([{"id": "a", "content": "x"}])
    runtime: Runtime = create_ditto(workers=[worker, create_retrieval_worker(RetrievalTargetRegistry.single(provider))])
    try:
        plan = graph("one").node("load", "CONTEXT.LOAD", [], lambda text, _deps: {"sources": [
            {"role": "user", "content": text}]})
        done = await runtime.run(plan, "hello")
        context = done.output("load")
        return str(context.items[0].content)
    finally:
        await runtime.close()


async def use_memory(folder: Path) -> list[MemoryItem]:
    store = create_sqlite_memory_store(folder / "memory.sqlite")
    try:
        memory: Memory = create_memory(store=store)
        return list(await memory.write({"memories": [{"key": "k", "content": "v"}]}))
    finally:
        await store.close()


async def use_interaction() -> ToolResult:
    interaction: Interaction = create_interaction(tools=[double])
    return await interaction.act_tool({"call": {"id": "c1", "name": "double", "arguments": {"value": 21}}})


def use_the_rest(folder: Path) -> list[str]:
    config: RuntimeConfig = load_runtime_config({"workers": {"retrieval": {"searchLimit": 3}}})
    assert config.retrieval.search_limit == 3
    infer: InferClient = create_infer_client()
    assert BUILTIN_MODEL and infer is not None
    signal: CancelSignal = AbortController().signal
    assert not signal.aborted
    descriptor: NodeDescriptor[object, object] | None = None
    assert descriptor is None
    transport = create_http_transport(id="t", url="http://127.0.0.1:1", token="x")
    assert transport.id == "t" and callable(create_worker_http_app)
    assert issubclass(MissingExtraError, ImportError) and issubclass(ContextError, DittoError)
    assert issubclass(ditto.errors.InvalidArgumentError, ValueError)
    assert MemoryStoreContract is not None and RetrievalProviderContract is not None
    task = create_task(ResearchRequest(entry="document-search", question="When do backups run?"), base_dir=folder)
    problems: list[str] = verify_task(task.directory)  # no brief yet: verification reports it
    assert problems
    result: ResearchResult | None = None
    assert result is None
    return sorted(word_terms("Backups run nightly"))


async def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        selection = await use_context()
        output = await use_retrieval()
        loaded = await use_runtime()
        written = await use_memory(folder)
        doubled = await use_interaction()
        terms = use_the_rest(folder)
    assert output is not None
    print(ditto.__version__, selection.selected_item_ids[:1] != (), [c.id for c in output.candidates], loaded,
          [item.key for item in written], doubled.content, terms)


if __name__ == "__main__":
    asyncio.run(main())
