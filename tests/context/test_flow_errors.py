"""What ``run_rag_flow`` / ``run_skill_flow`` raise for a failed step (RT-8; docs/design/errors.md, CONTEXT)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ditto import create_ditto
from ditto.contracts import Context
from ditto.errors import DittoError
from ditto.signal import AbortController, CancelledBySignal
from ditto.worker.context import ContextError, create_context_worker, create_rag_strategy, run_rag_flow, run_skill_flow


async def test_a_deadline_is_cancelled_by_signal_with_status_timeout() -> None:
    """RT-8 CX-8: a step past its deadline raises CancelledBySignal TIMEOUT (status timeout), not a ContextError."""
    controller = AbortController()
    never = asyncio.Event()

    async def retrieve(stage: Any) -> list[Any]:
        controller.abort("TIMEOUT")  # the caller's deadline passes while the step runs
        await never.wait()
        return []

    runtime = create_ditto(workers=[create_context_worker(services={"ragStrategy": create_rag_strategy(
        retrieve=retrieve)})])
    try:
        with pytest.raises(CancelledBySignal) as caught:
            await run_rag_flow(runtime, context=Context(), query="q", signal=controller.signal)
        assert (caught.value.code, caught.value.status) == ("TIMEOUT", "timeout")
        cancelled = AbortController()
        cancelled.abort()
        with pytest.raises(CancelledBySignal) as stopped:
            await run_skill_flow(runtime, sources=[], signal=cancelled.signal)
        assert (stopped.value.code, stopped.value.status) == ("CANCELLED", "cancelled")
    finally:
        await runtime.close()


async def test_context_codes_stay_context_errors_and_runtime_codes_do_not() -> None:
    """RT-8 CX-8: a CONTEXT code is a ContextError; the runtime's WORKER_BUSY is a DittoError with that code."""
    release = asyncio.Event()
    started = asyncio.Event()

    async def retrieve(stage: Any) -> list[Any]:
        started.set()
        await release.wait()
        return []

    runtime = create_ditto(workers=[create_context_worker(
        services={"ragStrategy": create_rag_strategy(retrieve=retrieve)}, concurrency=1)])
    try:
        with pytest.raises(ContextError) as invalid:
            await run_skill_flow(runtime, sources="not a list")
        assert invalid.value.code == "INVALID_INPUT"
        first = asyncio.ensure_future(run_rag_flow(runtime, context=Context(), query="q"))
        await started.wait()
        with pytest.raises(DittoError) as busy:
            await run_rag_flow(runtime, context=Context(), query="q")
        assert busy.value.code == "WORKER_BUSY" and not isinstance(busy.value, ContextError)
        release.set()
        assert (await first).output.selected_item_ids == ()
    finally:
        await runtime.close()
