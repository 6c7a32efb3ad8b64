"""``verify_task`` in-process: the exact problem list it reports for each kind of tampering with a finished task
folder (the ``ditto verify`` command prints the same list)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ditto.workflows.research import verify_task
from tests.research.forge import rewrite_brief
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture
async def good(base: Path, model: ScriptedModel) -> Path:
    task, result = await run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"}, base,
                             model)
    assert result.status == "completed"
    assert verify_task(task.directory) == []
    return task.directory


def _copy(good: Path, name: str) -> Path:
    copy = good.parent / name
    shutil.copytree(good, copy)
    return copy


def _brief(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    return data


def _edited(good: Path, name: str, change: Edit) -> Path:
    """A copy whose brief is edited by ``change`` and rewritten consistently (brief.md, archived checkpoint), so
    only the edit itself is wrong."""
    return rewrite_brief(good, name, change)


def _text(directory: Path, digest: str) -> str:
    return (directory / "snapshots" / digest / "raw").read_bytes().decode("utf-8")


def test_brief_file_problems_are_single_lines(good: Path) -> None:
    """WF-13: a missing brief, one that is not JSON, or one that breaks the brief schema is reported as that one
    problem, with no further checks."""
    missing = _copy(good, "missing")
    (missing / "artifacts" / "brief.json").unlink()
    assert verify_task(missing) == ["artifacts/brief.json is missing"]
    broken = _copy(good, "broken")
    (broken / "artifacts" / "brief.json").write_text("{not json", encoding="utf-8")
    assert verify_task(broken) == ["artifacts/brief.json is not readable JSON: it is not JSON (Expecting property "
                                   "name enclosed in double quotes at line 1)"]
    undecodable = _copy(good, "undecodable")
    (undecodable / "artifacts" / "brief.json").write_bytes(b"\xff\xfe{}")
    assert verify_task(undecodable) == ["artifacts/brief.json is not readable JSON: it is not UTF-8"]
    schema = _edited(good, "schema", lambda d: d.update(evidence="none"))
    assert verify_task(schema) == [
        "brief.json does not match the brief schema: evidence: 'none' is not of type 'array'"]
    listed = _copy(good, "listed")
    (listed / "artifacts" / "brief.json").write_text("[]", encoding="utf-8")
    assert verify_task(listed) == [
        "brief.json does not match the brief schema: brief: [] is not of type 'object'"]


def test_request_mismatches_are_named(good: Path) -> None:
    """WF-13: an edited or missing request.json, a brief of another request, and a brief whose question or entry
    differs from its request are each reported with their own line."""
    edited = _copy(good, "edited")
    document = json.loads((edited / "request.json").read_text(encoding="utf-8"))
    document["question"] = "A question nobody asked?"
    (edited / "request.json").write_text(json.dumps(document), encoding="utf-8")
    assert verify_task(edited) == [
        "request.json: request.json was changed after the task started; start a new task instead"]
    gone = _copy(good, "gone")
    (gone / "request.json").unlink()
    assert verify_task(gone) == ["request.json: the directory holds no research task (request.json)"]
    other = _edited(good, "other", lambda d: d.update(requestId="r-" + "0" * 24))
    assert verify_task(other) == ["brief.json belongs to another request than request.json"]
    question = _edited(good, "question", lambda d: d.update(question="A question nobody asked?"))
    assert verify_task(question) == ["brief.json's question or entry differs from its request"]
    entry = _edited(good, "entry", lambda d: d.update(entry="document-search"))
    assert verify_task(entry) == ["brief.json's question or entry differs from its request"]


def test_evidence_ids_and_citations_are_checked(good: Path) -> None:
    """WF-13: repeated evidence ids and a citation naming no evidence are each reported (every bad citation)."""
    def repeat(data: dict[str, Any]) -> None:
        data["evidence"][1]["id"] = data["evidence"][0]["id"]

    repeated = _edited(good, "repeated", repeat)
    assert verify_task(repeated) == ["evidence ids are not unique", "citation e2 names no evidence"]
    cited = _edited(good, "cited", lambda d: d["citations"].extend(["e98", "e99"]))
    assert verify_task(cited) == ["citation e98 names no evidence", "citation e99 names no evidence"]


def test_snapshot_problems_name_the_snapshot(good: Path) -> None:
    """WF-13: changed snapshot bytes, a missing snapshot folder and a snapshot whose text is not UTF-8 are each
    reported once, naming the snapshot; evidence in a bad snapshot is not checked further."""
    first = _brief(good)["evidence"][0]
    digest = first["snapshotSha256"]
    changed = _copy(good, "changed")
    raw = changed / "snapshots" / digest / "raw"
    content = bytearray(raw.read_bytes())
    content[0] ^= 0x01
    raw.write_bytes(bytes(content))
    assert verify_task(changed) == [f"snapshots: snapshot {digest} does not hash to its name (changed bytes)"]
    missing = _copy(good, "missing")
    shutil.rmtree(missing / "snapshots" / digest)
    assert verify_task(missing) == [f"{first['id']}: snapshot {digest} is missing"]
    unreadable = _copy(good, "unreadable")
    bad = b"\xff\xfe not utf-8"
    bad_digest = hashlib.sha256(bad).hexdigest()
    (unreadable / "snapshots" / bad_digest).mkdir()
    (unreadable / "snapshots" / bad_digest / "raw").write_bytes(bad)
    assert verify_task(unreadable) == [f"snapshots: snapshot {bad_digest} text is unreadable"]


def test_quote_offsets_and_lines_are_rechecked(good: Path) -> None:
    """WF-13: offsets outside the snapshot, an empty span, a quote that is not the text at its offsets and wrong
    line numbers are reported per evidence item, and every item is checked."""
    evidence = _brief(good)["evidence"]
    first, second = evidence[0], evidence[1]
    length = len(_text(good, first["snapshotSha256"]))

    def outside(data: dict[str, Any]) -> None:
        data["evidence"][0].update(end=length + 1)
        data["evidence"][1].update(end=data["evidence"][1]["start"])

    assert verify_task(_edited(good, "outside", outside)) == [
        f"e1: offsets {first['start']}-{length + 1} are outside the snapshot",
        f"e2: offsets {second['start']}-{second['start']} are outside the snapshot"]

    def shifted(data: dict[str, Any]) -> None:
        data["evidence"][0].update(start=first["start"] + 1, end=first["end"] + 1)
        data["evidence"][1].update(quote=second["quote"].replace("a", "o", 1))

    assert verify_task(_edited(good, "shifted", shifted)) == [
        f"e1: the quote is not the snapshot text at {first['start'] + 1}-{first['end'] + 1}",
        f"e2: the quote is not the snapshot text at {second['start']}-{second['end']}"]

    def lines(data: dict[str, Any]) -> None:
        data["evidence"][0].update(lineStart=first["lineStart"] + 1, lineEnd=first["lineEnd"] + 1)
        data["evidence"][1].update(lineEnd=second["lineEnd"] + 1)

    assert verify_task(_edited(good, "lines", lines)) == [
        f"e1: lines {first['lineStart'] + 1}-{first['lineEnd'] + 1} do not match the quote's position",
        f"e2: lines {second['lineStart']}-{second['lineEnd'] + 1} do not match the quote's position"]


def test_the_whole_snapshot_is_a_valid_quote(good: Path) -> None:
    """WF-13: a quote spanning a snapshot from its first to its last character verifies."""
    data = _brief(good)
    whole = next(item for item in data["evidence"]
                 if item["start"] == 0 and item["end"] == len(_text(good, item["snapshotSha256"])))
    assert whole["lineStart"] == 1


def test_extracted_text_is_vouched_for_by_its_evidence(good: Path) -> None:
    """WF-13 (issue 16 #6): a document item given a web page's locator is reported as not fitting its source (and
    its extractedSha256 names no extracted.txt), and an extracted.txt added to a snapshot whose evidence names no
    extractedSha256 (it would change the text quotes point into) is reported."""
    first = _brief(good)["evidence"][0]
    digest = first["snapshotSha256"]
    text = _text(good, digest)
    right_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    located = _edited(good, "located", lambda d: d["evidence"][0].update(locator={"extractedSha256": right_digest}))
    assert verify_task(located) == ["e1: uri or locator does not fit a document of this request",
                                    f"e1: the extracted text of snapshot {digest} changed (extractedSha256)"]
    added = _copy(good, "added")
    (added / "snapshots" / digest / "extracted.txt").write_text(text, encoding="utf-8")
    unvouched = "has an extracted.txt its evidence names no extractedSha256 for"
    assert verify_task(added) == [f"e1: snapshot {digest} {unvouched}", f"e2: snapshot {digest} {unvouched}"]


def test_checking_goes_on_after_a_bad_snapshot(good: Path) -> None:
    """WF-13: evidence in a changed snapshot, or with a changed extracted text, does not stop the check of the
    evidence after it."""
    evidence = _brief(good)["evidence"]
    first, third = evidence[0], evidence[2]
    assert first["snapshotSha256"] == evidence[1]["snapshotSha256"] != third["snapshotSha256"]
    bad_quote = f"e3: the quote is not the snapshot text at {third['start']}-{third['end']}"

    def later_quote(data: dict[str, Any]) -> None:
        data["evidence"][2].update(quote=third["quote"] + "!")

    changed = _edited(good, "changed", later_quote)
    raw = changed / "snapshots" / first["snapshotSha256"] / "raw"
    raw.write_bytes(raw.read_bytes() + b" ")
    assert verify_task(changed) == [
        f"snapshots: snapshot {first['snapshotSha256']} does not hash to its name (changed bytes)", bad_quote]

    extracted = _edited(good, "extracted", later_quote)
    (extracted / "snapshots" / first["snapshotSha256"] / "extracted.txt").write_text("other text", encoding="utf-8")
    unvouched = "has an extracted.txt its evidence names no extractedSha256 for"
    assert verify_task(extracted) == [f"e1: snapshot {first['snapshotSha256']} {unvouched}",
                                      f"e2: snapshot {first['snapshotSha256']} {unvouched}", bad_quote]
