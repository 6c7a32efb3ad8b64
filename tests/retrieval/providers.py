"""Small real providers used by the RETRIEVAL tests (plain classes, no mocking)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ditto.retrieval import RetrievalExecutionContext, RetrievalSearchInput


class ListProvider:
    """Returns a fixed candidate list (cut to the requested limit) and records every call."""

    def __init__(self, candidates: list[dict[str, Any]], *, target_name: str | None = None) -> None:
        self.candidates = candidates
        self.calls: list[tuple[RetrievalSearchInput, RetrievalExecutionContext | None]] = []
        self.target_name = target_name

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                     ) -> dict[str, Any]:
        self.calls.append((input, context))
        limit = input.limit or 10
        target = input.target.model_dump(exclude_none=True)
        return {"candidates": self.candidates[:limit], "target": target, "strategy": input.strategy}


class RawProvider:
    """Returns whatever ``make(input)`` builds, unchecked (for output-validation tests)."""

    def __init__(self, make: Callable[[RetrievalSearchInput], Any]) -> None:
        self.make = make

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None) -> Any:
        return self.make(input)


class FailingProvider:
    def __init__(self, error: BaseException, delay: float = 0.0) -> None:
        self.error = error
        self.delay = delay

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None) -> Any:
        await asyncio.sleep(self.delay)
        raise self.error


class SlowProvider:
    """Sleeps cooperatively; records whether it finished or was cancelled (proves no early release)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = asyncio.Event()
        self.finished = False
        self.cancelled = False
        self.signals: list[Any] = []

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                     ) -> Mapping[str, Any]:
        self.signals.append(context.signal if context else None)
        self.started.set()
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.finished = True
        return {"candidates": [], "target": input.target.model_dump(exclude_none=True)}


def docs(*ids: str, target: str = "kb") -> list[dict[str, Any]]:
    return [{"id": i, "content": f"doc {i}", "source": {"target": target, "ref": i}} for i in ids]
