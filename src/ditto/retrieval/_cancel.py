"""Signal → asyncio bridge for the RETRIEVAL SDK and providers.

A fired :class:`~ditto.signal.CancelSignal` cancels the awaiting task itself
(like ``asyncio.timeout``), so the provider coroutine really stops and runs its
``finally`` blocks before the caller gets its answer. Nothing is left running
behind an early return: there is no ``Promise.race``-style release.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from ..signal import CancelSignal
from .errors import CANCELLED, TIMEOUT, RetrievalError

T = TypeVar("T")


def signal_error(signal: CancelSignal) -> RetrievalError:
    """The RetrievalError a fired signal stands for (deadline → TIMEOUT, else CANCELLED)."""
    if signal.reason == "TIMEOUT":
        return RetrievalError(TIMEOUT, "The retrieval deadline passed")
    return RetrievalError(CANCELLED, "The retrieval was cancelled")


def check_signal(signal: CancelSignal | None) -> None:
    """Raise the matching RetrievalError when ``signal`` has fired."""
    if signal is not None and signal.aborted:
        raise signal_error(signal)


async def await_with_signal(awaitable: Awaitable[T], signal: CancelSignal | None) -> T:
    """Await ``awaitable``; when ``signal`` fires first, cancel it and raise a RetrievalError."""
    if signal is None:
        return await awaitable
    if signal.aborted:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise signal_error(signal)
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - always inside a task under asyncio.run
        return await awaitable
    loop = asyncio.get_running_loop()
    state = {"done": False, "cancelled": False}

    def cancel_now() -> None:
        if not state["done"]:
            state["cancelled"] = True
            task.cancel()

    def on_abort(_: CancelSignal) -> None:
        loop.call_soon_threadsafe(cancel_now)

    remove = signal.add_callback(on_abort)
    try:
        return await awaitable
    except asyncio.CancelledError:
        if state["cancelled"] and task.uncancel() == 0:
            raise signal_error(signal) from None
        raise
    finally:
        state["done"] = True
        remove()
