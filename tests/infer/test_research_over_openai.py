"""A research task end to end through the real ``openai`` SDK against a local OpenAI-compatible server
(INF-3, WF-10, WF-11, WF-13).

Issue 15, "Tests that catch the bug" (INFER × research): the server here reads the task each request
poses (the JSON of the last user message), as a real model would, and answers with its own choice of
query and of verbatim excerpts. So the test can check that the workflow searched with *the server's*
query, quoted *the server's* excerpts and nothing else, and that a wrong answer (a quote one character
off, a source id the task never gave) is rejected rather than repaired. The server is a small starlette
app on 127.0.0.1 under uvicorn; the task gets it through ``DITTO_WORKER_INFER_*``, as an application does.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ditto.workflows.research import ResearchOptions, run_research, verify_task
from tests.support.openai_chat_server import completion
from tests.support.uvicorn_thread import serve_app

KEY = "sk-reader-5e0b"
MODEL = "reader-model"
#: The query the server chooses: it finds only the archive notes, while the question matches both files.
QUERY = "archived snapshots years"
QUESTION = "How long are database backups retained?"
OPTIONS = ResearchOptions()
_SENTENCE = re.compile(r"[^.\n]*\bretained\b[^.\n]*\.")

Excerpts = Callable[[dict[str, Any]], list[dict[str, str]]]


def retention_sentences(task: dict[str, Any]) -> list[dict[str, str]]:
    """The reader's honest choice: in each passage, the first sentence about retention, verbatim."""
    chosen = []
    for passage in task["passages"]:
        found = _SENTENCE.search(passage["text"])
        if found:
            chosen.append({"sourceId": passage["sourceId"], "quote": found.group().strip()})
    return chosen[:1]


@dataclass
class Reader:
    """What the server answers and what it was asked."""

    excerpts: Excerpts = retention_sentences
    tasks: list[dict[str, Any]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)


@asynccontextmanager
async def reading_server(reader: Reader) -> AsyncIterator[dict[str, str]]:
    """Serve ``/v1/chat/completions`` answering the research tasks; yield the environment pointing at it."""

    async def chat(request: Request) -> Response:
        reader.authorizations.append(request.headers.get("authorization"))
        body = json.loads(await request.body())
        reader.bodies.append(body)
        task = json.loads(body["messages"][-1]["content"])
        reader.tasks.append(task)
        if task["task"] == "choose_queries":
            answer: dict[str, Any] = {"queries": [QUERY]}
        elif task["task"] == "choose_excerpts":
            answer = {"excerpts": reader.excerpts(task)}
        elif task["task"] == "answer_question":  # the model's own words, citing the first evidence item
            answer = {"sentences": [{"text": "Archived snapshots are kept for seven years.",
                                     "evidence": [task["evidence"][0]["id"]]}]}
        else:
            return JSONResponse({"error": {"message": "unknown task"}}, status_code=400)
        reader.answers.append(answer)
        return JSONResponse(completion(json.dumps(answer), body["model"]))

    async with serve_app(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])) as url:
        yield {"DITTO_WORKER_INFER_BASE_URL": f"{url}/v1", "DITTO_WORKER_INFER_MODEL": MODEL,
               "DITTO_WORKER_INFER_API_KEY": KEY}


def notes(folder: Path) -> Path:
    """Two documents that both answer "retained"; only the archive notes match the server's query."""
    folder.mkdir()
    (folder / "backups.md").write_text("# Backups\n\nEach database backup is retained for 100 days.\n",
                                       encoding="utf-8")
    (folder / "archive.md").write_text("# Archive\n\nArchived snapshots are retained for 7 years.\n",
                                       encoding="utf-8")
    return folder


