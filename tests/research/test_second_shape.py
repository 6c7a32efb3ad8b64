"""The research workflow's second shape and the seed gaps it closes (issue 15): the task as a loop body,
stage graphs with real edges, one source port, and each numbered gap with a test that failed before."""

from __future__ import annotations

import html
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ditto.errors import GraphError
from ditto.runtime import WorkerDefinition
from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store
from ditto.workflows.research import (
    ResearchError,
    ResearchOptions,
    ResearchRequest,
    create_task,
    import_internal_knowledge,
    open_research_runtime,
    run_research,
    run_research_loop,
)
from ditto.workflows.research.api import build_request
from tests.interaction.servers import Tls, make_tls, serve
from tests.research.cli import output, research_args, run_cli
from tests.research.helpers import brief, run, source_and_model_calls, trace, write_knowledge_base
from tests.research.scripted import ScriptedModel

QUESTION = "How long are database backups retained?"


# -- the task as a loop body ------------------------------------------------------------------
async def test_a_task_runs_inside_the_applications_own_loop(tmp_path: Path, model: ScriptedModel) -> None:
    """WF-1, RT-7: run_research_loop runs a task inside the caller's runtime.loop(), next to the caller's own
    stage graphs, all charged to one budget."""
    from ditto.runtime import graph

    task = create_task(ResearchRequest(entry="document-search", question=QUESTION), base_dir=tmp_path)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        used: list[int] = []

        async def body(loop: Any, _input: Any) -> Any:
            own = graph("app-lookup").node("look", "MEMORY.SEARCH", (), lambda _i, _d: {"query": "backup"})
            await loop.run(own, None)
            used.append(loop.used)
            result = await run_research_loop(loop, task)
            used.append(loop.used)
            return result

        result = await runtime.loop(body, None)
    assert result.status == "completed"
    assert used == [1, 1 + len(trace(task))]


async def test_the_loop_budget_stops_a_task_inside_an_application_loop(tmp_path: Path, model: ScriptedModel) -> None:
    """RT-7, WF-1: the task's node calls are charged to the caller's loop; its exhaustion reaches the caller."""
    task = create_task(ResearchRequest(entry="document-search", question=QUESTION), base_dir=tmp_path)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        with pytest.raises(GraphError) as caught:
            await runtime.loop(lambda loop, _input: run_research_loop(loop, task), None, max_executions=3)
    assert caught.value.code == "LOOP_BUDGET_EXHAUSTED"
    assert not (task.directory / "artifacts" / "brief.json").exists()
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:  # the lock was released
        result = await runtime.loop(lambda loop, _input: run_research_loop(loop, task), None)
    assert result.status == "completed"


async def test_each_source_is_one_graph_from_search_to_excerpt_choice(base: Path, model: ScriptedModel) -> None:
    """WF-1, RT-7: a source's search nodes and the model's excerpt choice run in one graph (a real edge); a
    source with nothing found skips the choice without charging it."""
    task, result = await run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"}, base,
                             model)
    assert result.status == "completed"
    records = [r for r in trace(task) if r["stage"] == "evidence" and "graph" in r]
    by_graph: dict[str, list[str]] = {}
    for record in records:
        by_graph.setdefault(record["graph"], []).append(record["node"])
    assert by_graph["research-document"][-1] == "INFER.SAMPLE" and "RETRIEVAL.SEARCH" in by_graph["research-document"]
    assert by_graph["research-knowledge-internal"] == ["MEMORY.SEARCH", "INFER.SAMPLE"]
    assert by_graph["research-knowledge-external"] == ["RETRIEVAL.SEARCH", "INFER.SAMPLE"]
    empty, result = await run("document-search", {"question": "zqxj wvbk?"}, base, model)
    assert result.status == "no-evidence"
    assert [r["node"] for r in trace(empty) if r.get("graph") == "research-document"] == ["RETRIEVAL.SEARCH"]


# -- gap 1: a long page and the per-page limit --------------------------------------------------
def _long_page() -> str:
    filler = [f"Paragraph {n} explains how write-ahead logging in SQLite keeps readers and the writer apart, "
              f"and how checkpoints move the WAL content back into the database file (part {n})." for n in range(100)]
    body = "".join(f"<p>{html.escape(text)}</p>" for text in filler)
    page = ("<!DOCTYPE html><html><head><title>WAL</title></head><body><article><h1>WAL</h1>"
            f"{body}</article></body></html>")
    assert len(page) > 15_000
    return page


