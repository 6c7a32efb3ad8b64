"""Bridges a :class:`CancelSignal` to asyncio task cancellation.

Running the awaited coroutine *inline* (no extra task) keeps the per-call
overhead of ``runtime.invoke`` small; when the signal fires we cancel the
current task the same way ``asyncio.timeout`` does, and convert the resulting
``CancelledError`` into :class:`CancelledBySignal` only if we caused it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from ..signal import CancelSignal

T = TypeVar("T")


async def await_with_signal(awaitable: Awaitable[T], signal: CancelSignal) -> T:
    """Await ``awaitable``; if ``signal`` fires first, cancel it and raise CancelledBySignal."""
    signal.raise_if_aborted()
    task = asyncio.current_task()
    assert task is not None, "await_with_signal must run inside a task"
    loop = asyncio.get_running_loop()
    state = {"done": False, "cancelled": False}

    def cancel_now() -> None:
        if not state["done"]:
            state["cancelled"] = True
            task.cancel()

    def on_abort(_: CancelSignal) -> None:
        # The signal may fire from another thread (threading.Timer, a worker thread).
        loop.call_soon_threadsafe(cancel_now)

    remove = signal.add_callback(on_abort)
    try:
        return await awaitable
    except asyncio.CancelledError:
        if state["cancelled"] and task.uncancel() == 0:
            signal.raise_if_aborted()
        raise
    finally:
        state["done"] = True
        remove()
