"""Signal → asyncio bridge for the RETRIEVAL SDK and providers, and the one mapping of
whatever a provider raised onto a public :class:`RetrievalError`.

A fired :class:`~ditto.signal.CancelSignal` cancels the awaiting task itself
(like ``asyncio.timeout``), so the provider coroutine really stops and runs its
``finally`` blocks before the caller gets its answer. Nothing is left running
behind an early return: there is no ``Promise.race``-style release.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from ..signal import CancelledBySignal, CancelSignal
from ..signal import await_with_signal as _await_with_signal
from .errors import BACKEND_ERROR, CANCELLED, TIMEOUT, RetrievalError

T = TypeVar("T")


def _reason_error(reason: str | None) -> RetrievalError:
    if reason == "TIMEOUT":
        return RetrievalError(TIMEOUT, "The retrieval deadline passed")
    return RetrievalError(CANCELLED, "The retrieval was cancelled")


def signal_error(signal: CancelSignal) -> RetrievalError:
    """The RetrievalError a fired signal stands for (deadline → TIMEOUT, else CANCELLED)."""
    return _reason_error(signal.reason)


def as_retrieval_error(error: Exception) -> RetrievalError:
    """A provider's exception as a public RetrievalError; any other text is hidden (RET-5).

    A signal's own ``CancelledBySignal`` stays a cancellation/timeout and a Python
    ``TimeoutError`` a timeout, wherever it was raised (a provider, a hybrid branch).
    """
    if isinstance(error, RetrievalError):
        return error
    if isinstance(error, CancelledBySignal):
        return _reason_error(error.code)
    if isinstance(error, TimeoutError):
        return RetrievalError(TIMEOUT, "The retrieval backend timed out")
    return RetrievalError(BACKEND_ERROR, "The retrieval backend failed")


def check_signal(signal: CancelSignal | None) -> None:
    """Raise the matching RetrievalError when ``signal`` has fired."""
    if signal is not None and signal.aborted:
        raise signal_error(signal)


async def await_with_signal(awaitable: Awaitable[T], signal: CancelSignal | None) -> T:
    """:func:`ditto.signal.await_with_signal`, raising the matching RetrievalError."""
    return await _await_with_signal(awaitable, signal, error=signal_error)
