"""Internal knowledge (MEMORY) and the external knowledge base (RETRIEVAL), kept apart (seed 004).

*Internal* knowledge is what the agent explicitly accepted and stored:
records keyed ``knowledge:<tenant>:<key>`` with content
``{"kind": "knowledge", "tenant", "key", "text"}``, written by
:func:`import_internal_knowledge` through ``MEMORY.WRITE`` and searched with
``MEMORY.SEARCH`` restricted to the request's exact keys (at most 12, at most one
record each). Every hit is checked again here (key in the allowed list,
``content.kind == "knowledge"``, same tenant), so task checkpoints
(``retrieval:<request>:<stage>``) and other tenants' records can never become
knowledge. Model answers and external results are never written back.

*External* knowledge is owned by another system and reached through
``RETRIEVAL.SEARCH`` (target ``research-knowledge``), keeping the record locator
(``source.ref``, e.g. ``knowledge:3``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ....runtime import NodeResult, RuntimeClient
from ....signal import CancelSignal
from ..errors import ResearchError
from ..types import MAX_INTERNAL_KEYS, ResearchRequest, check_knowledge_key, check_tenant

__all__ = [
    "EXTERNAL_TARGET",
    "MAX_IMPORT_RECORDS",
    "InternalRecord",
    "external_search_input",
    "import_internal_knowledge",
    "internal_hits",
    "internal_memory_key",
    "internal_search_input",
    "internal_uri",
]

EXTERNAL_TARGET: Final = "research-knowledge"
#: One import call writes at most this many records (one atomic MEMORY.WRITE).
MAX_IMPORT_RECORDS: Final = 10_000
_KIND: Final = "knowledge"


def internal_memory_key(tenant: str, key: str) -> str:
    return f"knowledge:{tenant}:{key}"


def internal_uri(tenant: str, key: str) -> str:
    return f"memory:knowledge:{tenant}:{key}"


@dataclass(frozen=True, slots=True)
class InternalRecord:
    key: str
    text: str
    uri: str


async def import_internal_knowledge(runtime: RuntimeClient, *, tenant: str, records: Iterable[Mapping[str, Any]],
                                    signal: CancelSignal | None = None) -> int:
    """Import confirmed knowledge for ``tenant`` through ``MEMORY.WRITE``; returns how many records.

    ``records`` are ``{"key": "backup-retention", "text": "..."}``. One write:
    all records are stored or none. Re-importing a key replaces its record.

    Example::

        await import_internal_knowledge(runtime, tenant="acme",
                                        records=[{"key": "backup-retention", "text": "Kept 35 days."}])
    """
    try:
        check_tenant(tenant)
    except ValueError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", f"tenant: {error}") from None
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise ResearchError("RESEARCH_INVALID_INPUT", "records must be a list of {'key': ..., 'text': ...}")
    memories: list[dict[str, Any]] = []
    seen: set[str] = set()
    for record in records:
        if len(memories) >= MAX_IMPORT_RECORDS:
            raise ResearchError("RESEARCH_INVALID_INPUT",
                                f"at most {MAX_IMPORT_RECORDS} records can be imported in one call")
        if not isinstance(record, Mapping):
            raise ResearchError("RESEARCH_INVALID_INPUT", "each record must be a mapping {'key': ..., 'text': ...}")
        key, text = record.get("key"), record.get("text")
        if not isinstance(key, str) or not isinstance(text, str) or not text.strip() or "\x00" in text:
            raise ResearchError("RESEARCH_INVALID_INPUT", "each record needs a string key and a non-blank text")
        try:
            check_knowledge_key(key)
        except ValueError as error:
            raise ResearchError("RESEARCH_INVALID_INPUT", f"key: {error}") from None
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ResearchError("RESEARCH_INVALID_INPUT", "a knowledge text must be valid Unicode") from None
        if len(text) > 100_000:
            raise ResearchError("RESEARCH_INVALID_INPUT", "a knowledge text may have at most 100000 characters")
        if key in seen:
            raise ResearchError("RESEARCH_INVALID_INPUT", f"the key {key!r} is given twice")
        seen.add(key)
        memories.append({"key": internal_memory_key(tenant, key),
                         "content": {"kind": _KIND, "tenant": tenant, "key": key, "text": text},
                         "metadata": {"origin": "import"}})
    if not memories:
        return 0
    result = await runtime.invoke("MEMORY.WRITE", {"memories": memories}, signal=signal)
    if result.status != "success" and result.error is not None and result.error.code.endswith("_INVALID_INPUT"):
        raise ResearchError("RESEARCH_INVALID_INPUT", "MEMORY refused the records as invalid")
    if result.status != "success":
        raise ResearchError("RESEARCH_STORE_UNAVAILABLE", "internal knowledge could not be imported into MEMORY")
    return len(memories)


def internal_search_input(query: str, tenant: str, keys: Sequence[str]) -> dict[str, Any]:
    """``MEMORY.SEARCH`` restricted to the exact allowed keys (one record per key at most)."""
    allowed = [internal_memory_key(tenant, key) for key in keys[:MAX_INTERNAL_KEYS]]
    return {"query": query, "limit": max(1, len(allowed)), "filter": {"key": {"in": allowed}}}


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def internal_hits(result: NodeResult[Any], request: ResearchRequest, keys: Sequence[str]) -> list[InternalRecord]:
    """The hits that really are this tenant's allowed knowledge, one per key, in rank order."""
    tenant = request.tenant
    allowed = {internal_memory_key(tenant, key): key for key in keys[:MAX_INTERNAL_KEYS]}
    seen: set[str] = set()
    records = []
    for hit in result.output or ():
        memory = _field(hit, "memory")
        memory_key = _field(memory, "key")
        content = _field(memory, "content")
        if memory_key not in allowed or memory_key in seen or not isinstance(content, Mapping):
            continue
        if content.get("kind") != _KIND or content.get("tenant") != tenant:
            continue
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        seen.add(memory_key)
        records.append(InternalRecord(allowed[memory_key], text, internal_uri(tenant, allowed[memory_key])))
    return records


def external_search_input(query: str, limit: int, target: str = EXTERNAL_TARGET) -> dict[str, Any]:
    return {"query": {"content": query}, "target": {"name": target}, "limit": limit}
