"""Research over an index of JSONL / BEIR records quotes those records, and `ditto verify` checks them (issue 18).

A record has no file of its own: its snapshot is the record's text as indexed, its URI the record file's
``file://`` URI with the percent-encoded record id as the fragment, its locator ``{"recordId", "recordLine"}``.
The indexes are real (``ditto index`` / ``update_index`` over SQLite in a tmp folder), the tasks run through the
real CLI or ``run_research``, and every brief goes through ``verify``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval.index import update_index
from ditto.text.passages import MAX_PASSAGE_CHARS
from ditto.workflows.research import run_research
from ditto.workflows.research.markdown import inline
from ditto.workflows.research.sources.indexed_documents import rank_documents, record_span, record_uri
from ditto.workflows.research.verify import _record_fits, check_task
from tests.research.cli import output, research_args, run_cli, verify_args
from tests.research.helpers import brief
from tests.retrieval.index_support import write_docs

QUESTION = "How long are backups kept?"
ENV = {"DITTO_RESEARCH_EMBED": "0"}
RECORDS = [
    {"id": "ops-1", "content": "Alerts page the on-call engineer.\nEscalation happens after 15 minutes."},
    {"id": "ops-2", "content": "Backups are kept for 45 days.\nThey run nightly at 02:00.",
     "metadata": {"team": "ops"}},
    {"id": 3, "content": "Garbage collection frees memory in runtimes."},
]


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")
    return path


def _index(tmp_path: Path, *sources: Path) -> Path:
    """``ditto index SOURCE… --index DIR`` as a child process (the real CLI)."""
    index = tmp_path / "idx"
    done = run_cli([sys.executable, "-m", "ditto", "index", *map(str, sources), "--index", str(index), "--json"])
    assert done.returncode == 0, done.stderr[-2000:]
    return index


def _research(tmp_path: Path, index: Path, question: str = QUESTION) -> tuple[Path, dict[str, Any]]:
    """``ditto research document-search --index DIR`` (built-in model) as a child process: (task folder, brief)."""
    done = run_cli(research_args("document-search", "--index", str(index), "--question", question, "--json",
                                 "--base-dir", str(tmp_path / "tasks"), scripted=False), env=ENV)
    assert done.returncode == 0, done.stderr[-2000:]
    result = output(done)
    assert result["result"]["status"] == "completed", result
    directory = Path(result["directory"])
    return directory, json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))


def _verify(directory: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(verify_args(directory))


def _records(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in data["evidence"] if item.get("locator") and "recordId" in item["locator"]]


def _tamper_fails_verify(tmp_path: Path, directory: Path, item: dict[str, Any]) -> None:
    """A copy of the task whose record snapshot lost a byte: `ditto verify` exits 1 and names it."""
    copy = tmp_path / "tampered"
    shutil.copytree(directory, copy)
    raw = copy / "snapshots" / item["snapshotSha256"] / "raw"
    raw.write_bytes(raw.read_bytes().replace(b"45", b"90"))
    checked = _verify(copy)
    assert checked.returncode == 1
    problems = json.loads(checked.stdout)["problems"]
    assert any(item["snapshotSha256"] in problem and "changed bytes" in problem for problem in problems), problems


def test_a_jsonl_index_brief_quotes_the_record_and_verifies_until_its_snapshot_changes(tmp_path: Path) -> None:
    """Issue 18, WF-10, WF-13, WF-15: research over an index of a JSONL file quotes the record that answers:
    the snapshot is the record's text, the URI names the file and the record id, the locator the id and its
    line in the file, offsets and lines point into the snapshot; `ditto verify` passes, and fails (exit 1,
    naming the snapshot) once the record's snapshot is altered."""
    corpus = _jsonl(tmp_path / "data" / "corpus.jsonl", RECORDS)
    directory, data = _research(tmp_path, _index(tmp_path, corpus))
    [item] = _records(data)
    assert item["sourceType"] == "document"
    assert item["uri"] == corpus.resolve().as_uri() + "#ops-2"
    assert item["locator"] == {"recordId": "ops-2", "recordLine": 2}
    assert "45 days" in item["quote"]
    text = (directory / "snapshots" / item["snapshotSha256"] / "raw").read_bytes().decode("utf-8")
    assert text == RECORDS[1]["content"]
    # "They run nightly at 02:00." points back at the backups: the quote reads it along, over the record's two lines.
    assert text[item["start"]:item["end"]] == item["quote"] and (item["lineStart"], item["lineEnd"]) == (1, 2)
    markdown = (directory / "artifacts" / "brief.md").read_text(encoding="utf-8")
    assert inline(f"record ops-2 of {corpus.resolve()} (line 2), lines 1-2 of the record") in markdown
    verified = _verify(directory)
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True, verified.stdout
    _tamper_fails_verify(tmp_path, directory, item)


