"""HTML files in a documents folder are read as their main text (WF-12, WF-10, WF-13).

Documentation folders ship HTML: Debian's ``sqlite3-doc`` is 766 pages, and ``changes.html`` or
``changelog.html.gz`` sit next to READMEs. Read as plain text, their markup was quoted (``<li>The REINDEX
command was added.</li>``); the pages that answer were never read at all. Every test here uses the real pages
of ``sqlite3-doc`` (installed by ``scripts/services``), read by the same extraction a web read uses.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ditto.retrieval.index.sources import document_suffixes, document_text
from ditto.text.files import DOCUMENT_SUFFIXES, HTML_SUFFIXES, WalkReport, is_document_name, is_html_name
from ditto.worker.interaction.extractor import extract_document_text, html_document_reader
from ditto.workflows.research import verify_task
from tests.research.cli import cli_env, output, research_args, run_cli, verify_args
from tests.support.sqlite_docs import sqlite_docs_dir

REINDEX = "The REINDEX command is used to delete and recreate indices from scratch."


def _sqlite_pages(tmp_path: Path, *names: str) -> Path:
    docs = tmp_path / "sqlite-docs"
    docs.mkdir()
    for name in names:
        shutil.copyfile(sqlite_docs_dir() / name, docs / name)
    return docs


def _brief_of(tmp_path: Path, docs: Path, question: str, *,
              embed: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """``ditto research document-search --documents DOCS --question Q`` as a user runs it: its result and brief."""
    env = {"DITTO_INDEX_CACHE_DIR": str(tmp_path / "cache")}
    if not embed:
        env["DITTO_RESEARCH_EMBED"] = "0"
    done = run_cli(research_args("document-search", "--documents", str(docs), "--question", question,
                                 "--base-dir", str(tmp_path / "tasks"), scripted=False), env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = output(done)["result"]
    return result, json.loads(Path(result["brief"]).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "html"), [
    ("lang_reindex.html", True), ("INDEX.HTM", True), ("page.xhtml", True), ("changelog.html.gz", True),
    ("changes.html", True), ("README", False), ("notes.md", False), ("html", False), ("site.html.bak", False),
])
def test_which_names_are_html(name: str, html: bool) -> None:
    """WF-12: an HTML document is known by its suffix, gzip-compressed or not; a conventional name with an HTML
    suffix (``changes.html``) is a document, read as HTML."""
    assert is_html_name(name) is html
    if html:
        assert is_document_name(name, DOCUMENT_SUFFIXES | HTML_SUFFIXES)
    assert html_document_reader() is not None  # the web extra is installed here
    assert document_suffixes(True) == DOCUMENT_SUFFIXES | HTML_SUFFIXES
    assert document_suffixes(False) == DOCUMENT_SUFFIXES


def test_a_real_page_is_read_as_its_main_text_and_bad_ones_are_named() -> None:
    """WF-12: the page's main text, its title first, without its markup or menu; a binary file and a page without
    text are skipped, each with a note naming it."""
    raw = (sqlite_docs_dir() / "lang_reindex.html").read_bytes()
    report = WalkReport()
    read = document_text(Path("lang_reindex.html"), raw, report, html=extract_document_text)
    assert read is not None and read.extracted and read.layout == "lines"
    assert read.text.startswith(f"REINDEX\n{REINDEX}")
    assert "<" not in read.text and "Download" not in read.text
    assert document_text(Path("x.html"), b"<html>\x00\x01</html>", report, html=extract_document_text) is None
    empty = b"<html><head><title>Nothing</title></head><body><script>x()</script></body></html>"
    assert document_text(Path("empty.html"), empty, report, html=extract_document_text) is None
    assert document_text(Path("changes.html"), raw, report, html=None) is None
    assert report.notes == ["x.html skipped: it holds NUL bytes (a binary file, not text)",
                            "empty.html skipped: no main text was found in its HTML",
                            "changes.html skipped: reading HTML needs the web extra (ditto-agents[web])"]


def test_research_quotes_the_page_text_and_the_brief_verifies(tmp_path: Path) -> None:
    """WF-12, WF-10, WF-13: ``ditto research document-search --documents`` over real SQLite pages quotes the
    page's text; the snapshot keeps the HTML as ``raw`` and the text as ``extracted.txt``, the evidence names
    the text's hash, the brief says where in that text the quote is, and ``ditto verify`` passes offline; an
    edited ``extracted.txt`` is caught."""
    docs = _sqlite_pages(tmp_path, "lang_reindex.html", "lang_vacuum.html", "autoinc.html")
    result, brief = _brief_of(tmp_path, docs, "What does the REINDEX command do?", embed=True)
    assert result["status"] == "completed"
    item = next(item for item in brief["evidence"] if REINDEX in item["quote"])
    assert item["uri"] == (docs / "lang_reindex.html").as_uri()
    assert "<" not in item["quote"]
    task = Path(result["directory"])
    snapshot = task / "snapshots" / item["snapshotSha256"]
    raw = (docs / "lang_reindex.html").read_bytes()
    assert (snapshot / "raw").read_bytes() == raw and item["snapshotSha256"] == hashlib.sha256(raw).hexdigest()
    text = (snapshot / "extracted.txt").read_text(encoding="utf-8")
    assert text[item["start"]:item["end"]] == item["quote"]
    assert item["locator"] == {"extractedSha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    assert text.split("\n")[item["lineStart"] - 1].startswith(item["quote"].split("\n")[0])
    markdown = Path(result["briefMarkdown"]).read_text(encoding="utf-8")
    assert f"lines {item['lineStart']}-{item['lineEnd']} of its extracted text" in markdown
    checked = run_cli(verify_args(task))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    (snapshot / "extracted.txt").write_text(text.replace("delete and recreate", "delete and rebuild"),
                                            encoding="utf-8")
    problems = verify_task(task)
    assert any("extractedSha256" in problem for problem in problems), problems


def test_a_changelog_in_html_is_read_as_text_not_markup(tmp_path: Path) -> None:
    """WF-12 (found by hand on ``/usr/share/doc/sqlite3``): ``changelog.html.gz`` is documentation by its name
    and was read as plain text, so the brief quoted ``<li>The REINDEX command was added.</li>``. It is HTML:
    its quotes are its text."""
    docs = tmp_path / "doc"
    docs.mkdir()
    (docs / "changelog.html.gz").write_bytes(gzip.compress((sqlite_docs_dir() / "changes.html").read_bytes()))
    _, brief = _brief_of(tmp_path, docs, "When was the REINDEX command added?")
    quotes = [item["quote"] for item in brief["evidence"]]
    assert any("The REINDEX command was added." in quote for quote in quotes), quotes
    assert not any("<li>" in quote or "</" in quote for quote in quotes), quotes


def test_ditto_index_keeps_the_page_text_and_search_finds_it_by_its_lines(tmp_path: Path) -> None:
    """WF-12 (one reader for research and the index): ``ditto index`` over HTML pages keeps each page's text
    beside its bytes; ``ditto search`` finds a passage with its lines in that text; a page removed from the
    folder leaves the index with it."""
    from ditto.retrieval.index import open_index

    docs = _sqlite_pages(tmp_path, "lang_reindex.html", "lang_vacuum.html")
    index = tmp_path / "index"
    made = subprocess.run([sys.executable, "-m", "ditto", "index", str(docs), "--index", str(index), "--json"],
                          env=cli_env(), capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    found = subprocess.run([sys.executable, "-m", "ditto", "search", "recreate indices from scratch", "--index",
                            str(index), "--json"], env=cli_env(), capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr[-2000:]
    hit = json.loads(found.stdout)["hits"][0]
    assert hit["path"].endswith("lang_reindex.html") and REINDEX in hit["text"]
    page = str((docs / "lang_reindex.html").resolve())
    with open_index(index) as opened:
        text = opened.extracted_text(page)
        assert text is not None and text.split("\n")[hit["lineStart"] - 1].startswith(REINDEX)
        stored = opened.file_bytes(page)
        assert stored is not None and stored[1] == (docs / "lang_reindex.html").read_bytes()
    (docs / "lang_reindex.html").unlink()
    again = subprocess.run([sys.executable, "-m", "ditto", "index", str(docs), "--index", str(index), "--json"],
                           env=cli_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    with open_index(index) as opened:
        assert opened.extracted_text(page) is None


async def test_the_first_task_over_a_folder_tells_how_its_indexing_goes(tmp_path: Path) -> None:
    """WF-12 (long work shows progress): a first task over a folder reads (and embeds) all of it, minutes for
    ``/usr/share/doc``; the task's progress hears each indexing phase from its start to its end. A second task
    over the unchanged folder only looks at the files again: no BM25 arrays are built."""
    from ditto.cli.research import describe_progress
    from ditto.workflows.research import run_research
    from ditto.workflows.research.config import ProgressEvent

    docs = _sqlite_pages(tmp_path, "lang_reindex.html", "lang_vacuum.html", "autoinc.html")
    env = {"DITTO_INDEX_CACHE_DIR": str(tmp_path / "cache"), "DITTO_RESEARCH_EMBED": "0"}
    for first in (True, False):
        events: list[ProgressEvent] = []
        _, result = await run_research("document-search", {"question": "What does REINDEX do?",
                                                           "documents": [str(docs)]},
                                       base_dir=tmp_path / "tasks", env=env, options={"progress": events.append})
        assert result.status == "completed"
        told = [describe_progress(event) for event in events if event.message.startswith("indexing the documents")]
        said = "[bold]evidence[/bold][cyan] document[/cyan]  indexing the documents: "
        reading = [f"{said}reading files 1/3", f"{said}reading files 3/3"]
        built = [f"{said}BM25 arrays 0/1", f"{said}BM25 arrays 1/1"]
        assert told == (reading + built if first else reading)


def test_index_pages_are_lists_of_links_and_prose_pages_are_not() -> None:
    """WF-12 (found on the SQLite manual): a keyword index, a site map or a cross-reference is a list of page
    names; a page of prose is not, and neither is a short page of any kind."""
    from ditto.retrieval.index.sources import lists_links

    def text(name: str) -> str:
        return extract_document_text((sqlite_docs_dir() / name).read_bytes())

    assert all(lists_links(text(name)) for name in ("keyword_index.html", "sitemap.html", "doc_target_crossref.html"))
    assert not any(lists_links(text(name)) for name in ("lang_reindex.html", "lang_upsert.html", "limits.html"))
    code = ["int main()", "{", "  ffi_cif cif;", "  closure = ffi_closure_alloc(sizeof(ffi_closure), &bound);",
            "  if (closure)", "    {", "      args[0] = &ffi_type_pointer;", "    }", "  return 0;", "}"] * 3
    assert not lists_links("\n".join(code))  # a page of code (libffi's closure example) is no list
    assert not lists_links("\n".join(["DROP TABLE", "DROP VIEW", "EXPLAIN"] * 5))  # 15 lines: too short to judge
    assert lists_links("\n".join(["DROP TABLE", "DROP VIEW", "EXPLAIN", "CREATE INDEX", "It is prose."] * 5))
    assert not lists_links("\n".join(["DROP TABLE", "DROP VIEW", "EXPLAIN", "One sentence of prose."] * 5))


def test_a_manual_s_index_pages_are_skipped_with_one_note(tmp_path: Path) -> None:
    """WF-12: over a manual's folder, its index pages took a shown document's place and were quoted ("sqrt() SQL
    function" for "Why does sqrt() give 'no such function'?"). They are not read; one note counts them."""
    docs = _sqlite_pages(tmp_path, "keyword_index.html", "lang_reindex.html", "sitemap.html")
    assert "REINDEX" in extract_document_text((docs / "keyword_index.html").read_bytes())
    _, brief = _brief_of(tmp_path, docs, "What does the REINDEX command do?")
    assert brief["evidence"] and all(item["uri"].endswith("/lang_reindex.html") for item in brief["evidence"])
    notes = [note for item in brief["coverage"] for note in item["notes"]]
    first = docs / "keyword_index.html"
    assert f"2 HTML page(s) skipped: lists of links or index terms, not prose (the first: {first})" in notes, notes


def test_index_pages_left_out_are_remembered_and_not_read_again_while_unchanged(tmp_path: Path) -> None:
    """WF-12 (measured on the SQLite manual: its 85 index pages were extracted again by every task, 2 s each): a
    page left out as a list of links is remembered with its size and time; the next run counts it in the same
    note without reading it, and reads it again once it changes."""
    import os
    import time

    from ditto.retrieval.index import open_index, update_index_sync

    docs = _sqlite_pages(tmp_path, "keyword_index.html", "lang_reindex.html")
    day_ago = time.time() - 86_400
    for page in docs.iterdir():
        os.utime(page, (day_ago, day_ago))
    read: list[int] = []

    def reader(raw: bytes) -> str:
        read.append(len(raw))
        return extract_document_text(raw)

    note = ("1 HTML page(s) skipped: lists of links or index terms, not prose (the first: "
            f"{(docs / 'keyword_index.html').resolve()})")
    first = update_index_sync(tmp_path / "idx", [docs], html=reader)
    assert len(read) == 2 and note in first.skipped and first.added == 1
    again = update_index_sync(tmp_path / "idx", [docs], html=reader)
    assert len(read) == 2 and note in again.skipped and again.generation == first.generation
    shutil.copyfile(sqlite_docs_dir() / "lang_vacuum.html", docs / "keyword_index.html")  # now a page of prose
    os.utime(docs / "keyword_index.html", (day_ago + 60, day_ago + 60))
    changed = update_index_sync(tmp_path / "idx", [docs], html=reader)
    assert len(read) == 3 and note not in changed.skipped and changed.added == 1
    with open_index(tmp_path / "idx") as index:
        assert index.extracted_text(str((docs / "keyword_index.html").resolve())) is not None


def test_one_text_in_two_files_is_shown_once(tmp_path: Path) -> None:
    """WF-12 (seed 004: at most three documents a query): SQLite's folder holds its change log as ``changes.html``
    and again as ``changelog.html.gz``, Node.js's each API page as HTML and as its Markdown source; the copies took
    two of a query's documents and the brief quoted one sentence twice. A passage that says what one shown before
    says (nearly all its words) is not shown again."""
    from ditto.workflows.research.sources.repeats import passage_words, says_the_same

    html = "The REINDEX command was added. The engine no longer consults the main table if it can get all the " \
           "information it needs from an index."
    markdown = "* The `REINDEX` command was added.\n* The engine no longer consults the main table if it can get\n" \
               "  all the information it needs from an [index](lang_createindex.html)."
    assert says_the_same(passage_words(html), passage_words(markdown))
    assert not says_the_same(passage_words(html), passage_words("The VACUUM command was added to the engine."))
    assert not says_the_same(passage_words("REINDEX was added."), passage_words(html))  # too short to judge

    docs = _sqlite_pages(tmp_path, "changes.html", "lang_reindex.html")
    (docs / "changelog.html.gz").write_bytes(gzip.compress((docs / "changes.html").read_bytes()))
    _, brief = _brief_of(tmp_path, docs, "When was the REINDEX command added?")
    quotes = [" ".join(item["quote"].split()) for item in brief["evidence"]]
    assert any("The REINDEX command was added." in quote for quote in quotes), quotes
    assert len(quotes) == len(set(quotes)), quotes
    assert not ({item["uri"].rsplit("/", 1)[-1] for item in brief["evidence"]} >= {"changes.html",
                                                                                   "changelog.html.gz"})
