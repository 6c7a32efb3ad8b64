"""MEMORY as the seeds use it: seed 000's remote search adapter, seed 001's graphs with CONTEXT,
and seed 004's internal knowledge and task checkpoints (MEM-1, MEM-2, MEM-3).

Seed 004 (内部与外部知识库, 检查点与继续执行) is what the research workflow builds on:
internal knowledge lives under ``knowledge:<tenant>:<key>`` and is searched with an
exact-key filter over at most 12 allowed keys, at most one record each; task
checkpoints live under ``retrieval:<requestId>:<stage>``, are written and read back
with MEMORY.WRITE / MEMORY.GET, survive the process that wrote them, and are never
returned by a knowledge search.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ditto.contracts import Reference, js_json_dumps, thaw_json
from ditto.retrieval import RetrievalTargetRegistry, create_retrieval_worker
from ditto.retrieval.adapters.memory import RemoteRetrievalSearchProvider
from ditto.runtime import NodeResult, create_ditto, graph
from ditto.worker.context import create_context, create_context_worker
from ditto.worker.memory import (
    DittoMemoryError,
    MemoryItem,
    MemorySearchHit,
    SqliteMemoryStore,
    create_memory,
    create_memory_worker,
    create_sqlite_memory_store,
)

ROOT = Path(__file__).resolve().parents[2]


# -- seed 000: MEMORY 可选转接 --------------------------------------------------------


class AgentMemoryIndex:
    """A RETRIEVAL provider for the target ``agent-memory`` whose candidates carry a typed ``source``."""

    async def search(self, input: Any, context: Any = None) -> dict[str, Any]:
        return {"candidates": [
            {"id": "m1", "content": "prefers British English", "score": 0.75, "metadata": {"lang": "en-GB"},
             "source": {"target": "agent-memory", "ref": "m1"}},
            {"id": "m2", "content": {"text": "meetings in the morning"}},
        ][: input.limit], "target": {"name": "agent-memory"}, "strategy": "vector"}


def seed_map_output(output: Any) -> list[dict[str, Any]]:
    """The seed's ``mapOutput``, transliterated: the candidate's typed ``source`` goes into hit metadata."""
    hits = []
    for candidate in output.candidates:
        if not candidate.id:
            raise ValueError("Missing Memory ID")
        hits.append({
            "memory": {"id": candidate.id, "content": candidate.content,
                       **({} if candidate.metadata is None else {"metadata": candidate.metadata})},
            **({} if candidate.score is None else {"score": candidate.score}),
            "metadata": {"source": candidate.source},
        })
    return hits


async def test_seed_000_remote_search_with_the_seed_map_output(store: SqliteMemoryStore) -> None:
    """MEM-3: seed 000's RemoteRetrievalSearchProvider example, mapOutput and all, answers MEMORY.SEARCH.

    Typed values a mapper copies into a hit (``metadata: {source: candidate.source}``) arrive as the
    JSON objects they are in the seed, not as a MEMORY_BACKEND_ERROR.
    """
    providers = RetrievalTargetRegistry({"agent-memory": {"default_strategy": "vector",
                                                          "providers": {"vector": AgentMemoryIndex()}}})
    runtime = create_ditto(workers=[create_retrieval_worker(providers=providers)])
    search = RemoteRetrievalSearchProvider(runtime=runtime, target={"name": "agent-memory"},
                                           map_output=seed_map_output)
    runtime.register(create_memory_worker(store=store, search=search))
    result = await runtime.invoke("MEMORY.SEARCH", {"query": "language", "limit": 5})
    assert result.status == "success", result.error
    first, second = result.output
    assert (first.memory.id, first.memory.content, first.memory.metadata, first.score) == (
        "m1", "prefers British English", {"lang": "en-GB"}, 0.75)
    assert first.metadata == {"source": {"target": "agent-memory", "ref": "m1"}}
    assert second.memory.content == {"text": "meetings in the morning"} and second.score is None
    assert second.metadata == {"source": None}
    await runtime.close()


async def test_typed_values_in_json_fields_become_their_json_objects(store: SqliteMemoryStore) -> None:
    """MEM-1: a typed model inside content or metadata is stored as its camelCase JSON object."""
    memory = create_memory(store=store)
    reference = Reference(uri="file:///policy.md", media_type="text/markdown")
    (written,) = await memory.write({"memories": [{"id": "r", "content": {"ref": reference, "list": [reference]},
                                                   "metadata": {"source": reference}}]})
    expected = {"uri": "file:///policy.md", "mediaType": "text/markdown"}
    assert thaw_json(written.content) == {"ref": expected, "list": [expected]}
    assert (await memory.get({"ids": ["r"]})) == (written,)
    hit = MemorySearchHit(memory=MemoryItem(id="x", content=reference), metadata={"source": reference})
    assert hit.memory.content == expected and hit.metadata == {"source": expected}


# -- seed 001: MEMORY 与 Context Graph / 写入长期 MEMORY ---------------------------------


async def test_seed_001_memory_to_context_graph_and_back(store: SqliteMemoryStore) -> None:
    """MEM-1: seed 001's graph MEMORY.SEARCH → CONTEXT.UPDATE, then SELECT purpose=memory → MEMORY.WRITE."""
    memory = create_memory({"store": store})
    await memory.write({"memories": [
        {"id": "lang", "content": "language preference: British English"},
        {"id": "tz", "content": {"note": "preference for mornings"}},
        {"id": "other", "content": "unrelated gardening tips"},
    ]})
    runtime = create_ditto(workers=[create_memory_worker({"store": store}), create_context_worker()])

    def to_update(_query: str, deps: dict[str, NodeResult[Any]]) -> dict[str, Any]:
        search = deps["search"]
        if search.status != "success" or search.output is None:
            raise RuntimeError(search.error.code if search.error else search.status)
        return {"context": {"items": []}, "ingress": [{
            "id": f"memory:{hit.memory.id}", "sourceNode": "MEMORY.SEARCH",
            "content": hit.memory.content if isinstance(hit.memory.content, str) else js_json_dumps(hit.memory.content),
            "metadata": {"memoryId": hit.memory.id, **({} if hit.score is None else {"relevance": hit.score})},
        } for hit in search.output]}

    plan = (graph("memory-context")
            .node("search", "MEMORY.SEARCH", [], lambda query, _deps: {"query": query, "limit": 5})
            .node("context", "CONTEXT.UPDATE", ["search"], to_update))
    result = await runtime.run(plan, "language preference")
    await runtime.close()
    assert result.status == "success"
    context = result["context"].output
    assert [item.id for item in context.items] == ["memory:lang", "memory:tz"]
    assert context.items[1].content == '{"note":"preference for mornings"}'
    assert all(item.metadata["relevance"] > 0 for item in context.items)

    selected = await create_context().select({"context": context, "purpose": "memory", "limit": 8})
    written = await memory.write({"memories": [{"content": item.content, "metadata": {"contextItemId": item.id}}
                                               for item in selected.context.items]})
    assert [item.metadata for item in written] == [{"contextItemId": item.id} for item in selected.context.items]
    assert len({item.id for item in written}) == len(written) == len(selected.context.items)


