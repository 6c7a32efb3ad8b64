"""Every entry completes on the generated sample material and quotes this task's random values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ditto.workflows.research import (
    ENTRIES,
    ResearchOptions,
    create_task,
    document_search,
    open_research_runtime,
    verify_task,
)
from ditto.workflows.research.types import ResearchRequest
from tests.research.helpers import brief, quotes_this_task, run, trace
from tests.research.scripted import ScriptedModel

OFFLINE = [
    ("document-search", {}),
    ("knowledge-base", {"knowledge": "internal"}),
    ("knowledge-base", {"knowledge": "external"}),
    ("knowledge-base", {"knowledge": "both"}),
    ("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"}),
    ("rewrite", {}),
    ("expand", {}),
    ("source-location", {}),
]


@pytest.mark.parametrize(("entry", "request_fields"), OFFLINE)
async def test_entry_completes_and_quotes_this_tasks_values(entry: str, request_fields: dict[str, object],
                                                            base: Path, model: ScriptedModel) -> None:
    """WF-1, WF-3, WF-15: the entry writes a schema-valid, verifiable brief quoting this task's sample values."""
    task, result = await run(entry, request_fields, base, model)
    assert result.status == "completed", result
    data = brief(task)
    assert data["status"] == "completed" and data["requestId"] == task.request_id
    assert data["citations"] == [item["id"] for item in data["evidence"]]
    assert quotes_this_task(data, task)
    assert verify_task(task.directory) == []
    for name in ("request.json", "policy.md", "internal-knowledge.json", "knowledge.sqlite", "memory.sqlite",
                 "artifacts/brief.json", "artifacts/brief.md"):
        assert (task.directory / name).exists(), name
    for item in data["evidence"]:
        assert (task.directory / "snapshots" / item["snapshotSha256"] / "raw").exists()
    markdown = (task.directory / "artifacts" / "brief.md").read_text(encoding="utf-8")
    assert all(item["quote"].split("\n")[0] in markdown for item in data["evidence"])


async def test_two_tasks_draw_their_own_values(base: Path, model: ScriptedModel) -> None:
    """WF-3: sample values are drawn per task, and each brief quotes its own task's material."""
    drawn = set()
    for _ in range(3):
        task, result = await run("document-search", {}, base, model)
        assert result.status == "completed"
        assert quotes_this_task(brief(task), task)
        drawn.add((task.directory / "policy.md").read_text(encoding="utf-8"))
    assert len(drawn) >= 2


async def test_source_types_and_locations(base: Path, model: ScriptedModel) -> None:
    """WF-10, WF-4, WF-15: file lines, database record locator, memory URI; each with its snapshot SHA-256."""
    task, result = await run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"},
                             base, model)
    assert result.status == "completed"
    data = brief(task)
    kinds = {item["sourceType"] for item in data["evidence"]}
    assert kinds == {"document", "knowledge-internal", "knowledge-external"}
    policy = (task.directory / "policy.md").read_text(encoding="utf-8")
    for item in data["evidence"]:
        if item["sourceType"] == "document":
            assert item["uri"] == (task.directory / "policy.md").as_uri()
            assert policy[item["start"]:item["end"]] == item["quote"]
            lines = policy.split("\n")[item["lineStart"] - 1:item["lineEnd"]]
            assert item["quote"] in "\n".join(lines)
        elif item["sourceType"] == "knowledge-internal":
            assert item["uri"].startswith("memory:knowledge:acme:")
        else:
            assert item["uri"].startswith((task.directory / "knowledge.sqlite").as_uri() + "#knowledge:")
            assert item["locator"]["ref"].startswith("knowledge:")


async def test_rewrite_runs_exactly_one_vocabulary_query(base: Path, model: ScriptedModel) -> None:
    """WF-9: rewrite turns the question into one controlled-vocabulary query and executes it."""
    task, result = await run("rewrite", {"vocabulary": ["backup retention period", "access review"]}, base, model)
    assert result.status == "completed"
    data = brief(task)
    assert data["queries"] == [{"text": "backup retention period", "provenance": "rewrite",
                                "vocabularyEntry": "backup retention period"}]
    searches = [r for r in trace(task) if r["node"] == "RETRIEVAL.SEARCH"]
    assert len(searches) == 1


async def test_expand_executes_each_query_and_keeps_provenance(base: Path, model: ScriptedModel) -> None:
    """WF-9: expand chooses 2-3 distinct vocabulary queries, runs each, dedupes results, keeps provenance."""
    vocabulary = ["backup retention period", "backup interval", "database backup schedule", "access review"]
    task, result = await run("expand", {"question": "database backup retention and interval",
                                        "vocabulary": vocabulary}, base, model)
    assert result.status == "completed"
    data = brief(task)
    queries = [query["text"] for query in data["queries"]]
    assert 2 <= len(queries) <= 3 and len(set(queries)) == len(queries)
    assert all(q["provenance"] == "expand" and q["vocabularyEntry"] in vocabulary for q in data["queries"])
    searches = [r for r in trace(task) if r["node"] == "RETRIEVAL.SEARCH"]
    assert len(searches) == len(queries)
    locations = [(item["uri"], item["start"]) for item in data["evidence"]]
    assert len(locations) == len(set(locations))
    for item in data["evidence"]:
        assert item["query"] in queries and item["query"] == item["foundBy"][0]
    assert any(len(item["foundBy"]) > 1 for item in data["evidence"])  # one record found by two queries, kept once


