"""Models (the built-in one, an OpenAI-compatible server), PostgreSQL as the external KB, request bounds,
and the terminal progress display."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.workflows.research import (
    ResearchError,
    ResearchOptions,
    create_task,
    open_research_runtime,
    run_research,
    verify_task,
)
from ditto.workflows.research import knowledge_base as knowledge_entry
from ditto.workflows.research.api import build_request
from tests.research.cli import ROOT, cli_env, research_args
from tests.research.helpers import brief, quotes_this_task
from tests.support.openai_chat_server import ChatServerState, ChatStep, openai_chat_server
from tests.support.postgres_server import running_postgres

OPTIONS = ResearchOptions()


@pytest.mark.parametrize("entry", ["document-search", "knowledge-base", "expand", "rewrite", "source-location"])
async def test_builtin_model_by_default(entry: str, tmp_path: Path) -> None:
    """WF-11, WF-9: with no model configured the built-in builtin:extractive INFER model answers every offline
    entry's sample question from this task's sample data (rewrite's colloquial one included)."""
    task, result = await run_research(entry, {"knowledge": "both"} if entry == "knowledge-base" else {},
                                      base_dir=tmp_path, env={}, options=OPTIONS)
    assert result.status == "completed", result
    data = brief(task)
    assert data["model"] == {"provider": "builtin:extractive", "model": "extractive"}
    assert quotes_this_task(data, task)
    assert verify_task(task.directory) == []


def _openai_env(url: str) -> dict[str, str]:
    return {"DITTO_WORKER_INFER_BASE_URL": url, "DITTO_WORKER_INFER_MODEL": "test-model",
            "DITTO_WORKER_INFER_API_KEY": "sk-test"}


async def test_openai_compatible_model_from_the_environment(tmp_path: Path) -> None:
    """WF-11: DITTO_WORKER_INFER_* makes new tasks ask an OpenAI-compatible server (through INFER)."""
    script = [ChatStep(json.dumps({"queries": ["backup retained"]})), ChatStep(json.dumps({"excerpts": []}))]
    async with openai_chat_server(ChatServerState(script=script)) as (url, state):
        env = _openai_env(url)
        request = build_request("document-search", {}, env)
        assert request.model.provider == "openai" and request.model.model == "test-model"
        task, result = await run_research("document-search", request, base_dir=tmp_path, env=env, options=OPTIONS)
    assert result.status == "no-evidence"
    assert [body["model"] for body in state.requests] == ["test-model", "test-model"]
    assert all(body["response_format"]["type"] == "json_schema" for body in state.requests)
    data = brief(task)
    assert data["model"] == {"provider": "openai", "model": "test-model"}
    assert data["queries"][0]["text"] == "backup retained"


async def test_openai_answer_with_an_invented_quote_is_rejected(tmp_path: Path) -> None:
    """WF-11, WF-10: a real model's answer goes through the same verification as the built-in one."""
    invented = ChatStep(json.dumps({"excerpts": [{"sourceId": "doc-1", "quote": "Backups are kept forever."}]}))
    script = [ChatStep(json.dumps({"queries": ["backup retained"]})), invented, invented]
    async with openai_chat_server(ChatServerState(script=script)) as (url, state):
        env = _openai_env(url)
        task, result = await run_research("document-search", {}, base_dir=tmp_path, env=env, options=OPTIONS)
    assert result.status == "rejected" and result.error is not None
    assert result.error.code == "RESEARCH_QUOTE_NOT_FOUND"
    # one retry that shows the model why its answer was refused, then the rejection naming the file
    assert len(state.requests) == 3
    refusal = state.requests[2]["messages"][-2]["content"]
    assert "refused" in refusal and "not verbatim" in refusal
    assert "policy.md" in result.error.message
    assert not (task.directory / "artifacts" / "brief.json").exists()


def test_postgres_knowledge_base(tmp_path: Path) -> None:
    """WF-12, WF-4: --kb postgresql://… searches a PostgreSQL table with full text and keeps the record locator."""
    import asyncio

    import psycopg

    with running_postgres() as server, psycopg.connect(server.dsn, autocommit=True) as connection:
        connection.execute("CREATE TABLE knowledge (id integer PRIMARY KEY, content text NOT NULL)")
        connection.execute("INSERT INTO knowledge VALUES (7, 'Database backups are retained for 53 days.'), "
                           "(8, 'The cafeteria opens at noon.')")
        dsn = f"postgresql://{server.user}@{server.host}:{server.port}/{server.dbname}"

        async def scenario() -> Any:
            return await run_research("knowledge-base", {"kb": dsn, "question": "How long are backups retained?"},
                                      base_dir=tmp_path, env={}, options=OPTIONS)

        task, result = asyncio.run(scenario())
    assert result.status == "completed", result
    data = brief(task)
    assert [item["quote"] for item in data["evidence"]] == ["Database backups are retained for 53 days."]
    assert data["evidence"][0]["uri"] == f"postgresql://{server.host}:{server.port}/{server.dbname}#knowledge:7"
    assert verify_task(task.directory) == []


async def test_registered_target_as_knowledge_base(tmp_path: Path) -> None:
    """WF-12: --kb target:NAME uses a RETRIEVAL target the application registers."""
    from ditto.retrieval import RetrievalCandidate, RetrievalCandidateSource, RetrievalSearchOutput
    from ditto.workflows.research import ResearchRequest

    class Wiki:
        async def search(self, input: Any, context: Any = None) -> RetrievalSearchOutput:
            return RetrievalSearchOutput(target=input.target, strategy=input.strategy, candidates=(
                RetrievalCandidate(id="42", content="Backups are retained for 61 days in the vault.",
                                   source=RetrievalCandidateSource(target="vault", ref="page:42")),))

    task = create_task(ResearchRequest(entry="knowledge-base", question="How long are backups retained?",
                                       kb="target:vault"), base_dir=tmp_path)
    targets = {"vault": {"default_strategy": "api", "providers": {"api": Wiki()}}}
    async with open_research_runtime(task, env={}, targets=targets) as runtime:
        result = await knowledge_entry.run(runtime, {"directory": str(task.directory)}, OPTIONS)
    assert result.status == "completed"
    item = brief(task)["evidence"][0]
    assert item["uri"] == "retrieval:vault#page:42" and item["locator"] == {"target": "vault", "ref": "page:42"}


@given(question=st.one_of(st.just(""), st.just("   "), st.text(min_size=4001, max_size=4100),
                          st.text(min_size=1, max_size=20).map(lambda s: s + "\x00"), st.just("a\ud800b")))
def test_bad_questions_are_refused(question: str) -> None:
    """WF-2: blank, oversized, NUL or lone-surrogate questions are RESEARCH_INVALID_INPUT, never a crash."""
    with pytest.raises(ResearchError) as caught:
        build_request("document-search", {"question": question})
    assert caught.value.code == "RESEARCH_INVALID_INPUT"


@pytest.mark.parametrize("fields", [
    {"tenant": "a:b"}, {"internalKnowledgeKeys": ["k"] * 13}, {"urls": ["https://a", "https://b", "https://c"]},
    {"sources": ["documents", "email"]}, {"knowledge": "everything"}, {"vocabulary": ["a", "a"]},
    {"allowPartial": "yes"}, {"unknown": 1},
])
def test_bad_requests_are_refused(fields: dict[str, Any]) -> None:
    """WF-2, WF-4, WF-6: out-of-range request fields are refused before any task exists."""
    with pytest.raises(ResearchError) as caught:
        build_request("multi-source", fields)
    assert caught.value.code == "RESEARCH_INVALID_INPUT"


def test_terminal_shows_progress_on_stderr(tmp_path: Path) -> None:
    """WF-14: on a terminal, progress (stage, source, counts) goes to stderr; stdout still ends with the result."""
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run(research_args("document-search", "--base-dir", str(tmp_path)), cwd=ROOT,
                              env=cli_env({"COLUMNS": "200"}), stdout=subprocess.PIPE, stderr=terminal,
                              timeout=120)
        os.close(terminal)
        terminal = -1
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        if terminal != -1:
            os.close(terminal)
        os.close(controller)
    assert done.returncode == 0
    text = shown.decode("utf-8", "replace")
    assert "queries" in text and "evidence" in text and "document" in text and "brief:" in text
    assert json.loads(done.stdout)["result"]["status"] == "completed"


async def test_cli_reads_the_model_provider_from_dotenv(tmp_path: Path) -> None:
    """WF-11, WF-2: `ditto research` run where a .env configures DITTO_WORKER_INFER_* (and the tasks folder) asks
    that OpenAI-compatible server; the process environment still wins over .env."""
    import asyncio

    script = [ChatStep(json.dumps({"queries": ["backup retained"]})), ChatStep(json.dumps({"excerpts": []}))]
    async with openai_chat_server(ChatServerState(script=script)) as (url, state):
        dotenv = {**_openai_env(url), "DITTO_RESEARCH_TASKS_DIR": str(tmp_path / "from-dotenv")}
        (tmp_path / ".env").write_text("".join(f"{key}={value}\n" for key, value in dotenv.items()),
                                       encoding="utf-8")
        process = await asyncio.create_subprocess_exec(
            *research_args("document-search", "--json", scripted=False),
            cwd=tmp_path, env=cli_env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()[-2000:]
    directory = Path(json.loads(stdout)["directory"])
    assert directory.parent == tmp_path / "from-dotenv"
    data = json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    assert data["model"] == {"provider": "openai", "model": "test-model"}
    assert [body["model"] for body in state.requests] == ["test-model", "test-model"]
    process = await asyncio.create_subprocess_exec(
        *research_args("document-search", "--json", "--base-dir", str(tmp_path / "tasks"), scripted=False),
        cwd=tmp_path, env=cli_env({"DITTO_WORKER_INFER_BASE_URL": "", "DITTO_WORKER_INFER_MODEL": ""}),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert json.loads(stdout)["result"]["status"] == "completed"


async def test_a_ten_megabyte_question_is_refused_quickly(tmp_path: Path) -> None:
    """WF-2: a 10 MB question through run_research is RESEARCH_INVALID_INPUT within a second, and no task folder
    is made."""
    import time

    started = time.monotonic()
    with pytest.raises(ResearchError) as caught:
        await run_research("multi-source", {"question": "backup " * (10 * 1024 * 1024 // 7)}, base_dir=tmp_path,
                           env={}, options=OPTIONS)
    assert caught.value.code == "RESEARCH_INVALID_INPUT" and len(caught.value.message) < 300
    assert time.monotonic() - started < 1.0
    assert not os.listdir(tmp_path)
