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

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from ....contracts import thaw_json
from ....contracts.json import plain_json
from ....runtime import Graph, NodeResult, RuntimeClient, graph
from ....signal import CancelSignal
from ....worker.memory.worker import memory_search_node
from ..config import MAX_PASSAGES_PER_PAGE
from ..errors import ResearchError
from ..records import Passage
from ..types import MAX_INTERNAL_KEYS, QueryRecord, ResearchRequest, check_knowledge_key, check_tenant
from .base import SourceHits, SourceLimits, SourceSetup, constant_input, failed_source, retrieval_candidates
from .spans import ranked_spans

__all__ = [
    "EXTERNAL_TARGET",
    "MAX_IMPORT_RECORDS",
    "ExternalKnowledgeSource",
    "InternalKnowledgeSource",
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


def internal_hits(result: NodeResult[Any], request: ResearchRequest, keys: Sequence[str]) -> list[InternalRecord]:
    """The hits that really are this tenant's allowed knowledge, one per key, in rank order."""
    tenant = request.tenant
    allowed = {internal_memory_key(tenant, key): key for key in keys[:MAX_INTERNAL_KEYS]}
    seen: set[str] = set()
    records = []
    for hit in memory_search_node.output_of(result):
        memory = hit.memory
        content = memory.content
        if memory.key not in allowed or memory.key in seen or not isinstance(content, Mapping):
            continue
        if content.get("kind") != _KIND or content.get("tenant") != tenant:
            continue
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        seen.add(memory.key)
        records.append(InternalRecord(allowed[memory.key], text, internal_uri(tenant, allowed[memory.key])))
    return records


def external_search_input(query: str, limit: int, target: str = EXTERNAL_TARGET) -> dict[str, Any]:
    return {"query": {"content": query}, "target": {"name": target}, "limit": limit}


#: Passages of one knowledge record shown to the model: like a web page's (seed 004: 2 per page).
MAX_RECORD_PASSAGES: Final = MAX_PASSAGES_PER_PAGE


def record_passages(setup: SourceSetup, source_type: str, text: str, uri: str, locator: dict[str, Any],
                    query: str) -> list[Passage]:
    """A knowledge record's passages over its own snapshot (the record's text, UTF-8).

    A short record is one passage, shown whole; a long one is cut like a document
    and its :data:`MAX_RECORD_PASSAGES` passages that best match ``query`` are
    shown (its first, when none shares a term: the search found the record), grouped
    by the record's URI so its excerpts count together.
    """
    digest = setup.save_snapshot(text.encode("utf-8"))
    spans = ranked_spans(text, [query], MAX_RECORD_PASSAGES, fallback=True)
    grouped = uri if len(spans) > 1 else None
    return [Passage(id="", source_type=source_type, uri=uri, snapshot_sha256=digest,
                    text=text[span.start:span.end], start=span.start, end=span.end, query=query,
                    found_by=(query,), locator=locator, page=grouped) for span, _ in spans]


class InternalKnowledgeSource:
    """``knowledge-internal``: ``MEMORY.SEARCH`` restricted to the request's exact keys (≤ 12, one record each).

    The keys are decided in the request stage (the request's own, the sample's,
    or the first 12 of the tenant's keys in key order) and named in the brief's coverage.
    """

    source_type = "knowledge-internal"
    limits = SourceLimits(records_per_query=1)

    def __init__(self, setup: SourceSetup) -> None:
        self.setup = setup
        self.keys = list(setup.request_record.internal_keys)

    def plan(self, queries: Sequence[QueryRecord]) -> Graph | None:
        if not self.keys:
            return None
        plan = graph("research-knowledge-internal")
        for index, query in enumerate(queries):
            plan = plan.node(f"q{index}", memory_search_node.type, (), constant_input(
                internal_search_input(query.text, self.setup.request.tenant, self.keys)))
        return plan

    def _notes(self) -> tuple[str, ...]:
        available = self.setup.request_record.available_keys
        if available is None or available <= len(self.keys):
            return ()
        return (f"the tenant has {available} knowledge keys; the first {len(self.keys)} in key order were "
                "searched (name the keys to search with internal_knowledge_keys / --internal-key)",)

    def collect(self, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]]) -> SourceHits:
        request = self.setup.request
        passages: list[Passage] = []
        searched = tuple(self.keys)
        notes = self._notes()
        for index, query in enumerate(queries):
            result = results.get(f"q{index}")
            if result is None:
                continue
            if result.status != "success":
                return SourceHits(failure=failed_source(self.source_type, result), searched=searched, notes=notes)
            for record in internal_hits(result, request, self.keys):
                passages.extend(record_passages(self.setup, self.source_type, record.text, record.uri,
                                                {"memoryKey": internal_memory_key(request.tenant, record.key)},
                                                query.text))
        return SourceHits(passages=passages, hits=len(passages), searched=searched, notes=notes)


def external_target(request: ResearchRequest) -> str:
    """The RETRIEVAL target of the external knowledge: ``kb="target:<name>"`` or the task's own."""
    kb = request.kb
    return kb[len("target:"):] if kb is not None and kb.startswith("target:") else EXTERNAL_TARGET


def external_base_uri(setup: SourceSetup) -> str:
    """Where external records live, without credentials: a file URI, a DSN host/db or a target name."""
    kb = setup.request.kb
    if kb is None:
        return setup.task.knowledge_path.as_uri()
    if kb.startswith("target:"):
        return f"retrieval:{kb[len('target:'):]}"
    if kb.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(kb)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        return f"postgresql://{host}{port}{parts.path}"
    return Path(kb).resolve().as_uri()


class ExternalKnowledgeSource:
    """``knowledge-external``: ``RETRIEVAL.SEARCH`` on the external target, at most 3 records per query,
    each record's locator (target and ``source.ref``) kept."""

    source_type = "knowledge-external"
    limits = SourceLimits(records_per_query=3)

    def __init__(self, setup: SourceSetup) -> None:
        self.setup = setup
        self.target = external_target(setup.request)

    def plan(self, queries: Sequence[QueryRecord]) -> Graph | None:
        plan = graph("research-knowledge-external")
        for index, query in enumerate(queries):
            plan = plan.node(f"q{index}", "RETRIEVAL.SEARCH", (), constant_input(
                external_search_input(query.text, self.limits.records_per_query or 3, self.target)))
        return plan

    def collect(self, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]]) -> SourceHits:
        found, failure = retrieval_candidates(self.source_type, queries, results, self.limits.records_per_query)
        if failure is not None:
            return SourceHits(failure=failure)
        base_uri = external_base_uri(self.setup)
        passages: list[Passage] = []
        for query, candidate in found:
            content = candidate.content
            text = content if isinstance(content, str) else json.dumps(thaw_json(plain_json(content)),
                                                                       ensure_ascii=False)
            source = candidate.source
            ref = (source.ref if source is not None else None) or candidate.id or ""
            target = (source.target if source is not None else None) or self.target
            passages.extend(record_passages(self.setup, self.source_type, text, f"{base_uri}#{ref}",
                                            {"target": target, "ref": ref}, query.text))
        return SourceHits(passages=passages, hits=len(passages))
