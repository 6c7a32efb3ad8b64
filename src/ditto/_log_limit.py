"""Logging a failure's traceback once per cause and window, so hostile traffic cannot fill the disk.

A node that fails on every call (or a client that keeps sending what makes it fail) would otherwise write
the same traceback, and whatever secret its text holds, thousands of times a minute. The first failure of
a *cause* (its logger's key, the exception type and the line that raised it) is logged with its traceback;
repeats within ``window`` seconds are only counted, and the next line logged for that cause says how many
were left out. Memory is bounded: at most ``max_causes`` causes are remembered (the oldest is forgotten).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["LogLimiter", "failure_cause"]

#: Longest exception text kept in a log line; a hostile input may make an exception's message huge.
MAX_LOGGED_TEXT = 1024
#: Longest traceback kept in one record.
MAX_LOGGED_TRACEBACK = 16 * 1024


def failure_cause(key: str, error: BaseException) -> tuple[str, str, str]:
    """``(key, exception type, file:line that raised)``: failures that differ only in their text are one cause.

    Walks to the last traceback entry directly (no source lines read): this runs on every failure,
    including the ones that are then only counted.
    """
    tb = error.__traceback__
    if tb is None:
        return key, type(error).__qualname__, "?"
    while tb.tb_next is not None:
        tb = tb.tb_next
    return key, type(error).__qualname__, f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"


class LogLimiter:
    """Decides which failures are logged: the first of a cause per ``window`` seconds."""

    def __init__(self, *, window: float = 60.0, max_causes: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self._max_causes = max_causes
        self._clock = clock
        self._lock = threading.Lock()
        #: cause → (time it was last logged, repeats left out since)
        self._causes: OrderedDict[tuple[str, str, str], list[float]] = OrderedDict()

    def admit(self, cause: tuple[str, str, str]) -> int | None:
        """``None`` to stay silent, else the number of repeats left out since this cause was last logged."""
        now = self._clock()
        with self._lock:
            entry = self._causes.get(cause)
            if entry is not None and now - entry[0] < self.window:
                entry[1] += 1
                return None
            left_out = 0 if entry is None else int(entry[1])
            self._causes[cause] = [now, 0]
            self._causes.move_to_end(cause)
            while len(self._causes) > self._max_causes:
                self._causes.popitem(last=False)
            return left_out

    def exception(self, logger: logging.Logger, key: str, error: BaseException, message: str,
                  *args: object) -> None:
        """Log ``message`` with ``error``'s traceback unless its cause was logged within the window."""
        left_out = self.admit(failure_cause(key, error))
        if left_out is None:
            return
        suffix = f" ({left_out} more like it since the last report)" if left_out else ""
        lines = traceback.format_exception(error)
        if sum(map(len, lines)) <= MAX_LOGGED_TRACEBACK:
            logger.error(message + suffix, *args, exc_info=error)
            return
        # The exception's text (or a long chain) would make the record huge: cut every line, then the whole.
        cut = "".join(line if len(line) <= MAX_LOGGED_TEXT else line[:MAX_LOGGED_TEXT] + "…\n" for line in lines)
        if len(cut) > MAX_LOGGED_TRACEBACK:
            cut = cut[:MAX_LOGGED_TRACEBACK // 2] + "…\n" + cut[-MAX_LOGGED_TRACEBACK // 2:]
        logger.error(message + suffix + "\n%s", *args, cut.rstrip("\n"))

