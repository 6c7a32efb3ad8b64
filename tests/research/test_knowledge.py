"""Internal knowledge (MEMORY) and external knowledge (RETRIEVAL): tenants, checkpoints, imports, both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ditto.worker.memory import create_sqlite_memory_store
from ditto.workflows.research import (
    ResearchError,
    ResearchOptions,
    ResearchRequest,
    create_task,
    import_internal_knowledge,
    knowledge_base,
    open_research_runtime,
)
from tests.research.helpers import brief, run, trace
from tests.research.scripted import ScriptedModel, choose_excerpts

QUESTION = "How long are database backups retained?"


async def test_internal_knowledge_never_crosses_tenants(tmp_path: Path, model: ScriptedModel) -> None:
    """WF-4: another tenant's records (and a record claiming another tenant under our key) are never evidence."""
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal"),
                       base_dir=tmp_path)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        await import_internal_knowledge(runtime, tenant="globex", records=[
            {"key": "backup-retention", "text": "Globex: database backups are retained for 999 days."}])
        forged = {"key": "knowledge:acme:forged", "content": {"kind": "knowledge", "tenant": "globex", "key": "forged",
                                                              "text": "database backups retained 777 days"}}
        (await runtime.invoke("MEMORY.WRITE", {"memories": [forged]})).unwrap()
        result = await knowledge_base.run(runtime, {"directory": str(task.directory)}, ResearchOptions())
    assert result.status == "completed"
    data = brief(task)
    assert data["evidence"]
    for item in data["evidence"]:
        assert item["uri"].startswith("memory:knowledge:acme:")
        assert "999" not in item["quote"] and "777" not in item["quote"]


async def test_checkpoints_are_never_knowledge(tmp_path: Path, model: ScriptedModel, base: Path) -> None:
    """WF-4, WF-8: a second task on the first task's MEMORY never returns its checkpoints as knowledge."""
    first, result = await run("knowledge-base", {"knowledge": "internal", "question": QUESTION}, base, model)
    assert result.status == "completed"
    memory = first.directory / "memory.sqlite"
    # The request checkpoint holds the question's words verbatim; the second task asks exactly that.
    second, result = await run("knowledge-base", {"knowledge": "internal", "question": QUESTION, "tenant": "acme",
                                                  "memory": str(memory)}, base, model)
    assert result.status == "completed"
    data = brief(second)
    assert data["evidence"]
    assert all(item["uri"].startswith("memory:knowledge:acme:") for item in data["evidence"])
    assert all("retrieval:" not in item["uri"] for item in data["evidence"])
    assert not (second.directory / "internal-knowledge.json").exists()  # an existing store: nothing imported


async def test_both_keeps_internal_and_external_apart(base: Path, model: ScriptedModel) -> None:
    """WF-4: `both` returns internal and external evidence side by side, never merged into one fact."""
    task, result = await run("knowledge-base", {"knowledge": "both", "question": QUESTION}, base, model)
    assert result.status == "completed"
    data = brief(task)
    kinds = [item["sourceType"] for item in data["evidence"]]
    assert "knowledge-internal" in kinds and "knowledge-external" in kinds
    assert {c["source"] for c in data["coverage"]} == {"knowledge-internal", "knowledge-external"}
    calls = [(r["node"], r.get("step")) for r in trace(task) if r["stage"] == "evidence"]
    assert ("INFER.SAMPLE", "excerpts-int") in calls and ("INFER.SAMPLE", "excerpts-ext") in calls


async def test_internal_mode_does_not_open_the_knowledge_base(base: Path, model: ScriptedModel) -> None:
    """WF-4: internal mode reads memory.sqlite only (no RETRIEVAL call)."""
    task, result = await run("knowledge-base", {"knowledge": "internal"}, base, model)
    assert result.status == "completed"
    assert not [r for r in trace(task) if r["node"] == "RETRIEVAL.SEARCH"]


async def test_import_only_on_new_tasks_and_never_promotes_answers(base: Path, model: ScriptedModel) -> None:
    """WF-4: internal-knowledge.json is imported once (new task); model answers and external results are not."""
    from ditto.workflows.research import ResearchOptions as Options

    task, result = await run("knowledge-base", {"knowledge": "both"}, base, model,
                             options=Options(stop_after="queries"))
    assert result.status == "stopped"
    task, result = await run("knowledge-base", None, base, model, directory=task.directory)
    assert result.status == "completed"
    imports = [r for r in trace(task) if r["stage"] == "request" and r["node"] == "MEMORY.WRITE"]
    assert len(imports) == 2  # one import + one request checkpoint, both in the first process run only
    store = create_sqlite_memory_store(str(task.directory / "memory.sqlite"))
    try:
        hits = await store.search({"query": None, "limit": 100, "filter": {"keyPrefix": "knowledge:"}})
    finally:
        await store.close()
    assert sorted(hit.memory.key or "" for hit in hits) == [
        "knowledge:acme:backup-interval", "knowledge:acme:backup-retention", "knowledge:acme:on-call"]


