"""Task checkpoints in MEMORY and their mirror in the CONTEXT scoped cache (seed 004, "检查点与继续执行").

MEMORY is the record of truth: after each stage one ``MEMORY.WRITE`` stores
``retrieval:<requestId>:<stage>:<taskId>`` with content ``{"kind": "research-checkpoint",
"stage", "requestId", "taskId", "data"}`` (an atomic SQLite transaction: a killed
process leaves the previous stages only). Two tasks with the same request share
the request id but never a key: when they share a MEMORY store (an
application's own ``--memory``) each resumes its own stages, and a new task
reads its sources afresh (seed 004: a new task fetches a new version of the
material; an archived stage is never requested again). Tasks made before task
ids existed keep the seed's ``retrieval:<requestId>:<stage>``. The CONTEXT cache, scoped to the request and
the task directory, holds one item per archived stage with the stage's digest;
it lives in Redis when ``DITTO_WORKER_CONTEXT_REDIS_URL`` is set. When the cache
is missing (expired) or disagrees with MEMORY it is rebuilt from MEMORY. Either
store being unavailable fails the task before anything is written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ...contracts import thaw_json
from ...errors import DittoError
from ...runtime import NodeResult
from ...worker.context.worker import context_load_node
from ...worker.memory.worker import memory_get_node, memory_write_node
from .errors import ResearchError
from .types import Stage

__all__ = ["STAGES", "CheckpointStore", "cache_scope", "checkpoint_key"]

STAGES: Final[tuple[Stage, ...]] = ("request", "queries", "evidence", "brief")
_KIND: Final = "research-checkpoint"

Invoke = Callable[[str, str, Any], Awaitable[NodeResult[Any]]]


def checkpoint_key(request_id: str, stage: str, task_id: str | None = None) -> str:
    """The MEMORY key of a task's stage; never matched by internal knowledge (``knowledge:`` keys)."""
    return f"retrieval:{request_id}:{stage}" if task_id is None else f"retrieval:{request_id}:{stage}:{task_id}"


def cache_scope(request_id: str, directory: str) -> dict[str, str]:
    """The CONTEXT scope of a task: the request id plus a digest of the task directory."""
    return {"sessionId": request_id, "turnId": hashlib.sha256(directory.encode("utf-8")).hexdigest()[:24]}


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CheckpointStore:
    """Reads and writes one task's checkpoints through MEMORY.* and CONTEXT.* nodes."""

    def __init__(self, invoke: Invoke, request_id: str, directory: str, task_id: str | None = None) -> None:
        self._invoke = invoke
        self._request_id = request_id
        self._task_id = task_id
        self._scope = cache_scope(request_id, directory)

    @property
    def scope(self) -> dict[str, str]:
        return self._scope

    async def load(self) -> dict[str, Any]:
        """The archived stages' data by stage name (``MEMORY.GET`` of the four keys)."""
        keys = [checkpoint_key(self._request_id, stage, self._task_id) for stage in STAGES]
        result = await self._invoke("resume", memory_get_node.type, {"keys": keys})
        if result.status != "success":
            raise ResearchError("RESEARCH_STORE_UNAVAILABLE",
                                "MEMORY is unavailable: the task's checkpoints cannot be read")
        try:
            items = memory_get_node.output_of(result)
        except DittoError:
            raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "MEMORY answered with malformed checkpoints") from None
        archived: dict[str, Any] = {}
        for item in items:
            content = thaw_json(item.content)
            stage = content.get("stage") if isinstance(content, dict) else None
            if (not isinstance(content, dict) or content.get("kind") != _KIND or stage not in STAGES
                    or content.get("requestId") != self._request_id
                    or item.key != checkpoint_key(self._request_id, stage, self._task_id)
                    or content.get("taskId") != self._task_id):
                raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "a task checkpoint in MEMORY is malformed")
            archived[stage] = content.get("data")
        own: dict[str, Any] = {}
        for position, stage in enumerate(STAGES):
            if stage not in archived:  # stages are archived in order; a gap means damage
                if any(later in archived for later in STAGES[position + 1:]):
                    raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "the task's checkpoints are not contiguous")
                break
            own[stage] = archived[stage]
        return own

    async def save(self, stage: Stage, data: Any) -> None:
        """``MEMORY.WRITE`` the stage, then record it in the CONTEXT cache."""
        memory = {"key": checkpoint_key(self._request_id, stage, self._task_id),
                  "content": {"kind": _KIND, "stage": stage, "requestId": self._request_id,
                              **({"taskId": self._task_id} if self._task_id is not None else {}), "data": data},
                  "metadata": {"kind": _KIND}}
        result = await self._invoke(stage, memory_write_node.type, {"memories": [memory]})
        if result.status != "success":
            raise ResearchError("RESEARCH_STORE_UNAVAILABLE", f"MEMORY is unavailable: the {stage} checkpoint "
                                                              "was not written")
        update = await self._invoke(stage, "CONTEXT.UPDATE", {"scope": self._scope, "add": [self._item(stage, data)]})
        if update.status == "success":
            return
        if update.error is not None and update.error.code == "CONTEXT_NOT_FOUND":
            return  # the cache expired mid-run; the next resume rebuilds it from MEMORY
        raise ResearchError("RESEARCH_STORE_UNAVAILABLE", "the CONTEXT cache is unavailable")

    def _item(self, stage: str, data: Any) -> dict[str, Any]:
        return {"id": f"checkpoint:{stage}",
                "content": {"stage": stage, "memoryKey": checkpoint_key(self._request_id, stage, self._task_id),
                            "sha256": _digest(data)},
                "metadata": {"stage": stage, "reusable": True}}

    async def sync_cache(self, archived: Mapping[str, Any]) -> str:
        """Read the cache; rebuild it from ``archived`` when missing or stale. Returns ``hit`` or ``rebuilt``."""
        wanted = {self._item(stage, archived[stage])["id"]: self._item(stage, archived[stage])
                  for stage in STAGES if stage in archived}
        read = await self._invoke("resume", context_load_node.type, {"scope": self._scope})
        if read.status == "success":
            cached = {item.id: thaw_json(item.content) for item in context_load_node.output_of(read).items}
            if cached == {key: item["content"] for key, item in wanted.items()}:
                return "hit"
        elif read.error is None or read.error.code not in ("CONTEXT_NOT_FOUND", "INVALID_STATE"):
            raise ResearchError("RESEARCH_STORE_UNAVAILABLE", "the CONTEXT cache is unavailable")
        rebuilt = await self._invoke("resume", "CONTEXT.LOAD", {"scope": self._scope, "sources": list(wanted.values())})
        if rebuilt.status != "success":
            raise ResearchError("RESEARCH_STORE_UNAVAILABLE", "the CONTEXT cache could not be rebuilt")
        return "rebuilt"
