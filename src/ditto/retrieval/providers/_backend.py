"""Small shared pieces of the backend providers (text, SQL, Milvus).

They stop early on a fired signal, run blocking driver calls in a thread while
letting the signal interrupt them, and replace any driver exception by one fixed
public message (RET-5: the backend's text — SQL, hosts, paths — never reaches the
caller).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from ...signal import CancelSignal
from .._cancel import check_signal
from ..errors import BACKEND_ERROR, INVALID_INPUT, RetrievalError
from ..types import RetrievalExecutionContext, RetrievalSearchInput
from ..validation import coerce_input

__all__ = ["backend_error", "begin_search", "check_signal", "context_signal", "query_text", "run_blocking"]

T = TypeVar("T")

BACKEND_FAILED_MESSAGE: Final = "The search backend failed"


def context_signal(context: RetrievalExecutionContext | None) -> CancelSignal | None:
    return context.signal if context is not None else None


def begin_search(input: RetrievalSearchInput | Mapping[str, Any], context: RetrievalExecutionContext | None
                 ) -> tuple[RetrievalSearchInput, CancelSignal | None]:
    """What every backend search starts with: a validated request, and stop now if cancelled."""
    request = coerce_input(input)
    signal = context_signal(context)
    check_signal(signal)
    return request, signal


def query_text(request: RetrievalSearchInput, backend: str) -> str:
    """The query as text; full-text backends cannot search vectors or structured queries."""
    text = request.query.content
    if not isinstance(text, str):
        raise RetrievalError(INVALID_INPUT, f"{backend} needs query.content to be a string")
    return text


def backend_error() -> RetrievalError:
    return RetrievalError(BACKEND_ERROR, BACKEND_FAILED_MESSAGE)


async def run_blocking(function: Callable[[], T], signal: CancelSignal | None,
                       interrupt: Callable[[], None] | None = None) -> T:
    """Run ``function`` in a thread; a fired signal calls ``interrupt`` (e.g. sqlite3's).

    The call is awaited to its end when the signal fires, so a connection is not
    handed back while a statement still runs on it; afterwards a fired signal wins
    over whatever the interrupted statement raised or returned. Task cancellation
    (``asyncio.timeout``) interrupts the statement as well and propagates at once.
    """
    check_signal(signal)
    remove: Callable[[], None] | None = None
    if signal is not None and interrupt is not None:
        fire = interrupt
        remove = signal.add_callback(lambda _: fire())
    try:
        result = await asyncio.to_thread(function)
    except asyncio.CancelledError:
        if interrupt is not None:  # the task itself was cancelled: stop the statement too
            interrupt()
        raise
    except RetrievalError:
        check_signal(signal)
        raise
    except Exception:
        check_signal(signal)
        raise backend_error() from None
    finally:
        if remove is not None:
            remove()
    check_signal(signal)
    return result
