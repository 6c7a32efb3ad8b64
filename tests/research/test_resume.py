"""Checkpoints and resume: stop-after, stores unavailable, cache rebuilt, brief write retried, request ids, lock."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from ditto.worker.context import context_scope_key
from ditto.worker.memory import create_sqlite_memory_store
from ditto.workflows.research import ResearchOptions, ResearchRequest, request_id, verify_task
from ditto.workflows.research.checkpoints import cache_scope, checkpoint_key
from ditto.workflows.research.taskdir import TaskLock
from tests.research.helpers import brief, run, source_and_model_calls, trace
from tests.research.scripted import ScriptedModel
from tests.support.redis_server import RedisServer, redis_server

MULTI = {"sources": ["documents", "knowledge"], "knowledge": "both"}


def _options(stop_after: Any = None) -> ResearchOptions:
    return ResearchOptions(stop_after=stop_after)


def _corrupt(memory: Path) -> None:
    for suffix in ("-wal", "-shm"):
        Path(str(memory) + suffix).unlink(missing_ok=True)
    memory.write_bytes(b"garbage, not a database" * 64)


async def test_stop_after_queries_then_resume_does_not_ask_again(base: Path, model: ScriptedModel) -> None:
    """WF-8: --stop-after queries archives the queries; the resume never asks the model for queries again."""
    task, result = await run("multi-source", MULTI, base, model, options=_options("queries"))
    assert result.status == "stopped" and result.stage == "queries"
    assert model.calls["choose_queries"] == 1 and model.calls["choose_excerpts"] == 0
    task, result = await run("multi-source", None, base, model, directory=task.directory)
    assert result.status == "completed"
    assert model.calls["choose_queries"] == 1
    assert verify_task(task.directory) == []


async def test_stop_after_evidence_then_resume_calls_nothing(base: Path, model: ScriptedModel) -> None:
    """WF-8: after the evidence checkpoint, the resume calls no model and no source."""
    task, result = await run("multi-source", MULTI, base, model, options=_options("evidence"))
    assert result.status == "stopped" and result.stage == "evidence"
    before = len(trace(task))
    calls = dict(model.calls)
    task, result = await run("multi-source", None, base, model, directory=task.directory)
    assert result.status == "completed"
    assert dict(model.calls) == calls
    assert source_and_model_calls(trace(task)[before:]) == []


async def test_request_id_changes_exactly_when_the_request_does() -> None:
    """WF-8: the id is bound to question, sources, tenant and configuration, and only to them."""
    base = ResearchRequest(entry="multi-source", question="How long are backups kept?",
                           sources=("documents", "knowledge"))
    same = ResearchRequest.model_validate({"entry": "multi-source", "question": "How long are backups kept?",
                                           "sources": ["knowledge", "documents"]})
    assert request_id(base) == request_id(same)
    changes = [
        {"question": "How often do backups run?"},
        {"sources": ("documents",)},
        {"tenant": "globex"},
        {"knowledge": "both"},
        {"allow_partial": True},
        {"kb": "/data/kb.sqlite"},
        {"documents": ("/data/docs",)},
        {"vocabulary": ("backup interval",)},
        {"model": {"provider": "openai", "model": "gpt-4o-mini"}},
        {"search_engine": "brave"},
    ]
    ids = {request_id(base)}
    for change in changes:
        changed = ResearchRequest.model_validate({**base.model_dump(), **change})
        ids.add(request_id(changed))
    assert len(ids) == len(changes) + 1


async def test_resume_refuses_another_request(base: Path, model: ScriptedModel) -> None:
    """WF-8: a task directory keeps its request; asking another question there is refused."""
    from ditto.workflows.research import ResearchError

    task, _ = await run("document-search", {}, base, model, options=_options("queries"))
    with pytest.raises(ResearchError) as caught:
        await run("document-search", {"question": "Something else?"}, base, model, directory=task.directory)
    assert caught.value.code == "RESEARCH_REQUEST_MISMATCH"
    document = json.loads((task.directory / "request.json").read_text())
    document["question"] = "edited by hand"
    (task.directory / "request.json").write_text(json.dumps(document))
    with pytest.raises(ResearchError) as caught:
        await run("document-search", None, base, model, directory=task.directory)
    assert caught.value.code == "RESEARCH_REQUEST_MISMATCH"


async def test_a_locked_task_is_refused(base: Path, model: ScriptedModel) -> None:
    """WF-8: one controller per task; while the lock is held a resume is refused, nothing runs."""
    task, _ = await run("document-search", {}, base, model, options=_options("queries"))
    lock = TaskLock(task.directory)
    with lock.held():
        before = len(trace(task))
        _, result = await run("document-search", None, base, model, directory=task.directory)
        assert result.status == "failed" and result.error is not None
        assert result.error.code == "RESEARCH_TASK_LOCKED"
        assert len(trace(task)) == before
    _, result = await run("document-search", None, base, model, directory=task.directory)
    assert result.status == "completed"


async def test_unreadable_memory_fails_cleanly(base: Path, model: ScriptedModel) -> None:
    """WF-8: memory.sqlite unreadable → a clear failure before anything is asked or written."""
    task, _ = await run("document-search", {}, base, model, options=_options("queries"))
    calls = dict(model.calls)
    _corrupt(task.directory / "memory.sqlite")
    _, result = await run("document-search", None, base, model, directory=task.directory)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "RESEARCH_STORE_UNAVAILABLE"
    assert dict(model.calls) == calls
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_brief_write_failure_can_be_retried(base: Path, model: ScriptedModel) -> None:
    """WF-8: the brief cannot be written once → a clear failure; the retry writes it without new calls."""
    task, result = await run("document-search", {}, base, model, options=_options("evidence"))
    blocker = task.directory / "artifacts" / "brief.json"
    blocker.mkdir(parents=True)  # a directory where the file must go: the write fails (even as root)
    _, result = await run("document-search", None, base, model, directory=task.directory)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "RESEARCH_BRIEF_WRITE_FAILED"
    store = create_sqlite_memory_store(str(task.directory / "memory.sqlite"))
    try:
        archived = await store.get(keys=[checkpoint_key(task.request_id, "brief", task.checkpoint_id)])
    finally:
        await store.close()
    first_created = archived[0].content["data"]["createdAt"]
    calls = dict(model.calls)
    blocker.rmdir()
    before = len(trace(task))
    _, result = await run("document-search", None, base, model, directory=task.directory)
    assert result.status == "completed"
    assert dict(model.calls) == calls
    assert source_and_model_calls(trace(task)[before:]) == []
    data = brief(task)
    assert data["createdAt"] == first_created  # the archived brief, written now
    assert verify_task(task.directory) == []


@pytest.fixture
def redis_proc() -> Any:
    with redis_server() as server:
        yield server


def _wait_gone(server: RedisServer, key: str) -> None:
    deadline = time.monotonic() + 10
    while server.cli("EXISTS", key) != "0":
        assert time.monotonic() < deadline, "the key did not expire"
        time.sleep(0.01)


async def test_expired_redis_cache_is_rebuilt_from_memory(base: Path, model: ScriptedModel,
                                                          redis_proc: RedisServer) -> None:
    """WF-8: the Redis cache key expires between stages → rebuilt from MEMORY; nothing is asked again."""
    env = {"DITTO_WORKER_CONTEXT_REDIS_URL": redis_proc.url}
    task, result = await run("multi-source", MULTI, base, model, options=_options("evidence"), env=env)
    assert result.status == "stopped"
    key = context_scope_key(cache_scope(task.request_id, str(task.directory)))
    assert redis_proc.cli("EXISTS", key) == "1"
    redis_proc.cli("PEXPIRE", key, "1")
    _wait_gone(redis_proc, key)
    before = len(trace(task))
    calls = dict(model.calls)
    task, result = await run("multi-source", None, base, model, directory=task.directory, env=env)
    assert result.status == "completed"
    assert dict(model.calls) == calls
    resumed = trace(task)[before:]
    loads = [r for r in resumed if r["node"] == "CONTEXT.LOAD"]
    assert [r.get("code") for r in loads] == ["CONTEXT_NOT_FOUND", None]  # missing, then rebuilt
    assert redis_proc.cli("EXISTS", key) == "1"
    stored = json.loads(redis_proc.cli("GET", key))
    assert "checkpoint:brief" in json.dumps(stored)


async def test_redis_down_fails_before_anything_is_written(base: Path, model: ScriptedModel,
                                                           redis_proc: RedisServer) -> None:
    """WF-8: Redis unavailable → a clear failure; no checkpoint, no brief, no model call."""
    env = {"DITTO_WORKER_CONTEXT_REDIS_URL": redis_proc.url}
    redis_proc.stop()
    task, result = await run("document-search", {}, base, model, env=env)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "RESEARCH_STORE_UNAVAILABLE"
    assert sum(model.calls.values()) == 0
    assert not (task.directory / "artifacts" / "brief.json").exists()
    assert [r["node"] for r in trace(task)] == ["MEMORY.GET", "CONTEXT.LOAD"]
    shutil.rmtree(task.directory)


async def test_tasks_sharing_a_memory_store_keep_their_own_checkpoints(tmp_path: Path, base: Path,
                                                                       model: ScriptedModel) -> None:
    """WF-8, WF-12: two tasks with the same request on one application MEMORY store (same request id) each read
    their sources and write a brief whose snapshots are in their own directory; a stopped task still resumes."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nBackups are kept for 9 days.\n", encoding="utf-8")
    (tmp_path / "app-memory.sqlite").touch()  # an empty file is an empty store; a missing one is refused
    request = {"documents": [str(docs)], "memory": str(tmp_path / "app-memory.sqlite"),
               "question": "How long are backups kept?"}
    stopped, result = await run("document-search", request, base, model, options=_options("queries"))
    assert result.status == "stopped"
    first, result = await run("document-search", request, base, model)
    assert result.status == "completed" and first.request_id == stopped.request_id
    second, result = await run("document-search", request, base, model)
    assert result.status == "completed" and second.directory != first.directory
    assert source_and_model_calls(trace(second)), "the second task must read its sources itself"
    assert verify_task(first.directory) == [] and verify_task(second.directory) == []
    document = json.loads((second.directory / "request.json").read_text(encoding="utf-8"))
    assert ResearchRequest.model_validate({k: v for k, v in document.items() if k != "requestId"}) == second.request
    stopped, result = await run("document-search", None, base, model, directory=stopped.directory)
    assert result.status == "completed" and verify_task(stopped.directory) == []


