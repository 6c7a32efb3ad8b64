"""Research tasks with their MEMORY on a real PostgreSQL server (issue 18): internal knowledge and checkpoints
live in one shared database, so several controllers (processes, machines) share one store."""

from __future__ import annotations

from pathlib import Path

import psycopg

from ditto.workflows.research import (
    ResearchOptions,
    ResearchRequest,
    create_task,
    import_internal_knowledge,
    open_research_runtime,
    verify_task,
)
from ditto.workflows.research.checkpoints import checkpoint_key
from tests.research.cli import output, research_args, run_cli
from tests.research.helpers import brief, run, source_and_model_calls, trace
from tests.research.scripted import ScriptedModel
from tests.support.postgres_server import PostgresServer

QUESTION = "How long are database backups retained?"


def url(server: PostgresServer) -> str:
    return f"postgresql://{server.user}@{server.host}:{server.port}/{server.dbname}"


async def test_checkpoints_in_postgres_resume_each_task_of_a_shared_store(tmp_path: Path, base: Path,
                                                                          model: ScriptedModel,
                                                                          postgres_server: PostgresServer) -> None:
    """Issue 18, WF-8: two tasks with one request keep their checkpoints in one PostgreSQL MEMORY; each stops after
    its evidence, then resumes its own stages from the database with no repeated model or source call, and its
    brief verifies offline."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nDatabase backups are retained for 9 days.\n", encoding="utf-8")
    request = {"documents": [str(docs)], "memory": url(postgres_server), "question": QUESTION}
    first, result = await run("document-search", request, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    second, result = await run("document-search", request, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped" and second.request_id == first.request_id
    assert not (first.directory / "memory.sqlite").exists()
    async with await psycopg.AsyncConnection.connect(postgres_server.dsn) as raw:
        keys = {row[0] for row in await (await raw.execute("SELECT key FROM ditto_memory")).fetchall()}
    for task in (first, second):
        assert checkpoint_key(task.request_id, "evidence", task.checkpoint_id) in keys
    for task in (first, second):
        before = len(source_and_model_calls(trace(task)))
        _, result = await run("document-search", None, base, model, directory=task.directory)
        assert result.status == "completed"
        assert len(source_and_model_calls(trace(task))) == before, "a resumed stage called a source or the model"
        assert "9 days" in " ".join(item["quote"] for item in brief(task)["evidence"])
        assert verify_task(task.directory) == []  # a brief stays verifiable offline, without the database


async def test_internal_knowledge_in_postgres_is_searched(base: Path, model: ScriptedModel,
                                                          postgres_server: PostgresServer) -> None:
    """Issue 18, WF-4: internal knowledge imported into a PostgreSQL MEMORY is what a knowledge-base task quotes,
    found by the same keyword search as on SQLite and limited to the tenant's allowed keys."""
    dsn = url(postgres_server)
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal", memory=dsn,
                                       tenant="initech", internal_knowledge_keys=("backup-retention",)),
                       base_dir=base)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        await import_internal_knowledge(runtime, tenant="initech", records=[
            {"key": "backup-retention", "text": "Database backups are retained for 41 days."},
            {"key": "secret-plan", "text": "Database backups are retained for 999 days in the vault."}])
    _, result = await run("knowledge-base", None, base, model, directory=task.directory)
    assert result.status == "completed", result
    quotes = " ".join(item["quote"] for item in brief(task)["evidence"])
    assert "41 days" in quotes and "999" not in quotes


def test_the_cli_takes_a_postgres_dsn_for_memory(tmp_path: Path, postgres_server: PostgresServer) -> None:
    """Issue 18: ``ditto research --memory postgresql://…`` runs the task with its MEMORY in PostgreSQL (no
    ``--create-memory`` needed, no file made) and a second run of the folder resumes from the database."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nDatabase backups are retained for 17 days.\n", encoding="utf-8")
    directory = tmp_path / "task"
    args = ["--memory", url(postgres_server), "--documents", str(docs), "--question", QUESTION,
            "--directory", str(directory)]
    done = run_cli(research_args("document-search", *args, "--stop-after", "evidence"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert output(done)["result"]["status"] == "stopped"
    assert not (directory / "memory.sqlite").exists()
    resumed = run_cli(research_args("document-search", "--directory", str(directory)))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert output(resumed)["result"]["status"] == "completed"
    assert "17 days" in (directory / "artifacts" / "brief.md").read_text(encoding="utf-8")
