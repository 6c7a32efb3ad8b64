"""MEMORY in practice: write, get, search and delete long-term records, then inject a search provider.

Run it with ``python examples/memory.py [DIRECTORY]``; it prints a JSON summary.
Without a directory it works in a temporary one. The records use the key
namespaces of the research workflow: ``knowledge:<tenant>:<key>`` for internal
knowledge and ``retrieval:<request_id>:<stage>`` for task checkpoints.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ditto.runtime import create_ditto
from ditto.worker.memory import (
    MemoryCallOptions,
    MemorySearchHit,
    MemorySearchInput,
    SqliteMemoryStore,
    create_memory_worker,
    create_sqlite_memory_store,
)


class TenantKnowledgeSearch:
    """A MemorySearchProvider that only ever searches one tenant's knowledge namespace.

    Injected with ``create_memory_worker(store=..., search=...)`` it replaces the
    store's own search: every MEMORY.SEARCH is pinned to ``knowledge:<tenant>:``
    whatever filter the caller sent, and each hit says where it came from.
    """

    def __init__(self, store: SqliteMemoryStore, tenant: str) -> None:
        self._store = store
        self._prefix = f"knowledge:{tenant}:"

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None
                     ) -> list[dict[str, Any]]:
        pinned = input.model_copy(update={"filter": {"keyPrefix": self._prefix}})
        hits: tuple[MemorySearchHit, ...] = await self._store.search(pinned, options)
        return [{"memory": hit.memory, "score": hit.score, "metadata": {"namespace": self._prefix}} for hit in hits]


async def main(directory: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        path = (directory or Path(scratch)) / "memory.sqlite"
        async with create_sqlite_memory_store(path) as store:
            runtime = create_ditto(workers=[create_memory_worker(store=store)])

            written = (await runtime.invoke("MEMORY.WRITE", {"memories": [
                {"key": "knowledge:acme:retention", "content": {"kind": "knowledge", "tenant": "acme",
                                                                "text": "Backups are kept for 35 days."}},
                {"key": "knowledge:acme:backup", "content": {"kind": "knowledge", "tenant": "acme",
                                                             "text": "A backup runs every 6 hours."}},
                {"key": "knowledge:globex:retention", "content": {"kind": "knowledge", "tenant": "globex",
                                                                  "text": "Backups are kept for 90 days."}},
                {"key": "retrieval:req-1:queries", "content": {"queries": ["backup retention days"]}},
            ]})).unwrap()

            got = (await runtime.invoke("MEMORY.GET", {"keys": ["retrieval:req-1:queries", "missing"]})).unwrap()

            searched = (await runtime.invoke("MEMORY.SEARCH", {
                "query": "how many days are backups kept", "limit": 5,
                "filter": {"keyPrefix": "knowledge:acme:"}})).unwrap()

            # Seed 004's internal knowledge search: only the allowed exact keys (≤ 12), one record each.
            allowed = ["knowledge:acme:retention", "knowledge:acme:unknown"]
            exact = (await runtime.invoke("MEMORY.SEARCH", {
                "query": "backups kept days", "limit": len(allowed), "filter": {"key": {"in": allowed}}})).unwrap()

            deleted = (await runtime.invoke("MEMORY.DELETE", {"keys": ["retrieval:req-1:queries"]})).unwrap()
            await runtime.close()

            # The same store, with an injected provider that pins every search to one tenant.
            scoped = create_ditto(workers=[create_memory_worker(store=store,
                                                                search=TenantKnowledgeSearch(store, "globex"))])
            injected = (await scoped.invoke("MEMORY.SEARCH", {"query": "backups kept days", "limit": 5})).unwrap()
            await scoped.close()

    return {
        "written": [item.key for item in written],
        "got": [item.key for item in got],
        "searched": [{"key": hit.memory.key, "text": hit.memory.content["text"], "score": round(hit.score, 4)}
                     for hit in searched],
        "exact": [hit.memory.key for hit in exact],
        "deleted": deleted["deleted"],
        "injected": [{"key": hit.memory.key, "namespace": hit.metadata["namespace"]} for hit in injected],
    }


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    print(json.dumps(asyncio.run(main(target)), indent=2))
