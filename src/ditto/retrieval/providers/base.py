"""What a search provider is built from: the public kit every built-in provider uses.

A provider is any object with ``async search(input, context=None)`` returning a
:class:`~ditto.retrieval.RetrievalSearchOutput` (or a dict of that shape). The
helpers here give a new provider the same behaviour as the built-in ones
without reading their code::

    from ditto.retrieval import RetrievalSearchOutput
    from ditto.retrieval.providers.base import begin_search, query_text, run_blocking

    class GrepProvider:
        def __init__(self, lines: list[str]) -> None:
            self.lines = lines

        async def search(self, input, context=None):
            request, signal = begin_search(input, context)      # validated; stops if cancelled
            words = query_text(request, "grep").lower().split()
            hits = await run_blocking(lambda: [line for line in self.lines
                                               if all(w in line.lower() for w in words)], signal)
            return RetrievalSearchOutput(candidates=[{"content": h} for h in hits[: request.limit or 10]],
                                         target=request.target, strategy=request.strategy)

``ditto.testing.RetrievalProviderContract`` checks such a provider against the
contract (cancellation, hidden backend errors, filters, limits, output shape).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ...signal import CancelSignal
from ..config import context_limit, pick_number
from ..errors import INVALID_INPUT as _INVALID_INPUT
from ..errors import RetrievalError, as_retrieval_error, await_with_signal, check_signal
from ..types import RetrievalExecutionContext, RetrievalSearchInput
from ..validation import coerce_input

__all__ = [
    "as_retrieval_error",
    "await_with_signal",
    "begin_search",
    "check_signal",
    "context_limit",
    "context_signal",
    "pick_number",
    "query_text",
    "run_blocking",
]

T = TypeVar("T")


def context_signal(context: RetrievalExecutionContext | None) -> CancelSignal | None:
    """The caller's signal from a provider's ``context`` (``None`` when called without one)."""
    return context.signal if context is not None else None


def begin_search(input: RetrievalSearchInput | Mapping[str, Any], context: RetrievalExecutionContext | None
                 ) -> tuple[RetrievalSearchInput, CancelSignal | None]:
    """What every search starts with: a validated request (a dict is checked like the SDK checks it),
    and a ``RETRIEVAL_CANCELLED``/``RETRIEVAL_TIMEOUT`` right away if the signal already fired."""
    request = coerce_input(input)
    signal = context_signal(context)
    check_signal(signal)
    return request, signal


def query_text(request: RetrievalSearchInput, backend: str) -> str:
    """The query as text; full-text backends cannot search vectors or structured queries
    (``RETRIEVAL_INVALID_INPUT`` naming ``backend``)."""
    text = request.query.content
    if not isinstance(text, str):
        raise RetrievalError(_INVALID_INPUT, f"{backend} needs query.content to be a string")
    return text


async def run_blocking(function: Callable[[], T], signal: CancelSignal | None,
                       interrupt: Callable[[], None] | None = None) -> T:
    """Run a blocking driver call in a thread; a fired signal calls ``interrupt`` (e.g. sqlite3's).

    The call is awaited to its end when the signal fires, so a connection is not
    handed back while a statement still runs on it; afterwards a fired signal wins
    over whatever the interrupted statement raised or returned. Any other
    exception becomes ``RETRIEVAL_BACKEND_ERROR`` (text hidden, logged once). Task
    cancellation (``asyncio.timeout``) interrupts the statement as well and
    propagates at once.
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
    except Exception as error:
        check_signal(signal)
        raise as_retrieval_error(error) from None
    finally:
        if remove is not None:
            remove()
    check_signal(signal)
    return result
