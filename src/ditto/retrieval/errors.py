"""RETRIEVAL error codes (seed 000, RET-5) and the one mapping of a provider's failure.

Providers raise ``RetrievalError(code, safe_message)``; the message is public
and must not contain credentials or private connection details. Anything else
a provider raises becomes ``RETRIEVAL_BACKEND_ERROR`` with a fixed message
(:func:`as_retrieval_error`), logged once with its traceback, so backend text
never leaks. A bare Python ``TimeoutError`` from a backend is such a failure
too: only the caller's deadline or an explicit ``RETRIEVAL_TIMEOUT`` report is
a timeout.

A fired :class:`~ditto.signal.CancelSignal` is
``RetrievalError.from_signal(signal.reason)``: its deadline →
``RETRIEVAL_TIMEOUT`` (status ``timeout``), anything else →
``RETRIEVAL_CANCELLED`` (status ``cancelled``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Final, TypeVar

from ..errors import DittoError, InvalidArgumentError
from ..signal import CancelledBySignal, CancelSignal
from ..signal import await_with_signal as _await_with_signal

__all__ = [
    "RETRIEVAL_ERROR_CODES",
    "RetrievalArgumentError",
    "RetrievalError",
    "as_retrieval_error",
    "await_with_signal",
    "check_signal",
]

INVALID_INPUT: Final = "RETRIEVAL_INVALID_INPUT"
TARGET_NOT_FOUND: Final = "RETRIEVAL_TARGET_NOT_FOUND"
STRATEGY_UNSUPPORTED: Final = "RETRIEVAL_STRATEGY_UNSUPPORTED"
PROVIDER_UNAVAILABLE: Final = "RETRIEVAL_PROVIDER_UNAVAILABLE"
INVALID_BACKEND_OUTPUT: Final = "RETRIEVAL_INVALID_BACKEND_OUTPUT"
BACKEND_ERROR: Final = "RETRIEVAL_BACKEND_ERROR"
INVALID_EMBEDDING: Final = "RETRIEVAL_INVALID_EMBEDDING"
CANCELLED: Final = "RETRIEVAL_CANCELLED"
TIMEOUT: Final = "RETRIEVAL_TIMEOUT"
PERMISSION_DENIED: Final = "RETRIEVAL_PERMISSION_DENIED"

RETRIEVAL_ERROR_CODES: Final = frozenset({
    INVALID_INPUT, TARGET_NOT_FOUND, STRATEGY_UNSUPPORTED, PROVIDER_UNAVAILABLE, INVALID_BACKEND_OUTPUT,
    BACKEND_ERROR, INVALID_EMBEDDING, CANCELLED, TIMEOUT, PERMISSION_DENIED,
})

#: The public message of every hidden backend failure.
BACKEND_FAILED_MESSAGE: Final = "The search backend failed"

_log = logging.getLogger(__name__)

T = TypeVar("T")


class RetrievalError(DittoError):
    """A RETRIEVAL failure with one of :data:`RETRIEVAL_ERROR_CODES` (any other code is a ``ValueError``).

    ``RETRIEVAL_CANCELLED`` has status ``cancelled`` and ``RETRIEVAL_TIMEOUT`` status ``timeout``.
    """

    codes = RETRIEVAL_ERROR_CODES
    cancelled_code = CANCELLED
    timeout_code = TIMEOUT


class RetrievalArgumentError(RetrievalError, InvalidArgumentError):
    """A RETRIEVAL factory or registry built wrongly: an :class:`~ditto.errors.InvalidArgumentError`
    (so a ``ValueError``) that keeps the RETRIEVAL code it always had (``RETRIEVAL_INVALID_INPUT``,
    ``RETRIEVAL_PROVIDER_UNAVAILABLE``, ``RETRIEVAL_STRATEGY_UNSUPPORTED``).

    Built like a RetrievalError: ``RetrievalArgumentError(code, message)``.
    """

    def __init__(self, code: str, message: str | None = None) -> None:
        DittoError.__init__(self, code, message)

    def __reduce__(self) -> tuple[type[DittoError], tuple[str, str]]:
        return (type(self), (self.code, self.message))


def as_retrieval_error(error: BaseException) -> RetrievalError:
    """Whatever a provider (or a custom registry, or a hybrid branch) raised, as a public error.

    A ``RetrievalError`` is kept; a signal's own ``CancelledBySignal`` stays the
    cancellation or timeout it stands for; anything else is logged here, once,
    with its traceback, and becomes ``RETRIEVAL_BACKEND_ERROR`` with a fixed
    message (RET-5: the backend's text never reaches the caller).
    """
    if isinstance(error, RetrievalError):
        return error
    if isinstance(error, CancelledBySignal):
        return RetrievalError.from_signal(error.code)
    _log.error("a retrieval backend failed; the caller gets %s", BACKEND_ERROR, exc_info=error)
    return RetrievalError(BACKEND_ERROR, BACKEND_FAILED_MESSAGE)


def check_signal(signal: CancelSignal | None) -> None:
    """Raise ``RetrievalError.from_signal`` when ``signal`` has fired."""
    if signal is not None and signal.aborted:
        raise RetrievalError.from_signal(signal.reason)


def _signal_error(signal: CancelSignal) -> RetrievalError:
    return RetrievalError.from_signal(signal.reason)


async def await_with_signal(awaitable: Awaitable[T], signal: CancelSignal | None) -> T:
    """:func:`ditto.signal.await_with_signal`, raising the matching RetrievalError."""
    return await _await_with_signal(awaitable, signal, error=_signal_error)