@asynccontextmanager
async def _pages(tls: Tls, extra: dict[str, Any] | None = None) -> AsyncIterator[str]:
    long_page = _long_page()

    async def page(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "broken":
            return Response("down", status_code=503)
        return HTMLResponse(long_page)

    async def api(request: Request) -> Response:
        origin = f"https://127.0.0.1:{request.url.port}"
        return JSONResponse({"query": {"search": [{"title": "broken", "pageid": 1, "snippet": ""}]},
                             "origin": origin})

    routes = [Route("/doc/{name}", page), Route("/w/api.php", api)]
    async with serve(Starlette(routes=routes), tls=tls) as port:
        yield f"https://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(Path(tmp_path_factory.mktemp("tls")))


async def test_a_long_page_through_web_read_with_the_built_in_model(tmp_path: Path, tls: Tls) -> None:
    """Issue 15 gap 1, WF-6: a page of >15,000 characters read with the default built-in model gives a brief,
    never RESEARCH_TOO_MANY_EXCERPTS; at most 2 excerpts come from the page."""
    async with _pages(tls) as origin:
        task, result = await run_research(
            "web-read", {"question": "How do checkpoints move WAL content into the database file?",
                         "urls": [f"{origin}/doc/wal"]}, base_dir=tmp_path, env={},
            web={"ssl_context": tls.client_context(), "timeout_s": 5.0})
    assert result.status == "completed", result
    data = brief(task)
    assert data["model"]["provider"] == "builtin:extractive"
    assert 1 <= len(data["evidence"]) <= 2


async def test_a_failed_read_of_a_found_page_blocks(tmp_path: Path, tls: Tls, model: ScriptedModel) -> None:
    """WF-5, WF-7: the page a search found cannot be read (HTTP 503): a source failure (blocked), not no-evidence."""
    from ditto.worker.interaction import create_interaction_worker, web_options_from_env

    async with _pages(tls) as origin:
        options = web_options_from_env(None, {}, allowed_origins=(origin,), ssl_context=tls.client_context(),
                                       timeout_s=5.0)
        real = create_interaction_worker(web=options)

        async def search(_input: Any) -> Any:
            return {"engine": "wikipedia", "query": "q",
                    "candidates": [{"title": "Broken", "url": f"{origin}/doc/broken"}]}

        interaction = WorkerDefinition("INTERACTION", {**real.nodes, "INTERACTION.WEB.SEARCH": search})
        try:
            task, result = await run_research("web-search", {"question": "How does the write-ahead log work?"},
                                              base_dir=tmp_path, env={}, workers=[model.worker(), interaction])
        finally:
            await real.aclose()
    assert result.status == "blocked", result
    assert [failure.source for failure in result.failed_sources] == ["web"]
    assert not (task.directory / "artifacts" / "brief.json").exists()


# -- gap 2: two tasks with the same request on one shared MEMORY store ------------------------------
async def test_same_request_tasks_on_a_shared_memory_each_resume_their_own_stages(tmp_path: Path, base: Path,
                                                                                  model: ScriptedModel) -> None:
    """Issue 15 gap 2, WF-8: two tasks with one request on one MEMORY store never share a checkpoint: each
    resumes its own archived stages with zero repeated model or source calls."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nDatabase backups are retained for 9 days.\n", encoding="utf-8")
    request = {"documents": [str(docs)], "memory": str(tmp_path / "app.sqlite"), "question": QUESTION}
    (tmp_path / "app.sqlite").touch()  # an existing (empty) application store
    first, result = await run("document-search", request, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    second, result = await run("document-search", request, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped" and second.request_id == first.request_id
    for task in (first, second):
        before = len(source_and_model_calls(trace(task)))
        _, result = await run("document-search", None, base, model, directory=task.directory)
        assert result.status == "completed"
        assert len(source_and_model_calls(trace(task))) == before, "a resumed stage called a source or the model"
        assert all(item["snapshotSha256"] for item in brief(task)["evidence"])


# -- gaps 3 and 4: configuration errors are refused before any task exists ---------------------------
def test_brave_without_trusted_origins_is_a_configuration_error(tmp_path: Path) -> None:
    """Issue 15 gap 3, WF-5: Brave with a key but no allowed origins is refused (exit 2), no task folder."""
    with pytest.raises(ResearchError) as caught:
        build_request("web-search", {"searchEngine": "brave"}, {})
    assert caught.value.code == "RESEARCH_INVALID_INPUT" and "origin" in caught.value.message
    done = run_cli(research_args("web-search", "--search-engine", "brave", "--json", "--base-dir", str(tmp_path)),
                   env={"DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY": "k-123"})
    assert done.returncode == 2
    assert output(done)["result"]["error"]["code"] == "RESEARCH_INVALID_INPUT"
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("args, env", [
    ((), {"DITTO_WORKER_CONTEXT_REDIS_URL": "redis://:s3cret@host:notaport/0"}),
    (("--allowed-origin", "http://docs.example"), {}),
])
def test_a_refused_configuration_leaves_no_task_folder(tmp_path: Path, args: tuple[str, ...],
                                                       env: dict[str, str]) -> None:
    """Issue 15 gap 4, WF-14: a malformed Redis URL or a non-HTTPS origin: one JSON line with the code, exit 2,
    no traceback, no task folder, no secret."""
    done = run_cli(research_args("web-read", *args, "--json", "--base-dir", str(tmp_path / "tasks")), env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    result = output(done)
    assert result["directory"] is None and result["result"]["error"]["code"] == "RESEARCH_INVALID_INPUT"
    assert "Traceback" not in done.stderr and "s3cret" not in done.stdout + done.stderr
    assert not (tmp_path / "tasks").exists() or not any((tmp_path / "tasks").iterdir())


# -- gap 5: which internal keys are searched ---------------------------------------------------------
async def test_a_store_with_more_than_12_keys_names_the_keys_searched(tmp_path: Path, base: Path,
                                                                      model: ScriptedModel) -> None:
    """Issue 15 gap 5, WF-4: --memory without keys searches the tenant's first 12 keys in key order; the brief's
    coverage names them and says how many the tenant had."""
    memory = tmp_path / "app.sqlite"
    memory.touch()
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal",
                                       memory=str(memory), tenant="acme"), base_dir=base)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        await import_internal_knowledge(runtime, tenant="acme", records=[
            {"key": f"k{n:02d}", "text": f"Database backups of region {n} are retained for {n + 10} days."}
            for n in range(22)])
    _, result = await run("knowledge-base", None, base, model, directory=task.directory)
    assert result.status == "completed"
    coverage = brief(task)["coverage"][0]
    assert coverage["searched"] == [f"k{n:02d}" for n in range(12)]
    assert any("22 knowledge keys" in note and "first 12" in note for note in coverage["notes"])


async def test_all_twelve_named_keys_are_read(tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """WF-4, WF-6: with 12 allowed keys, a query returns (at most) one record per key, for every key."""
    keys = [f"r{n:02d}" for n in range(12)]
    memory = tmp_path / "app.sqlite"
    memory.touch()
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal",
                                       memory=str(memory), internal_knowledge_keys=tuple(keys)), base_dir=base)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        await import_internal_knowledge(runtime, tenant="acme", records=[
            {"key": key, "text": f"Database backups ({key}) are retained for {n + 3} days."}
            for n, key in enumerate(keys)])
    _, result = await run("knowledge-base", None, base, model, directory=task.directory)
    assert result.status == "completed"
    data = brief(task)
    assert data["coverage"][0]["hits"] == 12 and data["coverage"][0]["searched"] == keys


# -- gap 6: the model that answered ---------------------------------------------------------------------
async def test_the_brief_names_the_model_that_answered(base: Path, model: ScriptedModel) -> None:
    """Issue 15 gap 6, WF-15: with a replacement INFER worker the brief names the model it answered with."""
    task, result = await run("document-search", {}, base, model)
    assert result.status == "completed"
    assert brief(task)["model"] == {"provider": "builtin:extractive", "model": "scripted"}


# -- gaps 8 and 9 -------------------------------------------------------------------------------------------
def test_no_test_hook_or_dead_code_ships() -> None:
    """Issue 15 gaps 8 and 9: no environment test hook in the shipped code; no error code that cannot fire."""
    from ditto.workflows.research.errors import RESEARCH_ERROR_CODES

    source = Path(__file__).resolve().parents[2] / "src" / "ditto"
    shipped = "\n".join(path.read_text(encoding="utf-8") for path in source.rglob("*.py"))
    assert "DITTO_RESEARCH_TEST_PAUSE" not in shipped and "pause_at" not in shipped
    assert "RESEARCH_COVERAGE_UNMET" not in RESEARCH_ERROR_CODES


# -- gap 10: an ordinary mistake is logged once, without a traceback -----------------------------------------
async def test_a_missing_knowledge_base_is_a_result_not_a_traceback(tmp_path: Path, base: Path, model: ScriptedModel,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """Issue 15 gap 10, WF-7: used as a library, a missing knowledge base gives a blocked result naming the file;
    the log has one warning and no traceback."""
    missing = tmp_path / "nowhere.sqlite"
    with caplog.at_level(logging.WARNING):
        _task, result = await run("knowledge-base", {"kb": str(missing), "question": QUESTION}, base, model)
    assert result.status == "blocked"
    assert result.failed_sources[0].code == "RETRIEVAL_PROVIDER_UNAVAILABLE"
    assert "nowhere.sqlite" in result.failed_sources[0].message and "does not exist" in result.failed_sources[0].message
    assert not [record for record in caplog.records if record.exc_info]
    assert len([record for record in caplog.records if "nowhere.sqlite" in record.getMessage()]) == 1


async def test_a_knowledge_base_without_the_table_says_so(tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """WF-12: an SQLite file without the knowledge table is named as such (not a generic backend failure)."""
    import sqlite3

    path = tmp_path / "other.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes(x)")
    connection.commit()
    connection.close()
    _task, result = await run("knowledge-base", {"kb": str(path), "question": QUESTION}, base, model)
    assert result.status == "blocked" and "no table 'knowledge'" in result.failed_sources[0].message


# -- gap 11: behaviours that worked but nothing asserted -------------------------------------------------------
async def test_at_most_three_external_records_per_query(tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """Issue 15 gap 11, WF-6: a knowledge base with ten matching records gives at most 3 per query."""
    kb = write_knowledge_base(tmp_path / "kb.sqlite", [(f"Backup {n}", f"Database backups are retained for {n} days.")
                                                        for n in range(10)])
    task, result = await run("knowledge-base", {"kb": str(kb), "question": QUESTION}, base, model)
    assert result.status == "completed"
    data = brief(task)
    assert data["coverage"][0]["hits"] <= 3 * len(data["queries"])
    assert data["coverage"][0]["hits"] >= 1


async def test_a_record_of_another_kind_under_an_allowed_key_is_not_knowledge(tmp_path: Path, base: Path,
                                                                               model: ScriptedModel) -> None:
    """Issue 15 gap 11, WF-4: under an allowed key, a record whose content.kind is not "knowledge" is ignored;
    one record per key."""
    memory = tmp_path / "app.sqlite"
    memory.touch()
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="internal",
                                       memory=str(memory), internal_knowledge_keys=("retention", "note")),
                       base_dir=base)
    async with open_research_runtime(task, env={}, workers=[model.worker()]) as runtime:
        await import_internal_knowledge(runtime, tenant="acme", records=[
            {"key": "retention", "text": "Database backups are retained for 30 days."}])
        (await runtime.invoke("MEMORY.WRITE", {"memories": [{"key": "knowledge:acme:note", "content": {
            "kind": "note", "tenant": "acme", "key": "note", "text": "Database backups are retained 999 days."}}]})
         ).unwrap()
    _, result = await run("knowledge-base", None, base, model, directory=task.directory)
    assert result.status == "completed"
    data = brief(task)
    assert data["coverage"][0]["hits"] == 1
    assert all("999" not in item["quote"] for item in data["evidence"])


def test_the_default_web_read_deadline_is_20_seconds() -> None:
    """Issue 15 gap 11, WF-5: a page read gives up after 20 s unless configured otherwise."""
    from ditto.workflows.research.sources.web import web_options

    options = web_options(ResearchRequest(entry="web-read", question="q?"), {})
    assert options.timeout_s == 20


async def test_allow_partial_when_internal_knowledge_fails_and_external_works(base: Path,
                                                                            model: ScriptedModel) -> None:
    """Issue 15 gap 11, WF-4, WF-7: with both knowledge kinds and allowPartial, a failing internal search keeps the
    external evidence: partial, the internal source listed as failed."""
    task = create_task(ResearchRequest(entry="knowledge-base", question=QUESTION, knowledge="both",
                                       allow_partial=True), base_dir=base)
    store = create_sqlite_memory_store(str(task.memory_path))
    real = create_memory_worker(store=store)

    async def broken(_input: Any) -> Any:
        from ditto.worker.memory import DittoMemoryError

        raise DittoMemoryError("MEMORY_BACKEND_ERROR", "the index is gone")

    memory = WorkerDefinition("MEMORY", {**real.nodes, "MEMORY.SEARCH": broken})
    try:
        async with open_research_runtime(task, env={}, workers=[model.worker(), memory]) as runtime:
            from ditto.workflows.research import knowledge_base

            result = await knowledge_base.run(runtime, {"directory": str(task.directory)})
    finally:
        await store.close()
    assert result.status == "partial", result
    data = brief(task)
    assert [failure["source"] for failure in data["failedSources"]] == ["knowledge-internal"]
    assert {item["sourceType"] for item in data["evidence"]} == {"knowledge-external"}


# -- what the workflow decides when the model gives nothing, and resuming as someone else --------------------------
async def test_hits_without_an_excerpt_are_no_excerpt(base: Path) -> None:
    """WF-7: a source with hits whose excerpts the model declined is `no-excerpt` in the coverage."""
    model = ScriptedModel({"choose_excerpts": {"excerpts": []}})
    task, result = await run("document-search", {}, base, model)
    assert result.status == "no-evidence"
    coverage = brief(task)["coverage"]
    assert coverage == [{"source": "document", "status": "no-excerpt", "hits": coverage[0]["hits"], "evidence": 0,
                         "notes": [], "searched": []}]
    assert coverage[0]["hits"] > 0


async def test_resuming_with_another_tenant_is_refused(base: Path, model: ScriptedModel) -> None:
    """WF-8: the stored request is the task; resuming it with another tenant (same question) is refused."""
    task, result = await run("document-search", {}, base, model, options=ResearchOptions(stop_after="queries"))
    assert result.status == "stopped"
    with pytest.raises(ResearchError) as caught:
        await run_research("document-search", {"tenant": "globex"}, directory=task.directory, env={},
                           workers=[model.worker()])
    assert caught.value.code == "RESEARCH_REQUEST_MISMATCH"
    assert json.loads((task.directory / "request.json").read_text(encoding="utf-8"))["tenant"] == "acme"


# -- quotes from real models: whitespace only --------------------------------------------------------------------
_WORD = st.text(alphabet=st.characters(categories=("L", "N", "P")), min_size=1, max_size=8)
_GAP = st.sampled_from([" ", "  ", "\n", " \n   ", "\t", "\r\n"])


@settings(max_examples=200, deadline=None)
@given(words=st.lists(_WORD, min_size=2, max_size=30), gaps=st.lists(_GAP, min_size=30, max_size=30),
       span=st.tuples(st.integers(0, 29), st.integers(1, 30)))
@example(words=["exit", "status", "is", "0", "if", "a", "line", "is", "selected,", "1", "if", "no", "lines"],
         gaps=["\n       ", *([" "] * 29)], span=(0, 13))
def test_a_quote_differing_only_in_whitespace_is_located_to_the_source_text(
        words: list[str], gaps: list[str], span: tuple[int, int]) -> None:
    """WF-10 (issue 17): a quote whose whitespace differs from the hard-wrapped source is found at the source span
    and stored as the source's own characters; the evidence stays verbatim."""
    from ditto.workflows.research.verification import locate_quote

    text = "".join(word + gap for word, gap in zip(words, gaps, strict=False))
    first, size = span[0] % len(words), span[1]
    chosen = words[first:first + size]
    offset, found = locate_quote(text, " ".join(chosen))
    assert offset >= 0 and text[offset:offset + len(found)] == found
    assert found.split() == chosen


@example(changed="Backups are retained for 42 days.")
@example(changed="backups are retained for 41 days.")
@example(changed="Backups are retained for 41 days!")
@given(changed=st.sampled_from(["Backups are retained for 41 days,", "Backups are retained for 41 dayz."]))
def test_nothing_but_whitespace_is_normalised(changed: str) -> None:
    """WF-10 (issue 17): a changed letter, digit, case or punctuation is not found, whitespace aside."""
    from ditto.workflows.research.verification import locate_quote

    text = "Backups are\n   retained for 41 days.\nRestores are rehearsed."
    assert locate_quote(text, "Backups are retained for 41 days.") == (0, "Backups are\n   retained for 41 days.")
    assert locate_quote(text, changed)[0] == -1


def test_the_per_page_limit_counts_every_passage_of_a_page() -> None:
    """WF-6: two passages of one page, three excerpts in all: refused, although each passage is within its limit."""
    from ditto.worker.infer import ExcerptPassage, ExcerptTask
    from ditto.workflows.research import Passage
    from ditto.workflows.research.verification import verify_excerpts

    page = "https://docs.example/wal"
    passages = [Passage(id=f"web-{n}", source_type="web", uri=page, snapshot_sha256="0" * 64,
                        text="Alpha beta gamma. Delta epsilon zeta.", start=40 * n, end=40 * n + 37, query="q",
                        found_by=("q",), page=page) for n in (1, 2)]
    task = ExcerptTask(question="q", passages=tuple(ExcerptPassage(source_id=p.id, text=p.text) for p in passages),
                       max_excerpts=4, max_per_source=2)
    answer = {"excerpts": [{"sourceId": "web-1", "quote": "Alpha beta gamma."},
                           {"sourceId": "web-1", "quote": "Delta epsilon zeta."},
                           {"sourceId": "web-2", "quote": "Alpha beta gamma."}]}
    with pytest.raises(ResearchError) as caught:
        verify_excerpts(answer, task, passages)
    assert caught.value.code == "RESEARCH_TOO_MANY_EXCERPTS" and "web page" in caught.value.message


# -- issue 17: snapshots of what was read, limits in the coverage ---------------------------------------------
async def test_only_files_that_gave_hits_are_snapshotted(tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """WF-3, WF-10 (issue 17): a folder of 40 files, one about backups: the task keeps the snapshot of the file the
    model was shown, not a copy of the folder; the brief still verifies."""
    from ditto.workflows.research import verify_task

    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(39):
        (docs / f"note-{n}.md").write_text(f"# Note {n}\n\nThe cafeteria serves soup number {n} on Fridays.\n",
                                           encoding="utf-8")
    (docs / "backups.md").write_text("# Backups\n\nDatabase backups are retained for 17 days.\n", encoding="utf-8")
    (docs / "escape.md").symlink_to("/etc/hostname")
    task, result = await run("document-search", {"documents": [str(docs)], "question": QUESTION}, base, model)
    assert result.status == "completed"
    assert len(list(task.snapshots.iterdir())) == 1
    assert verify_task(task.directory) == []
    coverage = brief(task)["coverage"][0]
    assert any("escape.md" in note and "link" in note for note in coverage["notes"]), coverage


async def test_a_key_in_the_environment_signs_every_brief(base: Path, model: ScriptedModel) -> None:
    """WF-13 (issue 16 item 6): with DITTO_RESEARCH_SIGNING_KEY set the brief is signed as it is written; verify
    with the key accepts it, with another key refuses it."""
    from ditto.workflows.research import verify_task

    task, result = await run("document-search", {}, base, model, env={"DITTO_RESEARCH_SIGNING_KEY": "k-one-two"})
    assert result.status == "completed"
    assert (task.directory / "artifacts" / "brief.sig").is_file()
    assert verify_task(task.directory, signing_key="k-one-two") == []
    assert verify_task(task.directory, signing_key="another-key") != []


def test_an_unconfigured_model_is_refused_before_a_task_exists(tmp_path: Path) -> None:
    """WF-11 (issue 17): `--model openai/x` without a configured server says what to set; no task folder."""
    done = run_cli(research_args("document-search", "--model", "openai/x", "--json", "--base-dir",
                                 str(tmp_path / "tasks"), scripted=False))
    assert done.returncode == 2
    error = output(done)["result"]["error"]
    assert error["code"] == "RESEARCH_INVALID_INPUT" and "DITTO_WORKER_INFER_BASE_URL" in error["message"]
    assert not (tmp_path / "tasks").exists()


# -- the answer -----------------------------------------------------------------------------------------------
async def test_the_built_in_model_answers_with_sentences_from_the_evidence(tmp_path: Path) -> None:
    """WF-15 (issue 17): a brief with evidence carries an extractive answer whose every sentence is verbatim in a
    quote it cites; brief.md opens with the question and that answer."""
    task, result = await run_research("document-search", {}, base_dir=tmp_path, env={})
    assert result.status == "completed"
    data = brief(task)
    answer = data["answer"]
    assert answer["kind"] == "extractive" and 1 <= len(answer["sentences"]) <= 3
    quotes = {item["id"]: item["quote"] for item in data["evidence"]}
    for sentence in answer["sentences"]:
        assert sentence["evidence"] and any(sentence["text"] in quotes[item] for item in sentence["evidence"])
    markdown = (task.directory / "artifacts" / "brief.md").read_text(encoding="utf-8")
    assert markdown.index("Question") < markdown.index("Answer") < markdown.index("Evidence")


async def test_no_evidence_means_no_answer(tmp_path: Path) -> None:
    """WF-7, WF-15: nothing relevant found, nothing answered: the brief's answer is null."""
    task, result = await run_research("document-search", {"question": "Who won the 1998 football world cup?"},
                                      base_dir=tmp_path, env={})
    assert result.status == "no-evidence"
    assert brief(task).get("answer") is None


@pytest.mark.parametrize("bad, code", [
    ({"sentences": [{"text": "Backups are kept.", "evidence": ["e99"]}]}, "RESEARCH_UNKNOWN_SOURCE"),
    ({"sentences": [{"text": "Backups are kept.", "evidence": []}]}, "RESEARCH_ANSWER_UNCITED"),
])
async def test_a_model_answer_citing_nothing_known_is_retried_then_rejected(base: Path, bad: dict[str, Any],
                                                                            code: str) -> None:
    """WF-15 (issue 17): a model's answer must cite the brief's evidence ids, every sentence; a refused answer
    gets one retry with the reason, then the task is rejected with the documented code."""
    model = ScriptedModel({"answer_question": bad})
    task, result = await run("document-search", {"model": {"provider": "openai", "model": "m"}}, base, model)
    assert result.status == "rejected" and result.error is not None and result.error.code == code
    assert model.calls["answer_question"] == 2
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_a_model_answer_is_marked_as_the_models_wording(base: Path) -> None:
    """WF-15 (issue 17): a model's own words are kept as its answer (kind "model"), only citations checked."""
    def answer(task: Any) -> dict[str, Any]:
        return {"sentences": [{"text": "They are kept for a few weeks.", "evidence": [task.evidence[0].id]}]}

    model = ScriptedModel({"answer_question": answer})
    task, result = await run("document-search", {"model": {"provider": "openai", "model": "m"}}, base, model)
    assert result.status == "completed"
    assert brief(task)["answer"] == {"kind": "model", "sentences": [{"text": "They are kept for a few weeks.",
                                                                      "evidence": ["e1"]}]}


async def test_an_edited_checkpoint_is_never_published(base: Path, model: ScriptedModel) -> None:
    """WF-8, WF-13 (issue 16 item 5): a quote edited in the archived evidence checkpoint is caught on resume
    against the snapshot: RESEARCH_CHECKPOINT_INVALID, no brief."""
    from ditto.workflows.research.checkpoints import checkpoint_key

    task, result = await run("document-search", {}, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    store = create_sqlite_memory_store(str(task.directory / "memory.sqlite"))
    key = checkpoint_key(task.request_id, "evidence", task.checkpoint_id)
    try:
        (item,) = await store.get(keys=[key])
        from ditto.contracts import thaw_json
        from ditto.worker.memory import MemoryWriteItem

        content = thaw_json(item.content)
        first = content["data"]["evidence"][0]
        first["quote"] = first["quote"].replace(first["quote"][:1], "X", 1)
        await store.write([MemoryWriteItem(key=key, content=content, metadata={"kind": "research-checkpoint"})])
    finally:
        await store.close()
    _, resumed = await run("document-search", None, base, model, directory=task.directory)
    assert resumed.status == "failed" and resumed.error is not None
    assert resumed.error.code == "RESEARCH_CHECKPOINT_INVALID"
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_a_changed_snapshot_is_caught_on_resume_before_a_brief_is_written(base: Path,
                                                                               model: ScriptedModel) -> None:
    """WF-8, WF-13: a resumed task checks that each archived quote's snapshot still hashes to its name, not only
    that the quote is in it: a byte changed anywhere in a snapshot (even outside every quote) fails the resume with
    RESEARCH_CHECKPOINT_INVALID naming the snapshot, instead of publishing a brief that `ditto verify` rejects."""
    task, result = await run("document-search", {}, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    raws = sorted((task.directory / "snapshots").glob("*/raw"))
    assert raws
    for raw in raws:
        data = bytearray(raw.read_bytes())
        data[-1] ^= 0x01  # the last byte: past the quotes, so the quote slices still match
        raw.write_bytes(bytes(data))
    _, resumed = await run("document-search", None, base, model, directory=task.directory)
    assert resumed.status == "failed" and resumed.error is not None
    assert resumed.error.code == "RESEARCH_CHECKPOINT_INVALID" and "does not hash to its name" in resumed.error.message
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_a_task_whose_memory_store_was_deleted_does_not_silently_start_again(base: Path,
                                                                                   model: ScriptedModel) -> None:
    """WF-8: MEMORY gone is a failure, not a fresh start: a task that got past its request stage and lost its own
    ``memory.sqlite`` (and with it every checkpoint) fails to resume with RESEARCH_STORE_UNAVAILABLE, calling no
    model and writing no brief; a task created but never run has no store yet and runs."""
    task, result = await run("document-search", {}, base, model, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    for path in task.directory.glob("memory.sqlite*"):
        path.unlink()
    calls = dict(model.calls)
    with pytest.raises(ResearchError) as refused:  # as for a caller's store that does not exist
        await run("document-search", None, base, model, directory=task.directory)
    assert refused.value.code == "RESEARCH_STORE_UNAVAILABLE" and "memory.sqlite" in refused.value.message
    assert dict(model.calls) == calls and not (task.directory / "artifacts" / "brief.json").exists()

    fresh = create_task(ResearchRequest(entry="document-search", question=QUESTION), base_dir=base)
    assert not fresh.memory_path.exists()
    _, ran = await run("document-search", None, base, model, directory=fresh.directory)
    assert ran.status == "completed"


async def test_an_empty_documents_folder_says_so(tmp_path: Path, base: Path, model: ScriptedModel,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """WF-12 (issue 17): a folder without a readable document is said on the log and in the coverage, not a
    silent no-evidence."""
    empty = tmp_path / "empty"
    empty.mkdir()
    with caplog.at_level(logging.WARNING):
        task, result = await run("document-search", {"documents": [str(empty)], "question": QUESTION}, base, model)
    assert result.status == "no-evidence"
    assert any("no readable document" in note for note in brief(task)["coverage"][0]["notes"])
    assert any("no readable document" in record.getMessage() for record in caplog.records)


def test_options_are_search_terms() -> None:
    """WF-12 (issue 17): a command-line option is a search term of the documents source (the word analyzer drops
    one-letter tokens and dashes), case kept; a hyphenated word or a bullet is not an option."""
    from ditto.workflows.research.sources.documents import option_terms

    assert option_terms("mkdir 的 -p 选项有什么作用？") == ["-p"]
    assert option_terms("-p, --parents  make read-only copies - see -P") == ["-p", "--parents", "-P"]


def test_an_option_may_start_with_a_digit_in_the_question_and_the_index() -> None:
    """WF-12 (issue 17): ``xargs -0`` and ``kill -9`` name options as ``mkdir -p`` does: the built-in model's
    queries keep the dash, and the documents analysis indexes the option, so the passage documenting
    ``-0, --null`` is found by it; a range ("3-5") holds no option."""
    from ditto.worker.infer.extractive import keyword_query
    from ditto.workflows.research.sources.documents import option_terms

    assert keyword_query("What does xargs -0 do with input items?") == "xargs -0 input items"
    assert option_terms("-0, --null  Input items are terminated by a null character") == ["-0", "--null"]
    assert option_terms("kill -9 1234") == ["-9"]
    assert option_terms("pages 3-5") == []
