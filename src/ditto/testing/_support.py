"""What every contract suite needs: its own event loop per test and a look at what was logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["LogRecords", "captured_logs", "run"]

T = TypeVar("T")

#: Text a failing backend is made to carry; it must never reach a caller.
#: An identifier on purpose, so a failing backend can use it as a table or collection name.
SECRET = "secret_hunter2_at_10_0_0_7"


def run(awaitable: Awaitable[T]) -> T:
    """Run one test body on a fresh event loop (no pytest plugin needed)."""

    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


class LogRecords(logging.Handler):
    """Every record logged anywhere while installed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def with_traceback(self) -> list[logging.LogRecord]:
        """The records that carry an exception (a hidden failure logged for operators)."""
        return [record for record in self.records if record.exc_info is not None and record.exc_info[1] is not None]


@contextmanager
def captured_logs() -> Iterator[LogRecords]:
    """Collect the root logger's records (WARNING and above at least) for the duration."""
    handler = LogRecords()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    if level == logging.NOTSET or level > logging.WARNING:
        root.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