def test_a_beir_folder_brief_quotes_title_and_text_as_indexed(tmp_path: Path) -> None:
    """Issue 18, WF-13: a BEIR folder (corpus.jsonl with _id/title/text, queries, qrels) indexed by `ditto index`:
    the brief quotes the abstract, whose snapshot is its title and text as indexed, under corpus.jsonl's URI and
    the record's _id; verify passes, and fails once the snapshot is altered."""
    folder = tmp_path / "beir"
    _jsonl(folder / "corpus.jsonl", [
        {"_id": "d1", "title": "Alerting", "text": "Alerts page the on-call engineer.", "metadata": {}},
        {"_id": "d2", "title": "Backup retention", "text": "Backups are kept for 45 days before deletion."},
        {"_id": "d3", "title": "Runtimes", "text": "Garbage collection frees memory."}])
    _jsonl(folder / "queries.jsonl", [{"_id": "q1", "text": QUESTION}])
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n", encoding="utf-8")
    directory, data = _research(tmp_path, _index(tmp_path, folder))
    [item] = _records(data)
    assert item["uri"] == (folder / "corpus.jsonl").resolve().as_uri() + "#d2"
    assert item["locator"] == {"recordId": "d2", "recordLine": 2}
    raw = (directory / "snapshots" / item["snapshotSha256"] / "raw").read_bytes()
    assert raw == b"Backup retention\nBackups are kept for 45 days before deletion."
    assert "45 days" in item["quote"] and item["lineEnd"] == 2
    assert raw.decode("utf-8")[item["start"]:item["end"]] == item["quote"]
    assert _verify(directory).returncode == 0
    _tamper_fails_verify(tmp_path, directory, item)


def test_a_mixed_index_cites_a_file_and_a_record(tmp_path: Path) -> None:
    """Issue 18: an index of a folder and a JSONL file searched together cites both kinds, each in its own
    form (a file URI with no locator, a record URI with its locator), and the brief verifies."""
    docs = write_docs(tmp_path / "docs")
    corpus = _jsonl(tmp_path / "corpus.jsonl", RECORDS)
    directory, data = _research(tmp_path, _index(tmp_path, docs, corpus))
    files = [item for item in data["evidence"] if "locator" not in item or item["locator"] is None]
    records = _records(data)
    assert any(item["uri"] == (docs / "ops/backups.md").resolve().as_uri() and "30 days" in item["quote"]
               for item in files), data["evidence"]
    assert any(item["uri"].endswith("corpus.jsonl#ops-2") and "45 days" in item["quote"] for item in records)
    assert _verify(directory).returncode == 0


ODD_IDS = ["a record with spaces", "hash#in#the#id", "a/b/../c", "100% ünïcödé 記録 🗄️", "?query=1&x", "x" * 1024]


@pytest.mark.parametrize("record_id", ODD_IDS, ids=["spaces", "hash", "slashes", "unicode", "query", "1kB"])
async def test_ids_with_odd_characters_stay_well_formed_and_verify(tmp_path: Path, record_id: str) -> None:
    """Issue 18, WF-13: a record id with spaces, '#', '/', '%', non-ASCII or 1024 characters is one
    percent-encoded fragment of a well-formed ASCII URI that decodes back to the id; the brief verifies, and
    an edited locator id or a re-encoded fragment does not."""
    corpus = _jsonl(tmp_path / "dir #1" / "corpus.jsonl",
                    [{"id": record_id, "content": "Backups are kept for 45 days."}, *RECORDS[:1]])
    await update_index(tmp_path / "idx", [corpus])
    task, result = await run_research("document-search", {"question": QUESTION, "index": str(tmp_path / "idx")},
                                      base_dir=tmp_path / "tasks", env=ENV)
    assert result.status == "completed", result.error
    [item] = _records(brief(task))
    uri = item["uri"]
    assert uri.isascii() and " " not in uri and uri.count("#") == 1
    parts = urlsplit(uri)
    assert unquote(parts.path) == str(corpus.resolve()) and unquote(parts.fragment) == record_id
    assert item["locator"] == {"recordId": record_id, "recordLine": 1}
    report = check_task(task.directory)
    assert report.ok, report.problems

    path = task.directory / "artifacts" / "brief.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["evidence"][0]["locator"]["recordId"] = record_id + "x"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert any("e1: uri or locator does not fit a document" in problem
               for problem in check_task(task.directory).problems)
    # the same id, encoded otherwise (a raw '/' or space, lower-case hex, an encoded letter): not ditto's form
    base, fragment = uri.split("#")
    other = [candidate for candidate in (quote(record_id, safe="/ "), fragment.lower(), f"%{ord(fragment[0]):02X}"
                                         + fragment[1:]) if candidate != fragment and unquote(candidate) == record_id]
    assert other
    data["evidence"][0]["locator"]["recordId"] = record_id
    data["evidence"][0]["uri"] = f"{base}#{other[0]}"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert any("e1: uri or locator does not fit a document" in problem
               for problem in check_task(task.directory).problems)