async def test_entry_run_on_a_prepared_task(tmp_path: Path, model: ScriptedModel) -> None:
    """WF-1: the public shape: create_task + open_research_runtime + <entry>.run(runtime, {directory})."""
    task = create_task(ResearchRequest(entry="document-search", question="How long is each backup retained?"),
                       base_dir=tmp_path)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        result = await document_search.run(runtime, {"directory": str(task.directory)},
                                           ResearchOptions())
    assert result.status == "completed" and result.brief is not None
    assert len(ENTRIES) == 8


async def test_loop_budget_is_shared(base: Path, model: ScriptedModel) -> None:
    """WF-1, RT-7: every node call of the task is charged to one loop budget; exhausting it fails cleanly."""
    task, result = await run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"}, base,
                             model, options=ResearchOptions(max_executions=8))
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "RESEARCH_BUDGET_EXHAUSTED"
    assert not (task.directory / "artifacts" / "brief.json").exists()
    assert len(trace(task)) == 8


def test_importing_connects_nothing(tmp_path: Path) -> None:
    """WF-1: importing the package and every entry creates no file and starts nothing."""
    code = ("import ditto.workflows.research as r\n"
            "from ditto.workflows.research import " + ", ".join(e.replace("-", "_") for e in ENTRIES) + "\n"
            "import threading, os\n"
            "assert threading.active_count() == 1\n"
            "print(sorted(os.listdir('.')))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_face_is_exactly_what_a_user_needs() -> None:
    """WF-1: the package exports the eight entries, the request/result/brief types, task creation, the runtime,
    run_research, verify_task, import_internal_knowledge and ResearchError; building blocks stay in their modules."""
    import ditto.workflows.research as research
    from ditto.workflows.research.checkpoints import checkpoint_key
    from ditto.workflows.research.taskdir import TaskLock

    entries = {entry.replace("-", "_") for entry in ENTRIES}
    assert set(research.__all__) == entries | {
        "ENTRIES", "Brief", "Coverage", "Evidence", "FailedSource", "ProgressEvent", "QueryRecord", "ResearchError",
        "ResearchOptions", "ResearchRequest", "ResearchResult", "ResearchTask", "brief_schema", "create_task",
        "import_internal_knowledge", "open_research_runtime", "open_task", "request_id", "run_research",
        "verify_task", "ENTRY_SPECS", "EntrySpec", "Answer", "AnswerSentence", "Passage", "ResearchSource",
        "SourceHits", "SourceLimits", "SourceSetup", "SourceSpec", "register_source", "unregister_source",
        "run_research_loop"}
    assert len(research.__all__) == len(set(research.__all__))
    assert all(callable(getattr(research, name).run) for name in entries)
    assert not hasattr(research, "checkpoint_key") and callable(checkpoint_key) and TaskLock is not None


async def test_options_may_be_a_plain_mapping(base: Path, model: ScriptedModel) -> None:
    """WF-1, WF-8: run() takes options as ResearchOptions or a plain dict (snake_case or camelCase);
    bad options are a ResearchError, never a raw exception."""
    from ditto.workflows.research import ResearchError, run_research

    task, result = await run("document-search", {}, base, model, options={"stopAfter": "queries",  # type: ignore[arg-type]
                                                                       "max_executions": 1024})
    assert result.status == "stopped" and result.stage == "queries"
    for bad in ({"stopAfter": "brief"}, {"maxExecutions": 0}, {"nope": 1}, {"progress": 3}, "queries"):
        with pytest.raises(ResearchError) as caught:
            await run_research("document-search", None, directory=task.directory, options=bad,  # type: ignore[arg-type]
                               env={}, workers=[model.worker()])
        assert caught.value.code == "RESEARCH_INVALID_INPUT", bad
    _, result = await run("document-search", None, base, model, directory=task.directory,
                          options={"stop_after": None, "maxExecutions": 1024})  # type: ignore[arg-type]
    assert result.status == "completed"


async def test_create_task_takes_a_plain_mapping(tmp_path: Path, model: ScriptedModel) -> None:
    """WF-1, WF-3: create_task accepts the request as a dict (camelCase or snake_case) as well as the model;
    a bad one is RESEARCH_INVALID_INPUT and makes no folder."""
    from ditto.workflows.research import ResearchError

    task = create_task({"entry": "document-search", "question": "How long are backups kept?",
                        "allowPartial": True}, base_dir=tmp_path / "tasks")
    assert task.request == ResearchRequest(entry="document-search", question="How long are backups kept?",
                                           allow_partial=True)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        result = await document_search.run(runtime, {"directory": str(task.directory)}, ResearchOptions())
    assert result.status == "completed"
    for bad in ({"entry": "document-search"}, {"entry": "nope", "question": "q"}, ["document-search"]):
        with pytest.raises(ResearchError) as caught:
            create_task(bad, base_dir=tmp_path / "bad")  # type: ignore[arg-type]
        assert caught.value.code == "RESEARCH_INVALID_INPUT"
    assert not (tmp_path / "bad").exists()
