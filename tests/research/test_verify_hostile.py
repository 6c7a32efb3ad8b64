"""``ditto verify`` against a hostile task folder (WF-13, WF-15; issue 16 item 6).

Every tampering runs on a copy of one real finished task (documents and both kinds of knowledge, the scripted
model behind the real INFER port) and goes through the real ``ditto verify`` command: each must exit 1 with a
one-line JSON report naming the problem, never hang (FIFOs, ``/dev/zero``), never run out of memory, never
read outside the folder and never print a traceback. Field edits are forged consistently (``brief.json`` in
ditto's own format, ``brief.md`` re-rendered and, unless said otherwise, the archived brief in ``memory.sqlite``
rewritten too) so that each check of verify is shown to work on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ditto.cli.app import app
from ditto.workflows.research import verify_task
from ditto.workflows.research.types import ResearchRequest, request_id
from ditto.workflows.research.verification import line_range
from tests.research.forge import copy_task, read_brief, rewrite_brief, write_brief
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

pytestmark = pytest.mark.timeout(30)
runner = CliRunner()
Tamper = Callable[[Path], None]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    task, result = asyncio.run(run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"},
                                   base / "tasks", ScriptedModel()))
    assert result.status == "completed"
    assert verify_task(task.directory) == []
    return task.directory


def verify_cli(directory: Path) -> tuple[int, dict[str, Any], str]:
    done = runner.invoke(app, ["verify", str(directory)], env={"DITTO_RESEARCH_SIGNING_KEY": ""})
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    return done.exit_code, json.loads(lines[0]), done.stdout


def assert_detected(directory: Path, expected: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    with caplog.at_level(logging.ERROR):
        code, report, text = verify_cli(directory)
    assert code == 1 and report["ok"] is False, report
    assert any(expected in problem for problem in report["problems"]), report["problems"]
    assert "Traceback" not in text
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR], "an unexpected failure"
    problems: list[str] = report["problems"]
    return problems


def _outside(directory: Path, name: str) -> Path:
    """A path beside the task folder (outside it)."""
    return directory.parent / f"{directory.name}-outside-{name}"


def _edit_raw(relative: str, change: Callable[[str], str]) -> Tamper:
    def tamper(directory: Path) -> None:
        path = directory / relative
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    return tamper


def _replace_with_link(relative: str, target: str | None = None) -> Tamper:
    """Replace a file or folder by a symlink: to ``target``, or to an outside copy with the same bytes."""
    def tamper(directory: Path) -> None:
        path = directory / relative
        if target is None:
            outside = _outside(directory, path.name)
            if path.is_dir():
                shutil.copytree(path, outside)
                shutil.rmtree(path)
            else:
                shutil.copy2(path, outside)
                path.unlink()
            path.symlink_to(outside)
        else:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
            path.symlink_to(target)
    return tamper


def _replace_with_fifo(relative: str) -> Tamper:
    def tamper(directory: Path) -> None:
        path = directory / relative
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        os.mkfifo(path)
    return tamper


def _first_digest(directory: Path) -> str:
    digest: str = read_brief(directory)["evidence"][0]["snapshotSha256"]
    return digest


def _snapshot(tamper: Callable[[str], Tamper]) -> Tamper:
    """A tampering of the first cited snapshot (its folder ``snapshots/<digest>``)."""
    def apply(directory: Path) -> None:
        tamper(f"snapshots/{_first_digest(directory)}")(directory)
    return apply


def _deep(directory: Path) -> None:
    (directory / "artifacts" / "brief.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")


def _huge(directory: Path) -> None:
    with open(directory / "artifacts" / "brief.json", "wb") as handle:
        handle.truncate(64 << 20)  # sparse: 64 MiB of NULs without writing them


def _duplicate_key(text: str) -> str:
    return text.replace('"status": "completed",', '"status": "completed",\n  "status": "partial",', 1)


FILE_TAMPERINGS: list[tuple[str, Tamper, str]] = [
    ("start as a string", _edit_raw("artifacts/brief.json", lambda t: t.replace('"start": 38', '"start": "38"', 1)),
     "evidence/0/start: '38' is not of type 'integer'"),
    ("start as a float", _edit_raw("artifacts/brief.json", lambda t: t.replace('"start": 38', '"start": 38.0', 1)),
     "evidence/0/start: 38.0 is not of type 'integer'"),
    ("line as a boolean", _edit_raw("artifacts/brief.json", lambda t: t.replace('"lineStart": 5', '"lineStart": true',
                                                                                1)),
     "evidence/0/lineStart: True is not of type 'integer'"),
    ("an id <script>", _edit_raw("artifacts/brief.json", lambda t: t.replace('"id": "e1"', '"id": "<script>"', 1)),
     "evidence/0/id: '<script>' does not match"),
    ("an unknown field", _edit_raw("artifacts/brief.json", lambda t: t.replace('{', '{"signedBy": "me",', 1)),
     "Additional properties are not allowed ('signedBy' was unexpected)"),
    ("a duplicate key", _edit_raw("artifacts/brief.json", _duplicate_key), "appears twice"),
    ("NaN", _edit_raw("artifacts/brief.json", lambda t: t.replace('"start": 38', '"start": NaN', 1)),
     "NaN is not JSON"),
    ("deeply nested JSON", _deep, "nested deeper than 32 levels"),
    ("a huge brief.json", _huge, "artifacts/brief.json is larger than"),
    ("brief.json reformatted", _edit_raw("artifacts/brief.json", lambda t: json.dumps(json.loads(t))),
     "brief.json is not byte for byte what ditto writes"),
    ("brief.json a FIFO", _replace_with_fifo("artifacts/brief.json"), "artifacts/brief.json is a FIFO"),
    ("brief.json a link to /dev/zero", _replace_with_link("artifacts/brief.json", "/dev/zero"),
     "artifacts/brief.json is a symbolic link"),
    ("brief.json a link outside", _replace_with_link("artifacts/brief.json"),
     "artifacts/brief.json is a symbolic link"),
    ("artifacts a link outside", _replace_with_link("artifacts"), "artifacts is a symbolic link"),
    ("brief.md edited", _edit_raw("artifacts/brief.md", lambda t: t.replace("Production", "Staging", 1)),
     "artifacts/brief.md is not the rendering of brief.json"),
    ("brief.md deleted", lambda d: (d / "artifacts" / "brief.md").unlink(), "artifacts/brief.md is missing"),
    ("brief.md a link outside", _replace_with_link("artifacts/brief.md"), "artifacts/brief.md is a symbolic link"),
    ("brief.md a FIFO", _replace_with_fifo("artifacts/brief.md"), "artifacts/brief.md is a FIFO"),
    ("request.json a FIFO", _replace_with_fifo("request.json"), "request.json is a FIFO"),
    ("request.json a link outside", _replace_with_link("request.json"), "request.json is a symbolic link"),
    ("request.json a link to /dev/zero", _replace_with_link("request.json", "/dev/zero"),
     "request.json is a symbolic link"),
    ("raw a link outside with the same bytes", _snapshot(lambda f: _replace_with_link(f"{f}/raw")),
     "is a symbolic link"),
    ("raw a link to /dev/zero", _snapshot(lambda f: _replace_with_link(f"{f}/raw", "/dev/zero")),
     "is a symbolic link"),
    ("raw a FIFO", _snapshot(lambda f: _replace_with_fifo(f"{f}/raw")), "is a FIFO"),
    ("extracted.txt a FIFO", _snapshot(lambda f: _replace_with_fifo(f"{f}/extracted.txt")),
     "extracted.txt is a FIFO"),
    ("a snapshot folder a link outside", _snapshot(lambda f: _replace_with_link(f)), "is a symbolic link"),
    ("a snapshot folder a FIFO", _snapshot(lambda f: _replace_with_fifo(f)), "is not a snapshot folder"),
    ("snapshots a link outside", _replace_with_link("snapshots"), "snapshots is a symbolic link"),
    ("memory.sqlite a link outside", _replace_with_link("memory.sqlite"), "memory.sqlite is a symbolic link"),
    ("memory.sqlite a FIFO", _replace_with_fifo("memory.sqlite"), "memory.sqlite is a FIFO"),
    ("memory.sqlite not SQLite", lambda d: (d / "memory.sqlite").write_bytes(b"not a database" * 100),
     "is not a readable MEMORY store"),
]


@pytest.mark.parametrize(("name", "tamper", "expected"), FILE_TAMPERINGS, ids=[case[0] for case in FILE_TAMPERINGS])
def test_file_tampering_is_reported_cleanly(good: Path, name: str, tamper: Tamper, expected: str,
                                            caplog: pytest.LogCaptureFixture) -> None:
    """WF-13 (issue 16 #6): schema violations (strings or floats for integers, a <script> id, unknown fields,
    duplicate keys, NaN), deep or huge JSON, a reformatted brief, an edited, deleted, linked or FIFO brief.md,
    and brief.json, request.json, snapshots or memory.sqlite replaced by links (to /dev/zero, or to outside
    files with the same bytes) or FIFOs: each is one clean problem, exit 1, no hang, no traceback."""
    copy = copy_task(good, name.replace(" ", "-").replace("/", "_"))
    tamper(copy)
    assert_detected(copy, expected, caplog)


def _evidence(index: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["evidence"][index].update(fields)
    return change


def _coverage(index: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["coverage"][index].update(fields)
    return change


def _partial(data: dict[str, Any]) -> None:
    data["status"] = "partial"
    data["failedSources"] = [{"source": "knowledge-external", "code": "RETRIEVAL_UNAVAILABLE", "message": "down"}]


def _reorder(data: dict[str, Any]) -> None:
    data["citations"] = list(reversed(data["citations"]))


def _drop_citation(data: dict[str, Any]) -> None:
    data["citations"].pop(1)


def _remove_middle(data: dict[str, Any]) -> None:
    del data["evidence"][2]
    data["citations"].remove("e3")
    data["coverage"][1]["evidence"] -= 1


def _remove_last(data: dict[str, Any]) -> None:
    data["evidence"].pop()
    data["citations"].pop()
    data["coverage"][2]["evidence"] -= 1


def _verbatim_item(data: dict[str, Any], directory: Path, number: int) -> dict[str, Any]:
    """A new document evidence item, verbatim in the policy snapshot (a sentence the model did not choose)."""
    first = data["evidence"][0]
    text = (directory / "snapshots" / first["snapshotSha256"] / "raw").read_bytes().decode("utf-8")
    quote = next(line for line in text.split("\n") if line.strip() and line.strip() not in
                 {item["quote"] for item in data["evidence"]} and not line.startswith("#"))
    start = text.index(quote)
    lines = line_range(text, start, start + len(quote))
    return {**first, "id": f"e{number}", "quote": quote, "start": start, "end": start + len(quote),
            "lineStart": lines[0], "lineEnd": lines[1]}


def _query(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["queries"][0].update(fields)
    return change


FIELD_TAMPERINGS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("uri of a document", _evidence(0, uri="file:///etc/passwd"), "e1: uri or locator does not fit a document"),
    ("uri of an internal record", _evidence(2, uri="memory:knowledge:acme:root-password"),
     "e3: uri or locator does not fit a knowledge-internal"),
    ("uri of an external record", lambda d: d["evidence"][4].update(uri=d["evidence"][4]["uri"] + "0"),
     "e5: uri or locator does not fit a knowledge-external"),
    ("locator of an external record", _evidence(4, locator={"target": "research-knowledge", "ref": "knowledge:9"}),
     "e5: uri or locator does not fit a knowledge-external"),
    ("locator removed", lambda d: d["evidence"][2].pop("locator"), "e3: uri or locator does not fit"),
    ("sourceType", _evidence(0, sourceType="knowledge-external"), "e1: uri or locator does not fit"),
    ("sourceType not requested", _evidence(0, sourceType="web"), "e1: sourceType web is not a source the request"),
    ("status partial", _partial, "the request does not allow partial results"),
    ("coverage evidence count", _coverage(0, evidence=1), "coverage of document counts 1 excerpt(s); the brief has 2"),
    ("coverage status", _coverage(0, status="no-excerpt"), "coverage of document is no-excerpt"),
    ("coverage hits", _coverage(0, hits=0), "coverage of document is evidence; its counts and failures make it "
                                            "no-hits"),
    ("coverage order", lambda d: d["coverage"].reverse(), "coverage does not list the request's sources"),
    ("coverage removed", lambda d: d["coverage"].pop(), "coverage does not list the request's sources"),
    ("query text", _query(text="Where are the passwords?"), "found by a query the brief does not list"),
    ("query provenance", _query(provenance="rewrite"), "query 1: provenance rewrite is not what multi-source"),
    ("query vocabulary entry", _query(vocabularyEntry="x"), "query 1 names a vocabulary entry"),
    ("query added", lambda d: d["queries"].extend([{"text": "a", "provenance": "model", "vocabularyEntry": None},
                                                   {"text": "b", "provenance": "model", "vocabularyEntry": None}]),
     "brief.json lists 3 queries"),
    ("model", lambda d: d["model"].update(provider="openai"), "brief.json's model differs from its request"),
    ("tenant", lambda d: d.update(tenant="other"), "brief.json's tenant differs from its request"),
    ("sources", lambda d: d.update(sources=["documents"]), "brief.json's sources differs from its request"),
    ("knowledge", lambda d: d.update(knowledge="internal"), "brief.json's knowledge differs from its request"),
    ("question", lambda d: d.update(question="Who may restore?"), "question or entry differs"),
    ("citation order", _reorder, "citations are not the evidence ids in order"),
    ("citation removed", _drop_citation, "citations are not the evidence ids in order"),
    ("evidence removed", _remove_middle, "evidence ids are not e1, e2"),
    ("found by another query", lambda d: d["evidence"][0].update(foundBy=["x"]),
     "e1: found by a query the brief does not list"),
    ("an answer citing nothing", lambda d: d.update(answer={"kind": "model", "sentences": [
        {"text": "Backups are kept forever.", "evidence": ["e99"]}]}), "answer sentence 1 cites evidence"),
    ("an extractive answer not in its quote", lambda d: d.update(answer={"kind": "extractive", "sentences": [
        {"text": "Backups are kept forever.", "evidence": ["e1"]}]}), "answer sentence 1 is not copied"),
]


@pytest.mark.parametrize(("name", "change", "expected"), FIELD_TAMPERINGS, ids=[case[0] for case in FIELD_TAMPERINGS])
def test_field_tampering_is_reported(good: Path, name: str, change: Callable[[dict[str, Any]], None], expected: str,
                                     caplog: pytest.LogCaptureFixture) -> None:
    """WF-13, WF-15 (issue 16 #6): uri, sourceType, locator, status, failedSources, coverage, queries, model,
    tenant, sources, knowledge, citation order, removed evidence and the answer's citations are each checked
    against the request and the snapshots, even when brief.md and the archived brief are forged to match."""
    copy = rewrite_brief(good, name.replace(" ", "-"), change)
    assert_detected(copy, expected, caplog)


def test_added_verbatim_evidence_is_reported(good: Path, caplog: pytest.LogCaptureFixture) -> None:
    """WF-13 (issue 16 #6): a quote that is verbatim in a snapshot but was never chosen, added to the brief: out of
    reading order when appended; when slipped into place and renumbered, the archived brief gives it away."""
    def appended(data: dict[str, Any]) -> None:
        data["evidence"].append(_verbatim_item(data, good, len(data["evidence"]) + 1))
        data["citations"].append(f"e{len(data['evidence'])}")
        data["coverage"][0]["evidence"] += 1

    assert_detected(rewrite_brief(good, "appended", appended), "evidence is not in the reading order", caplog)

    def inserted(data: dict[str, Any]) -> None:
        data["evidence"].insert(2, _verbatim_item(data, good, 3))
        for number, item in enumerate(data["evidence"], start=1):
            item["id"] = f"e{number}"
        data["citations"] = [item["id"] for item in data["evidence"]]
        data["coverage"][0]["evidence"] += 1

    problems = assert_detected(rewrite_brief(good, "inserted", inserted, archive=False),
                               "brief.json differs from the brief the task archived in memory.sqlite", caplog)
    assert problems == ["brief.json differs from the brief the task archived in memory.sqlite (citations, coverage, "
                        "evidence)"]


def test_removed_last_evidence_and_created_at_need_the_archive(good: Path, caplog: pytest.LogCaptureFixture) -> None:
    """WF-13 (issue 16 #6): dropping the last item (coverage and citations fixed up) or changing createdAt leaves
    a brief consistent with request and snapshots; the archived brief in memory.sqlite still tells."""
    for name, change, field in [("last", _remove_last, "citations, coverage, evidence"),
                                ("created", lambda d: d.update(createdAt="2020-01-01T00:00:00.000Z"), "createdAt")]:
        copy = rewrite_brief(good, f"brief-only-{name}", change, archive=False)
        assert assert_detected(copy, "archived", caplog) == [
            f"brief.json differs from the brief the task archived in memory.sqlite ({field})"]


def test_consistent_request_and_brief_edit_is_reported(good: Path, caplog: pytest.LogCaptureFixture) -> None:
    """WF-13 (issue 16 #6): request.json and the brief rewritten together (new question, recomputed request id,
    brief.md re-rendered) are consistent with each other; the task's memory archived no brief for that request."""
    copy = copy_task(good, "request-and-brief")
    document = json.loads((copy / "request.json").read_text(encoding="utf-8"))
    document.pop("requestId")
    document["question"] = "Who may restore a backup?"
    identifier = request_id(ResearchRequest.model_validate(document))
    (copy / "request.json").write_text(json.dumps({"requestId": identifier, **document}, indent=2) + "\n",
                                       encoding="utf-8")
    data = read_brief(copy)
    data.update(requestId=identifier, question=document["question"])
    write_brief(copy, data, archive=False)
    assert assert_detected(copy, "archived", caplog) == ["memory.sqlite holds no archived brief for this request"]


def test_no_checkpoint_store_is_a_note_not_a_pass_of_everything(good: Path) -> None:
    """WF-13: a task folder without memory.sqlite (deleted) is a problem: its own store must be there."""
    copy = copy_task(good, "no-memory")
    (copy / "memory.sqlite").unlink()
    assert verify_task(copy) == ["the archived brief cannot be read: memory.sqlite is missing"]


def test_the_real_command_does_not_hang_on_a_fifo_or_dev_zero(good: Path) -> None:
    """WF-13 (issue 16 #6): `ditto verify` as a child process on a folder whose brief.json is a FIFO and whose
    snapshot is a link to /dev/zero returns within seconds with exit 1 and no traceback."""
    from tests.research.cli import run_cli, verify_args

    copy = copy_task(good, "child")
    _replace_with_fifo("artifacts/brief.md")(copy)
    _snapshot(lambda f: _replace_with_link(f"{f}/raw", "/dev/zero"))(copy)
    done = run_cli(verify_args(copy), timeout=20)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    digest = hashlib.sha256(b"").hexdigest()
    assert digest not in done.stdout
    assert any("/dev/zero" not in problem and "symbolic link" in problem for problem in report["problems"])
    assert any("brief.md is a FIFO" in problem for problem in report["problems"])
    assert "Traceback" not in done.stdout + done.stderr
