"""Small shared pieces of the backend providers (text, SQL, Milvus).

They stop early on a fired signal, run blocking driver calls in a thread while
letting the signal interrupt them, and replace any driver exception by one fixed
public message (RET-5: the backend's text — SQL, hosts, paths — never reaches the
caller).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, TypeVar

from ...signal import CancelSignal
from .._cancel import check_signal
from ..errors import BACKEND_ERROR, RetrievalError
from ..types import RetrievalExecutionContext

__all__ = ["backend_error", "check_signal", "context_signal", "run_blocking"]

T = TypeVar("T")

BACKEND_FAILED_MESSAGE: Final = "The search backend failed"


def context_signal(context: RetrievalExecutionContext | None) -> CancelSignal | None:
    return context.signal if context is not None else None


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
