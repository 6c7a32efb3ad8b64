"""The request stage: import the sample's internal knowledge on a new task and fix the keys to search.

Internal knowledge keys, in order of precedence: the request's own
``internal_knowledge_keys``; the sample's keys when the task generated its
internal knowledge; otherwise (an application's ``memory`` store without
keys) the tenant's first 12 knowledge keys in key order — the number and the
order are the documented choice, and the brief's coverage names the keys
searched and says how many were left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ....runtime import NodeResult
from ....worker.memory.worker import memory_search_node
from ..errors import ResearchError
from ..records import RequestRecord
from ..sources.knowledge import import_internal_knowledge, internal_memory_key
from ..types import MAX_INTERNAL_KEYS
from .run import StageRun

__all__ = ["KEY_SCAN_LIMIT", "request_stage"]

#: How many of a tenant's knowledge keys are listed to choose the first 12 in key order.
KEY_SCAN_LIMIT: Final = 10_000


async def request_stage(run: StageRun) -> RequestRecord:
    """Import sample knowledge (new tasks only) and decide the internal keys; the first checkpoint."""
    request = run.request
    keys: list[str] = []
    imported = 0
    available: int | None = None
    if "knowledge" in request.sources and request.knowledge in ("internal", "both"):
        if request.memory is None:
            records = _sample_internal_records(run)
            imported = await _import(run, records)
            keys = [record["key"] for record in records]
        if request.internal_knowledge_keys is not None:
            keys = list(request.internal_knowledge_keys)
        elif request.memory is not None:
            keys = await _tenant_keys(run)
            available = len(keys)
    run.progress("request", f"new task {run.task.request_id}", count=imported)
    chosen = tuple(keys[:MAX_INTERNAL_KEYS])
    return RequestRecord(request_id=run.task.request_id, internal_keys=chosen, imported=imported,
                         available_keys=available)


def _sample_internal_records(run: StageRun) -> list[dict[str, str]]:
    try:
        document = json.loads(run.task.internal_knowledge_path.read_text(encoding="utf-8"))
        records = document["records"]
        if document.get("tenant") != run.request.tenant:
            return []
        return [{"key": str(record["key"]), "text": str(record["text"])} for record in records]
    except (OSError, ValueError, KeyError, TypeError):
        raise run.fail("failed", "RESEARCH_INVALID_INPUT", "internal-knowledge.json cannot be read") from None


class _LoopClient:
    """A ``RuntimeClient`` whose calls go through the stage run (charged to the loop, traced)."""

    def __init__(self, run: StageRun) -> None:
        self._run = run

    async def invoke(self, node: str, input: Any, *, signal: Any = None, timeout: float | None = None
                     ) -> NodeResult[Any]:
        return await self._run.invoke("request", node, input)


async def _import(run: StageRun, records: Sequence[Mapping[str, Any]]) -> int:
    try:
        return await import_internal_knowledge(_LoopClient(run), tenant=run.request.tenant, records=records)
    except ResearchError as error:
        raise run.fail("failed", error.code, error.message) from None


async def _tenant_keys(run: StageRun) -> list[str]:
    """Every knowledge key of the tenant in the store, sorted (so "the first 12" is well defined)."""
    prefix = internal_memory_key(run.request.tenant, "")
    result = await run.invoke("request", memory_search_node.type,
                              {"query": None, "limit": KEY_SCAN_LIMIT, "filter": {"keyPrefix": prefix}})
    if result.status != "success":
        raise run.fail("failed", "RESEARCH_STORE_UNAVAILABLE", "MEMORY is unavailable")
    keys = {hit.memory.key[len(prefix):] for hit in memory_search_node.output_of(result)
            if hit.memory.key is not None and hit.memory.key.startswith(prefix)}
    return sorted(keys)