# -- seed 004: internal knowledge and task checkpoints -------------------------------------


def knowledge(tenant: str, key: str, text: str) -> dict[str, Any]:
    return {"key": f"knowledge:{tenant}:{key}", "content": {"kind": "knowledge", "tenant": tenant, "text": text}}


async def import_knowledge(store: SqliteMemoryStore) -> None:
    """What the CLI imports from internal-knowledge.json, plus another tenant and a task's checkpoints."""
    memory = create_memory(store=store)
    await memory.write({"memories": [
        *(knowledge("acme", f"topic-{n:02d}", f"Backups of system {n} are kept for {30 + n} days.")
          for n in range(15)),
        knowledge("globex", "topic-00", "Backups are kept for 90 days."),
        {"key": "retrieval:req-1:queries", "content": {"queries": ["backups kept days"], "stage": "queries"}},
        {"key": "retrieval:req-1:evidence", "content": {"quotes": ["Backups are kept for 31 days."]}},
    ]})


async def test_seed_004_internal_knowledge_exact_key_filter(store: SqliteMemoryStore) -> None:
    """MEM-2: internal knowledge is searched with an exact-key filter over ≤12 allowed keys, ≤1 record each;
    other keys of the tenant, other tenants and task checkpoints never appear, whatever they contain."""
    await import_knowledge(store)
    allowed = [f"knowledge:acme:topic-{n:02d}" for n in range(0, 24, 2)]  # 12 keys, 4 of them never written
    runtime = create_ditto(workers=[create_memory_worker(store=store)])
    result = await runtime.invoke("MEMORY.SEARCH", {"query": "how many days are backups kept", "limit": len(allowed),
                                                    "filter": {"key": {"in": allowed}}})
    await runtime.close()
    assert result.status == "success"
    keys = [hit.memory.key for hit in result.output]
    assert sorted(keys) == [f"knowledge:acme:topic-{n:02d}" for n in range(0, 15, 2)]  # each written key once
    assert all(hit.memory.content["kind"] == "knowledge" and hit.memory.content["tenant"] == "acme"
               for hit in result.output)
    assert all(hit.score is not None and hit.score > 0 for hit in result.output)
    # One key at a time (the other way to ask for "at most 1 record per key").
    memory = create_memory(store=store)
    for key in ("knowledge:acme:topic-03", "knowledge:acme:missing", "retrieval:req-1:evidence"):
        hits = await memory.search({"query": "backups kept days", "limit": 1, "filter": {"key": key}})
        assert [hit.memory.key for hit in hits] == ([] if "missing" in key else [key])
    # Rewriting a knowledge key (a corrected import) still leaves one record under it.
    await memory.write({"memories": [knowledge("acme", "topic-00", "Backups are now kept for 60 days.")]})
    hits = await memory.search({"query": "backups kept", "filter": {"key": {"in": ["knowledge:acme:topic-00"]}}})
    assert [thaw_json(hit.memory.content)["text"] for hit in hits] == ["Backups are now kept for 60 days."]


