"""``expand``: Choose 2-3 distinct controlled-vocabulary queries, execute each, deduplicate results, keep each
result's query.

Example::

    task = create_task(ResearchRequest(entry="expand", question="..."))
    async with open_research_runtime(task) as runtime:
        result = await expand.run(runtime, {"directory": str(task.directory)})

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

ENTRY: Final[Entry] = "expand"


async def run(runtime: Runtime, input: Any, options: ResearchOptions | Mapping[str, Any] | None = None
              ) -> ResearchResult:
    """Run or resume the ``expand`` task in ``input["directory"]`` inside one ``runtime.loop()``."""
    return await run_entry(ENTRY, runtime, input, options)
