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