async def test_the_task_store_holds_the_seed_checkpoint_keys(base: Path, model: ScriptedModel) -> None:
    """WF-4/WF-8: in the task's own memory.sqlite every stage is archived under exactly
    ``retrieval:<requestId>:<stage>`` (no other task writes that store, so no task id is appended)."""
    task, result = await run("document-search", {}, base, model)
    assert result.status == "completed" and task.checkpoint_id is None and task.task_id is not None
    store = create_sqlite_memory_store(str(task.directory / "memory.sqlite"))
    try:
        found = await store.get(keys=[f"retrieval:{task.request_id}:{stage}"
                                      for stage in ("request", "queries", "evidence", "brief")])
    finally:
        await store.close()
    assert [item.content["stage"] for item in found] == ["request", "queries", "evidence", "brief"]
    assert verify_task(task.directory) == []


async def test_verify_reads_the_archived_brief_of_an_earlier_version(base: Path, model: ScriptedModel) -> None:
    """WF-13: a task made before the task's own store used the seed's keys archived its brief under
    ``retrieval:<requestId>:brief:<taskId>``; ``ditto verify`` still compares brief.json with it."""
    import sqlite3

    task, result = await run("document-search", {}, base, model)
    assert result.status == "completed" and task.task_id is not None
    with sqlite3.connect(task.directory / "memory.sqlite") as connection:
        key = f"retrieval:{task.request_id}:brief"
        (content,) = connection.execute("SELECT content FROM memory_records WHERE key = ?", (key,)).fetchone()
        old = json.loads(content)
        old["taskId"] = task.task_id
        connection.execute("UPDATE memory_records SET key = ?, content = ? WHERE key = ?",
                           (f"{key}:{task.task_id}", json.dumps(old), key))
    assert verify_task(task.directory) == []
    with sqlite3.connect(task.directory / "memory.sqlite") as connection:
        connection.execute("DELETE FROM memory_records WHERE key LIKE 'retrieval:%:brief%'")
    assert any("no archived brief" in problem for problem in verify_task(task.directory))
