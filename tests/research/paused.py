"""``python -m tests.research.paused <point> <ditto args…>``: the real CLI, paused at a stage boundary.

The kill tests need a process that stops at a known point and waits to be
killed. The shipped code has no hook for that; this wrapper patches the
workflow from the outside: ``after:<stage>`` pauses right after that stage's
checkpoint is written, ``mid:evidence`` after the first source's graph of the
evidence stage. It announces ``ditto-research-paused <point>`` on stderr and
waits forever.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any


async def _pause(point: str) -> None:
    sys.stderr.write(f"ditto-research-paused {point}\n")
    sys.stderr.flush()
    await asyncio.Event().wait()


def _install(point: str) -> None:
    from ditto.workflows.research import checkpoints
    from ditto.workflows.research.stages import evidence

    if point.startswith("after:"):
        stage = point.split(":", 1)[1]
        original_save = checkpoints.CheckpointStore.save

        async def save(self: Any, saved: Any, data: Any) -> None:
            await original_save(self, saved, data)
            if saved == stage:
                await _pause(point)

        checkpoints.CheckpointStore.save = save  # type: ignore[method-assign]
    elif point == "mid:evidence":
        original_read = evidence._read_source

        async def read_source(*args: Any, **kwargs: Any) -> None:
            await original_read(*args, **kwargs)
            await _pause(point)

        evidence._read_source = read_source  # type: ignore[assignment]
    else:
        raise SystemExit(f"unknown pause point {point!r}")


if __name__ == "__main__":
    _install(sys.argv[1])
    from ditto.cli.app import app

    app(sys.argv[2:], prog_name="ditto")