async def test_import_internal_knowledge_checks_its_input(tmp_path: Path, model: ScriptedModel) -> None:
    """WF-4: the public import refuses bad tenants, keys, texts, record shapes, repeated keys and oversized batches
    with RESEARCH_INVALID_INPUT before writing anything (never a raw exception)."""
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal"),
                       base_dir=tmp_path)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        for tenant, records in [("a:b", [{"key": "k", "text": "t"}]), ("acme", [{"key": "a:b", "text": "t"}]),
                                ("acme", [{"key": "k", "text": "  "}]), ("acme", [{"key": 3, "text": "t"}]),
                                ("acme", [("k", "t")]), ("acme", "kt"), ("acme", None),
                                ("acme", [{"key": "k", "text": "a\ud800b"}]),
                                ("acme", [{"key": "k", "text": "t"}, {"key": "k", "text": "u"}]),
                                ("acme", ({"key": f"k{i}", "text": "t"} for i in range(10_001)))]:
            with pytest.raises(ResearchError) as caught:
                await import_internal_knowledge(runtime, tenant=tenant, records=records)
            assert caught.value.code == "RESEARCH_INVALID_INPUT"
        assert await import_internal_knowledge(runtime, tenant="acme", records=[{"key": "k", "text": "t"}]) == 1
        stored = (await runtime.invoke("MEMORY.GET", {"keys": ["knowledge:acme:k"]})).unwrap()
    assert stored[0].content["kind"] == "knowledge" and stored[0].content["tenant"] == "acme"


async def test_explicit_internal_keys_limit_the_search(base: Path, model: ScriptedModel) -> None:
    """WF-4: only the request's exact keys are searched (at most 12, one record each)."""
    task, result = await run("knowledge-base", {"knowledge": "internal", "internalKnowledgeKeys": ["backup-interval"]},
                             base, model)
    assert result.status == "completed"
    data = brief(task)
    assert {item["uri"] for item in data["evidence"]} == {"memory:knowledge:acme:backup-interval"}
    with pytest.raises(ResearchError):
        await run("knowledge-base", {"knowledge": "internal", "internalKnowledgeKeys": [f"k{i}" for i in range(13)]},
                  base, model)


async def test_a_long_record_is_read_as_passages_and_quoted_where_it_answers(tmp_path: Path) -> None:
    """Issue 17 (passages): a long knowledge record is cut like a document; the built-in model is shown the
    passages that match the query and quotes the paragraph that answers, at its offsets in the record's
    snapshot, which `ditto verify` accepts; a short record stays one passage, shown whole."""
    from ditto.workflows.research import verify_task

    filler = [f"Section {n}. The office kitchen is cleaned on weekday {n} by the facilities team." for n in range(1, 9)]
    answer = "Database backups are retained for 35 days and then deleted by the retention job."
    long_text = "\n\n".join([*filler[:5], answer, *filler[5:]])
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal",
                                       tenant="initech", internal_knowledge_keys=["handbook", "note"]),
                       base_dir=tmp_path)
    shown: list[str] = []

    def excerpts(excerpt_task: Any) -> dict[str, Any]:
        shown.extend(passage.text for passage in excerpt_task.passages)
        return choose_excerpts(excerpt_task)

    model = ScriptedModel({"choose_excerpts": excerpts})
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        await import_internal_knowledge(runtime, tenant="initech", records=[
            {"key": "handbook", "text": long_text},
            {"key": "note", "text": "Backups of the database run nightly."}])
        result = await knowledge_base.run(runtime, {"directory": str(task.directory)}, ResearchOptions())
    assert result.status == "completed"
    data = brief(task)
    handbook = [item for item in data["evidence"] if item["uri"].endswith(":handbook")]
    assert handbook and handbook[0]["quote"] == answer
    assert handbook[0]["start"] == long_text.index(answer) > 0
    assert answer in shown and long_text not in shown  # the record's passages, not the whole record
    assert len([text for text in shown if text in long_text]) <= 2  # at most 2 of its passages, like a web page
    assert "Backups of the database run nightly." in shown  # a short record is one passage, whole
    assert verify_task(task.directory) == []
