"""``rewrite``: Rewrite a colloquial question into exactly one controlled-vocabulary query and execute it.

Example::

    task = create_task(ResearchRequest(entry="rewrite", question="..."))
    async with open_research_runtime(task) as runtime:
        result = await rewrite.run(runtime, {"directory": str(task.directory)})

Importing this module connects nothing and runs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...runtime import Runtime
from .config import ResearchOptions
from .loop import run_entry
from .types import Entry, ResearchResult

__all__ = ["ENTRY", "run"]

ENTRY: Final[Entry] = "rewrite"


async def run(runtime: Runtime, input: Any, options: ResearchOptions | Mapping[str, Any] | None = None
              ) -> ResearchResult:
    """Run or resume the ``rewrite`` task in ``input["directory"]`` inside one ``runtime.loop()``."""
    return await run_entry(ENTRY, runtime, input, options)
