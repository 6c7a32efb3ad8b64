"""Cooperative cancellation that also reaches code running in threads.

asyncio task cancellation covers coroutines; a ``CancelSignal`` covers the rest:
SQLite queries in ``asyncio.to_thread``, loops inside providers, HTTP clients
that want a deadline. It mirrors the web's ``AbortController``/``AbortSignal``
pair so the seed's semantics translate one to one.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from .errors import DittoError

__all__ = ["AbortController", "CancelSignal", "CancelledBySignal", "await_with_signal"]

T = TypeVar("T")


class CancelledBySignal(DittoError):
    """Raised by :meth:`CancelSignal.raise_if_aborted`.

    ``code`` is ``TIMEOUT`` when the signal fired because of a deadline,
    ``CANCELLED`` otherwise.
    """

    status_by_code = {"CANCELLED": "cancelled", "TIMEOUT": "timeout"}


class CancelSignal:
    """A one-shot, thread-safe cancellation flag with callbacks.

    Signals are created by an :class:`AbortController`, by :meth:`timeout`, or by
    :meth:`any` (fires when any parent fires).
    """

    __slots__ = ("_callbacks", "_deadline", "_event", "_lock", "_reason", "_timer")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[CancelSignal], None]] = []
        self._reason: str | None = None
        self._timer: asyncio.TimerHandle | threading.Timer | None = None
        self._deadline: float | None = None

    # -- state -------------------------------------------------------------
    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        """``"CANCELLED"`` or ``"TIMEOUT"`` once aborted, else ``None``."""
        return self._reason

    @property
    def deadline(self) -> float | None:
        """Monotonic time at which a timeout signal fires (``None`` if it has none)."""
        return self._deadline

    def remaining(self) -> float | None:
        """Seconds left before the deadline, for clients that take a timeout."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def raise_if_aborted(self) -> None:
        if self._event.is_set():
            raise self.abort_error()

    def abort_error(self) -> CancelledBySignal:
        """The error that stands for this signal having fired (code CANCELLED or TIMEOUT)."""
        code = self._reason or "CANCELLED"
        return CancelledBySignal(code, "The operation was cancelled" if code == "CANCELLED"
                                 else "The operation timed out")

    def wait(self, timeout: float | None = None) -> bool:
        """Block a *thread* until aborted; returns whether it was."""
        return self._event.wait(timeout)

    # -- callbacks ---------------------------------------------------------
    def add_callback(self, callback: Callable[[CancelSignal], None]) -> Callable[[], None]:
        """Run ``callback`` once when the signal fires (at once if it already has).

        Returns a function that removes the callback again.
        """
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback(self)
        return lambda: None

    def _fire(self, reason: str) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        for callback in callbacks:
            callback(self)

    # -- constructors ------------------------------------------------------
    @classmethod
    def timeout(cls, seconds: float) -> CancelSignal:
        """A signal that fires with reason ``TIMEOUT`` after ``seconds``."""
        signal = cls()
        signal._deadline = time.monotonic() + seconds
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            timer = threading.Timer(seconds, signal._fire, args=("TIMEOUT",))
            timer.daemon = True
            signal._timer = timer
            timer.start()
        else:
            signal._timer = loop.call_later(seconds, signal._fire, "TIMEOUT")
        return signal

    @classmethod
    def any(cls, signals: Iterable[CancelSignal | None]) -> CancelSignal:
        """A signal that fires when the first of ``signals`` fires, with its reason."""
        child = cls()
        deadlines = []
        for parent in signals:
            if parent is None:
                continue
            if parent.deadline is not None:
                deadlines.append(parent.deadline)
            parent.add_callback(lambda p: child._fire(p.reason or "CANCELLED"))
        if deadlines:
            child._deadline = min(deadlines)
        return child

    def __repr__(self) -> str:
        state = f"aborted:{self._reason}" if self.aborted else "active"
        return f"<CancelSignal {state}>"


class AbortController:
    """Owns a :class:`CancelSignal` and is the only thing that can fire it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = CancelSignal()

    def abort(self, reason: str = "CANCELLED") -> None:
        self.signal._fire(reason)

    def __repr__(self) -> str:
        return f"<AbortController {self.signal!r}>"




async def await_with_signal(awaitable: Awaitable[T], signal: CancelSignal | None, *,
                            error: Callable[[CancelSignal], BaseException] | None = None) -> T:
    """Await ``awaitable``; if ``signal`` fires first, cancel it and raise ``error(signal)``.

    The awaited coroutine runs *inline* in the current task (no extra task, so
    the fast path costs nothing). When the signal fires, possibly from another
    thread, the current task is cancelled the way ``asyncio.timeout`` does it:
    the coroutine really stops and runs its ``finally`` blocks before we
    return, so nothing keeps running behind an early answer (no
    ``Promise.race``-style release of a concurrency slot). The resulting
    ``CancelledError`` is turned into ``error(signal)`` (default
    :class:`CancelledBySignal`) only when we caused it; any other cancellation
    propagates untouched.
    """
    make_error = error or CancelSignal.abort_error
    if signal is None:
        return await awaitable
    if signal.aborted:
        if inspect.iscoroutine(awaitable):
            awaitable.close()  # never started: avoid "coroutine was never awaited"
        raise make_error(signal)
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
            raise make_error(signal) from None
        raise
    finally:
        state["done"] = True
        remove()