async def test_document_search_completes_with_the_servers_queries_and_excerpts(tmp_path: Path) -> None:
    """WF-11, INF-3 (issue 15, end to end through the openai SDK): document-search asks the server for
    queries, searches with the one it chose (so the passages it is shown are the archive notes only, not the
    backup notes the question alone would find), and the brief quotes exactly the excerpt the server picked,
    at offsets that verify against the snapshot."""
    reader = Reader()
    request = {"question": QUESTION, "documents": [str(notes(tmp_path / "notes"))]}
    async with reading_server(reader) as env:
        task, result = await run_research("document-search", request, base_dir=tmp_path / "tasks", env=env,
                                          options=OPTIONS)
    assert result.status == "completed", result
    assert [t["task"] for t in reader.tasks] == ["choose_queries", "choose_excerpts", "answer_question"]
    assert all(body["model"] == MODEL and body["response_format"]["type"] == "json_schema"
               for body in reader.bodies)
    assert set(reader.authorizations) == {f"Bearer {KEY}"}
    brief = json.loads((task.directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    assert brief["model"] == {"provider": "openai", "model": MODEL}
    assert [query["text"] for query in brief["queries"]] == [QUERY]
    shown = [passage["text"] for passage in reader.tasks[1]["passages"]]
    assert shown and all("100 days" not in text for text in shown), shown
    assert reader.answers[1] == {"excerpts": [{"sourceId": reader.tasks[1]["passages"][0]["sourceId"],
                                               "quote": "Archived snapshots are retained for 7 years."}]}
    assert [(item["quote"], item["uri"].rsplit("/", 1)[-1]) for item in brief["evidence"]] == [
        ("Archived snapshots are retained for 7 years.", "archive.md")]
    assert brief["answer"] == {"kind": "model", "sentences": [
        {"text": "Archived snapshots are kept for seven years.", "evidence": ["e1"]}]}
    assert verify_task(task.directory) == []


async def test_an_excerpt_one_character_off_is_rejected(tmp_path: Path) -> None:
    """WF-10, WF-11 (issue 15, a bad excerpt answer is rejected): the server's quote with one character
    changed is not in the passage: the task is rejected with RESEARCH_QUOTE_NOT_FOUND, no brief is written,
    and nothing is repaired into a near match."""

    def off_by_one(task: dict[str, Any]) -> list[dict[str, str]]:
        chosen = retention_sentences(task)
        return [{"sourceId": item["sourceId"], "quote": item["quote"].replace("retained", "retaned", 1)}
                for item in chosen]

    reader = Reader(excerpts=off_by_one)
    request = {"question": QUESTION, "documents": [str(notes(tmp_path / "notes"))]}
    async with reading_server(reader) as env:
        task, result = await run_research("document-search", request, base_dir=tmp_path / "tasks", env=env,
                                          options=OPTIONS)
    assert reader.answers[1]["excerpts"], "the reader found nothing to quote"
    assert result.status == "rejected" and result.error is not None
    assert result.error.code == "RESEARCH_QUOTE_NOT_FOUND"
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_an_excerpt_under_a_source_id_the_task_never_gave_is_rejected(tmp_path: Path) -> None:
    """WF-10 (issue 15): a verbatim quote under an invented source id → RESEARCH_UNKNOWN_SOURCE, no brief."""

    def invented_source(task: dict[str, Any]) -> list[dict[str, str]]:
        return [{"sourceId": "doc-999", "quote": item["quote"]} for item in retention_sentences(task)]

    reader = Reader(excerpts=invented_source)
    request = {"question": QUESTION, "documents": [str(notes(tmp_path / "notes"))]}
    async with reading_server(reader) as env:
        task, result = await run_research("document-search", request, base_dir=tmp_path / "tasks", env=env,
                                          options=OPTIONS)
    assert reader.answers[1]["excerpts"]
    assert result.status == "rejected" and result.error is not None
    assert result.error.code == "RESEARCH_UNKNOWN_SOURCE"
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_openai_slash_name_needs_only_the_server_address(tmp_path: Path) -> None:
    """Issue 17 (errors that name the fact): `--model openai/NAME` names the model, so the environment only
    has to give the server's address; every call goes to NAME, and the answer step is shown each quote's
    context (the file name of a document without headings, the heading path otherwise)."""
    reader = Reader()
    request = {"question": QUESTION, "documents": [str(notes(tmp_path / "notes"))],
               "model": {"provider": "openai", "model": "named-on-the-command-line"}}
    async with reading_server(reader) as env:
        env = {key: value for key, value in env.items() if key != "DITTO_WORKER_INFER_MODEL"}
        _, result = await run_research("document-search", request, base_dir=tmp_path / "tasks", env=env,
                                          options=OPTIONS)
    assert result.status == "completed", result
    assert {body["model"] for body in reader.bodies} == {"named-on-the-command-line"}
    answer_task = reader.tasks[-1]
    assert answer_task["task"] == "answer_question"
    assert answer_task["evidence"][0]["context"] == "Archive"


async def test_an_unreachable_server_is_named_as_the_cause(tmp_path: Path) -> None:
    """Issue 17 (errors that name the fact): a model server nobody listens on fails the task with
    RESEARCH_MODEL_FAILED whose message says the server could not be reached, not only a code."""
    request = {"question": QUESTION, "documents": [str(notes(tmp_path / "notes"))],
               "model": {"provider": "openai", "model": "m"}}
    env = {"DITTO_WORKER_INFER_BASE_URL": "http://127.0.0.1:9/v1", "DITTO_WORKER_INFER_MAX_RETRIES": "0"}
    _, result = await run_research("document-search", request, base_dir=tmp_path / "tasks", env=env, options=OPTIONS)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "RESEARCH_MODEL_FAILED"
    assert "could not be reached" in result.error.message and "INFER_PROVIDER_UNAVAILABLE" in result.error.message
