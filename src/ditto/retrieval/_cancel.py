"""Signal → asyncio bridge for the RETRIEVAL SDK and providers.

A fired :class:`~ditto.signal.CancelSignal` cancels the awaiting task itself
(like ``asyncio.timeout``), so the provider coroutine really stops and runs its
``finally`` blocks before the caller gets its answer. Nothing is left running
behind an early return: there is no ``Promise.race``-style release.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from ..signal import CancelSignal
from ..signal import await_with_signal as _await_with_signal
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
    """:func:`ditto.signal.await_with_signal`, raising the matching RetrievalError."""
    return await _await_with_signal(awaitable, signal, error=signal_error)
