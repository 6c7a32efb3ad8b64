"""Results: completed, no-evidence, partial and blocked; empty hits are not source faults; limits."""

from __future__ import annotations

import os
from pathlib import Path

from ditto.worker.memory import create_sqlite_memory_store
from ditto.workflows.research import verify_task
from ditto.workflows.research.checkpoints import checkpoint_key
from tests.research.helpers import brief, run, trace, write_knowledge_base
from tests.research.scripted import ScriptedModel

BOTH = {"sources": ["documents", "knowledge"], "knowledge": "external",
        "question": "How long are database backups retained, and how often do backups run?"}


async def test_no_evidence_has_no_citations(base: Path, model: ScriptedModel) -> None:
    """WF-7: nothing matches → no-evidence, zero citations, no invented quotes; the brief still verifies."""
    task, result = await run("multi-source", {**BOTH, "question": "zebra xylophone quasar"}, base, model)
    assert result.status == "no-evidence" and result.citations == 0
    data = brief(task)
    assert data["status"] == "no-evidence" and data["evidence"] == [] and data["citations"] == []
    assert data["failedSources"] == []
    assert {item["status"] for item in data["coverage"]} == {"no-hits"}
    assert model.calls["choose_excerpts"] == 0
    assert verify_task(task.directory) == []


async def test_source_failure_blocks_without_allow_partial(base: Path, model: ScriptedModel, tmp_path: Path) -> None:
    """WF-7: a failing source (missing knowledge base) blocks the brief; nothing is archived as evidence."""
    missing = str(tmp_path / "missing.sqlite")
    task, result = await run("multi-source", {**BOTH, "kb": missing}, base, model)
    assert result.status == "blocked" and result.error is not None
    assert result.error.code == "RESEARCH_SOURCE_FAILED"
    assert [source.source for source in result.failed_sources] == ["knowledge-external"]
    assert result.failed_sources[0].code == "RETRIEVAL_PROVIDER_UNAVAILABLE"
    assert not (task.directory / "artifacts" / "brief.json").exists()
    # documents are read (and their excerpts chosen) before the failing knowledge base; nothing after it
    assert model.calls["choose_excerpts"] == 1
    steps = [record.get("step") for record in trace(task) if record["stage"] == "evidence"]
    assert "excerpts-ext" not in steps and "excerpts-web" not in steps
    store = create_sqlite_memory_store(str(task.directory / "memory.sqlite"))
    try:
        assert await store.get(keys=[checkpoint_key(task.request_id, "evidence", task.checkpoint_id)]) == ()
    finally:
        await store.close()


async def test_partial_with_allow_partial_and_valid_evidence(base: Path, model: ScriptedModel,
                                                             tmp_path: Path) -> None:
    """WF-7: allow_partial keeps the sources that worked: partial, failed sources listed, brief verifies."""
    task, result = await run("multi-source", {**BOTH, "kb": str(tmp_path / "missing.sqlite"), "allowPartial": True},
                             base, model)
    assert result.status == "partial"
    data = brief(task)
    assert data["status"] == "partial" and data["evidence"]
    assert {item["sourceType"] for item in data["evidence"]} == {"document"}
    assert [(s["source"], s["code"]) for s in data["failedSources"]] == [
        ("knowledge-external", "RETRIEVAL_PROVIDER_UNAVAILABLE")]
    assert {c["source"]: c["status"] for c in data["coverage"]} == {"document": "evidence",
                                                                    "knowledge-external": "failed"}
    assert verify_task(task.directory) == []


async def test_allow_partial_without_valid_evidence_is_blocked(base: Path, model: ScriptedModel,
                                                               tmp_path: Path) -> None:
    """WF-7: partial needs some valid evidence; with every source failed the task is blocked."""
    task, result = await run("knowledge-base", {"kb": str(tmp_path / "missing.sqlite"), "allowPartial": True,
                                                "question": "Why?"}, base, model)
    assert result.status == "blocked"
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_corrupt_knowledge_base_is_a_fault(base: Path, model: ScriptedModel, tmp_path: Path) -> None:
    """WF-7: a file that is not a database is a source fault, never an empty result."""
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database" * 100)
    _task, result = await run("knowledge-base", {"kb": str(broken), "question": "Why?"}, base, model)
    assert result.status == "blocked"
    assert result.failed_sources[0].source == "knowledge-external"


async def test_empty_hits_are_not_a_fault(base: Path, model: ScriptedModel, tmp_path: Path) -> None:
    """WF-7: a knowledge base without matching records is no-hits, not a failed source."""
    empty = write_knowledge_base(tmp_path / "empty.sqlite")
    task, result = await run("multi-source", {**BOTH, "kb": str(empty)}, base, model)
    assert result.status == "completed"
    data = brief(task)
    assert data["failedSources"] == []
    assert {c["source"]: c["status"] for c in data["coverage"]}["knowledge-external"] == "no-hits"


async def test_at_most_three_records_per_query(base: Path, model: ScriptedModel, tmp_path: Path) -> None:
    """WF-6: at most 3 document records per query, even when ten files match."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for index in range(10):
        (folder / f"note-{index}.md").write_text(f"# Note {index}\n\nBackups are retained for {index + 20} days.\n",
                                                 encoding="utf-8")
    (folder / "skip.md").write_text("Backups are retained forever.\n", encoding="utf-8")
    task, result = await run("document-search", {"documents": [str(folder)], "ignore": ["skip.md"],
                                                 "question": "How long are backups retained?"}, base, model)
    assert result.status == "completed"
    data = brief(task)
    assert 1 <= len(data["evidence"]) <= 3
    assert all("forever" not in item["quote"] for item in data["evidence"])
    assert all(item["uri"].startswith(folder.resolve().as_uri()) for item in data["evidence"])
    assert not (task.directory / "policy.md").exists()  # own documents: no sample document written


async def test_a_huge_document_is_skipped_without_being_read(tmp_path: Path, base: Path,
                                                             model: ScriptedModel) -> None:
    """WF-12, WF-6: a document over 4 MiB is skipped after reading at most 4 MiB of it; the others are searched."""
    import tracemalloc

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nBackups are kept for 9 days.\n", encoding="utf-8")
    (docs / "huge.md").touch()
    os.truncate(docs / "huge.md", 256 * 1024 * 1024)  # sparse: costs no disk, but reading it whole costs 256 MiB
    tracemalloc.start()
    try:
        task, result = await run("document-search", {"documents": [str(docs)], "question": "How long are backups "
                                                     "kept?"}, base, model)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "completed"
    assert [item["quote"] for item in brief(task)["evidence"]] == ["Backups are kept for 9 days."]
    assert peak < 64 * 1024 * 1024


async def test_binary_files_and_symlink_loops_in_a_documents_folder(tmp_path: Path, base: Path,
                                                                    model: ScriptedModel) -> None:
    """WF-12: a documents folder holding a binary file named .md and a symlink loop is searched without hanging;
    the binary file is skipped and only the real document is quoted."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "ops.md").write_text("# Ops\n\nBackups are kept for 9 days.\n", encoding="utf-8")
    (docs / "image.md").write_bytes(bytes(range(256)) * 64)
    (docs / "sub" / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "self").symlink_to(docs / "self")
    task, result = await run("document-search", {"documents": [str(docs)], "question": "How long are backups "
                                                 "kept?"}, base, model)
    assert result.status == "completed"
    assert [item["quote"] for item in brief(task)["evidence"]] == ["Backups are kept for 9 days."]
    assert verify_task(task.directory) == []