async def test_seed_004_namespaces_keep_tenants_and_tasks_apart(store: SqliteMemoryStore) -> None:
    """MEM-2: a tenant's knowledge namespace and a task's checkpoint namespace never see each other's records."""
    await import_knowledge(store)
    memory = create_memory(store=store)
    acme = await memory.search({"query": "backups kept days", "limit": 100, "filter": {"keyPrefix": "knowledge:acme:"}})
    assert len(acme) == 15 and all(hit.memory.key.startswith("knowledge:acme:") for hit in acme if hit.memory.key)
    tasks = await memory.search({"query": None, "limit": 100, "filter": {"keyPrefix": "retrieval:req-1:"}})
    assert [hit.memory.key for hit in tasks] == ["retrieval:req-1:evidence", "retrieval:req-1:queries"]
    assert await memory.search({"query": None, "filter": {"keyPrefix": "retrieval:req-10:"}}) == ()


async def test_seed_004_checkpoints_are_written_replaced_and_resumed(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-1/MEM-2: stage checkpoints retrieval:<requestId>:<stage> are written with MEMORY.WRITE, read back with
    MEMORY.GET by exact key in stage order, replaced in place, and read by another process (a resumed run)."""
    runtime = create_ditto(workers=[create_memory_worker(store=store)])
    stages = ("request", "queries", "evidence", "report")

    async def checkpoint(stage: str, content: Any) -> None:
        result = await runtime.invoke("MEMORY.WRITE", {"memories": [{"key": f"retrieval:req-7:{stage}",
                                                                      "content": content}]})
        assert result.status == "success"

    async def archived() -> dict[str, Any]:
        result = await runtime.invoke("MEMORY.GET", {"keys": [f"retrieval:req-7:{stage}" for stage in stages]})
        assert result.status == "success"
        return {item.key.rsplit(":", 1)[1]: thaw_json(item.content) for item in result.output if item.key}

    await checkpoint("request", {"question": "How long are backups kept?"})
    await checkpoint("queries", {"queries": ["backup retention"]})
    assert await archived() == {"request": {"question": "How long are backups kept?"},
                                "queries": {"queries": ["backup retention"]}}
    # A stage re-run before its report was written replaces its checkpoint instead of adding a second one.
    await checkpoint("queries", {"queries": ["backup retention", "retention days"]})
    await checkpoint("evidence", {"quotes": [{"text": "kept for 35 days", "sha256": "0" * 64}]})
    assert list(await archived()) == ["request", "queries", "evidence"]
    listed = await runtime.invoke("MEMORY.SEARCH", {"query": None, "limit": 10,
                                                    "filter": {"keyPrefix": "retrieval:req-7:"}})
    assert len(listed.output) == 3
    await runtime.close()
    # A strict GET names a missing stage as MEMORY_NOT_FOUND (a controller may resume from there).
    with pytest.raises(DittoMemoryError) as raised:
        await create_memory(store=store).get({"keys": ["retrieval:req-7:report"], "strict": True})
    assert raised.value.code == "MEMORY_NOT_FOUND"
    await store.close()
    # Another process resuming the task reads exactly what was committed.
    script = ("import asyncio, json, sys\n"
              "from ditto.worker.memory import create_memory, create_sqlite_memory_store\n"
              "async def main():\n"
              "    async with create_sqlite_memory_store(sys.argv[1]) as store:\n"
              "        items = await create_memory(store=store).get({'keys': sys.argv[2:]})\n"
              "        print(json.dumps({item.key: item.content for item in items}))\n"
              "asyncio.run(main())\n")
    keys = [f"retrieval:req-7:{stage}" for stage in stages]
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script, str(db_path), *keys], cwd=ROOT,
                                   capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    resumed = json.loads(done.stdout)
    assert list(resumed) == keys[:3]
    assert resumed["retrieval:req-7:queries"] == {"queries": ["backup retention", "retention days"]}


async def test_seed_004_unavailable_memory_fails_the_task(tmp_path: Path) -> None:
    """MEM-2: MEMORY unavailable (the task directory is gone) is MEMORY_BACKEND_ERROR, never an empty answer."""
    async with create_sqlite_memory_store(tmp_path / "gone" / "memory.sqlite") as store:
        memory = create_memory(store=store)
        for call in (memory.get({"keys": ["retrieval:req-1:queries"]}),
                     memory.search({"query": "x", "filter": {"key": {"in": ["knowledge:acme:a"]}}})):
            with pytest.raises(DittoMemoryError) as raised:
                await call
            assert raised.value.code == "MEMORY_BACKEND_ERROR" and "gone" not in str(raised.value)