async def test_a_record_uri_in_a_folder_request_fails_verify(tmp_path: Path) -> None:
    """WF-13: records come only from a prepared index; a brief of a --documents task whose evidence is
    edited to name a record (with a fitting locator) fails verify on that item."""
    docs = write_docs(tmp_path / "docs")
    task, result = await run_research("document-search", {"question": QUESTION, "documents": [str(docs)]},
                                      base_dir=tmp_path / "tasks",
                                      env={**ENV, "DITTO_INDEX_CACHE_DIR": str(tmp_path / "cache")})
    assert result.status == "completed", result.error
    path = task.directory / "artifacts" / "brief.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["evidence"][0]["uri"] = record_uri(str(docs / "corpus.jsonl"), "r1")
    data["evidence"][0]["locator"] = {"recordId": "r1", "recordLine": 1}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert any("e1: uri or locator does not fit a document" in problem
               for problem in check_task(task.directory).problems)


async def test_each_record_is_a_document_of_its_own_and_a_query_shows_at_most_three(tmp_path: Path) -> None:
    """Issue 18, WF-6: six records that all answer: each query shows at most 3 of them, three distinct records
    (a JSONL file is not one document), and the brief verifies."""
    corpus = _jsonl(tmp_path / "corpus.jsonl",
                    [{"id": f"r{n}", "content": f"Backups of cluster {n} are kept for {40 + n} days."}
                     for n in range(6)])
    await update_index(tmp_path / "idx", [corpus])
    task, result = await run_research("document-search", {"question": QUESTION, "index": str(tmp_path / "idx")},
                                      base_dir=tmp_path / "tasks", env=ENV)
    assert result.status == "completed", result.error
    data = brief(task)
    [coverage] = data["coverage"]
    assert 0 < coverage["hits"] <= 3 * len(data["queries"])
    ids = [item["locator"]["recordId"] for item in _records(data)]
    assert len(ids) == len(set(ids))
    assert check_task(task.directory).ok


def _hit(path: str, identifier: str, score: float) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(id=identifier, score=score, metadata={"path": path})


def test_records_rank_one_by_one_while_a_file_groups_its_passages() -> None:
    """Issue 18: in a JSONL/BEIR file each record is its own document (grouped by path and id); a text file's
    passages still group under the file."""
    hits = [_hit("/c.jsonl", "r1", 1.0), _hit("/c.jsonl", "r2", 0.9), _hit("/a.md", "/a.md#1", 0.8),
            _hit("/a.md", "/a.md#2", 0.7)]
    ranked = rank_documents(hits, records=frozenset({"/c.jsonl"}))
    assert [[hit.id for hit in passages] for _, passages in ranked] == [["r1"], ["r2"], ["/a.md#1", "/a.md#2"]]
    assert len(rank_documents(hits)) == 2  # without the record files: two paths


_IDS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=1024)


@settings(max_examples=200, deadline=None)
@given(record_id=_IDS, line=st.integers(min_value=1, max_value=10**6))
def test_a_record_uri_round_trips_and_only_its_own_form_verifies(record_id: str, line: int) -> None:
    """Issue 18, WF-13 (invariant): for any id the index accepts, the record URI is ASCII with exactly one '#',
    decodes back to the id, and verify's check accepts it with the same id in the locator, never another id."""
    uri = record_uri("/data/my corpus #2/corpus.jsonl", record_id)
    assert uri.isascii() and uri.count("#") == 1 and " " not in uri
    assert unquote(urlsplit(uri).fragment) == record_id
    assert _record_fits(uri, {"recordId": record_id, "recordLine": line})
    assert not _record_fits(uri, {"recordId": record_id + "-", "recordLine": line})
    assert not _record_fits(uri, {"recordId": record_id, "recordLine": str(line)})
    assert not _record_fits(uri, {"recordId": record_id, "recordLine": line, "extra": 1})


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=3000),
       query=st.text(min_size=1, max_size=30))
def test_a_record_shows_a_bounded_span_of_its_own_text(text: str, query: str) -> None:
    """Issue 18, WF-6 (invariant): the span shown of a record lies inside it, is at most one passage long and
    not blank; a record that fits one passage is shown whole (trimmed); a blank one shows nothing."""
    span = record_span(text, query)
    if not text.strip():
        assert span is None
        return
    assert span is not None
    start, end = span
    assert 0 <= start < end <= len(text) and end - start <= MAX_PASSAGE_CHARS and text[start:end].strip()
    if len(text.strip()) <= MAX_PASSAGE_CHARS:
        assert text[start:end] == text.strip()


def test_a_corpus_named_as_the_index_is_a_clear_error(tmp_path: Path) -> None:
    """Issue 18: `--index corpus.jsonl` (the corpus, not an index of it) blocks the task with the documents
    source's failure saying so and how to build the index; exit 1, the result JSON, no traceback."""
    corpus = _jsonl(tmp_path / "corpus.jsonl", RECORDS)
    done = run_cli(research_args("document-search", "--index", str(corpus), "--question", QUESTION, "--json",
                                 "--base-dir", str(tmp_path / "tasks"), scripted=False), env=ENV)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    result = output(done)["result"]
    assert result["status"] == "blocked"
    [failed] = result["failedSources"]
    assert failed["code"] == "RETRIEVAL_PROVIDER_UNAVAILABLE"
    assert "is a file, not an index folder" in failed["message"] and "ditto index" in failed["message"]
