"""Small helpers shared by the CONTEXT tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from ditto.worker.context import ContextError


async def error_code(awaitable: Awaitable[Any]) -> str:
    """The code of the ContextError ``awaitable`` raises (fails the test if it raises nothing)."""
    with pytest.raises(ContextError) as caught:
        await awaitable
    return caught.value.code


async def until(condition: Callable[[], bool]) -> None:
    """Let other tasks run until ``condition()`` holds; no wall-clock sleep, so a stalled box cannot break it."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the other tasks never got there")


class _RecordingReasoning:
    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    async def sample(self, request: Any) -> str:
        self.seen.append(request)
        return "sampled"


class RecordingInfer:
    """A stand-in INFER client for the examples: ``reasoning.sample`` records each request and answers ``"sampled"``.

    The examples only hand it messages; what matters to the tests is what they handed.
    """

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.reasoning = _RecordingReasoning(self.seen)
