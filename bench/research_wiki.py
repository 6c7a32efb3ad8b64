"""Research on a real MediaWiki holding real SQLite documentation: ``web-search`` with the built-in model.

Usage::

    PYTHONPATH=src:. python bench/research_wiki.py [--show] [--src SRC_DIR]

A stock MediaWiki (Debian's ``mediawiki``, SQLite backend, ``tests/support/mediawiki.py``) is
installed into a temporary folder and filled with the text of 22 pages of Debian's
``sqlite3-doc`` (``tests/support/sqlite_docs.page_text``, as the test suite's wiki), its search
index rebuilt, and served over HTTPS on 127.0.0.1 with a test CA. Each question is one
``ditto research web-search --wiki-url API --ca-file CA`` child process, as a user runs it.

An answerable question *hits* when the brief quotes the phrase that answers it (whitespace
collapsed, case-insensitive; each phrase is checked in its page's text before the run). Also
counted: ``no-evidence``, ``rejected`` and other statuses, whether the expected page was among
the pages read, whether the phrase was in the text read at all, and the peer "BM25 top-1
paragraph" of the expected page's text as the wiki served it (when it was read). Unanswerable
questions (they share words with the wiki) should come back ``no-evidence``. With ``--show``
each question's outcome is printed; for a miss also the queries, what the wiki's search
returned for them (replayed with ``ditto.worker.interaction.web_search``: same engine, same wiki),
the pages read and the quotes. Needs the Debian packages ``mediawiki``, ``php-*`` and
``sqlite3-doc`` (``scripts/services`` installs them). ``--src`` runs the tasks from another source
tree (e.g. ``git archive d6baba9 src | tar -x -C /tmp/before``) for a before/after comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from research_web import _bm25_top1  # noqa: E402 - the peer both web benches report

#: The SQLite pages the wiki holds (file stem; the page's <title> becomes the wiki title).
PAGES: tuple[str, ...] = (
    "wal", "lockingv3", "foreignkeys", "autoinc", "lang_vacuum", "datatype3", "tempfiles", "backup", "fts5",
    "limits", "isolation", "atomiccommit", "lang_upsert", "json1", "partialindex", "withoutrowid", "lang_attach",
    "inmemorydb", "gencol", "stricttables", "lang_savepoint", "quirks",
)

#: (question, page stem, phrase of the answer) — phrases checked in the pages' text at start-up. Alternatives
#: (``|``) were added for two questions after reading first runs whose quotes answer in the page's other words.
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("How many databases can I attach to one connection before hitting the default limit?", "limits",
     "set to 10 by default"),
    ("If I leave off VIRTUAL or STORED on a computed column, which kind do I get?", "gencol",
     "VIRTUAL is the default"),
    ("Can I add a stored generated column to an existing table with ALTER TABLE?", "gencol",
     "Only VIRTUAL columns can be added|cannot add new STORED columns"),
    ("How are true and false values kept in an SQLite table?", "datatype3", "integers 0 (false) and 1 (true)"),
    ("How do I open a database that lives only in RAM and never touches the disk?", "inmemorydb", ":memory:"),
    ("Can two connections in one process use the same in-memory database?", "inmemorydb", "cache=shared"),
    ("Does rolling back to a savepoint end my whole transaction?", "lang_savepoint",
     "does not cancel the transaction"),
    ("In an upsert, how do I refer to the value the failed insert tried to write?", "lang_upsert", "excluded."),
    ("Which SQLite release first supports tables with rigid type checking?", "stricttables", "3.37.0"),
    ("What must every table without a rowid declare?", "withoutrowid", "must have a PRIMARY KEY"),
    ("How can I build an index over only some of a table's rows?", "partialindex", "adding a WHERE clause"),
    ("Why does a misspelled column name in double quotes not give an error?", "quirks",
     "interpreted as a string literal"),
    ("Can one connection see changes another connection has not committed yet?", "isolation",
     "read_uncommitted"),
    ("How do I avoid SQLITE_BUSY_SNAPSHOT when my read transaction will write later?", "isolation",
     "BEGIN IMMEDIATE"),
    ("How do I copy the entire database in a single backup step call?", "backup",
     "parameter of -1|copies the entire source database in one call"),
    ("Which full-text search tokenizer matches corrected when I search for correction?", "fts5", "porter"),
    ("Do readers and writers block each other in write-ahead log mode?", "wal", "readers do not block writers"),
)

#: Questions the wiki cannot answer, sharing words with it: the right outcome is ``no-evidence``.
UNANSWERABLE: tuple[str, ...] = (
    "What TCP port does the SQLite database server listen on by default?",
    "How do I set up master-slave replication between two SQLite databases?",
    "How much does an SQLite support license cost per year?",
    "How do I grant SELECT privileges on a table to another database user?",
    "Which Python version do the SQLite JSON functions require?",
)


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _holds(text: str, phrases: str) -> bool:
    folded = _fold(text)
    return any(_fold(phrase) in folded for phrase in phrases.split("|"))


def _queries(directory: Path, brief: dict[str, Any] | None) -> list[str]:
    """The task's queries: the brief's, else the ``queries`` checkpoint in the task's memory store."""
    if brief is not None:
        return [item["text"] for item in brief.get("queries", [])]
    store = directory / "memory.sqlite"
    if not store.is_file():
        return []
    with sqlite3.connect(store) as connection:
        rows = connection.execute("SELECT content FROM memory_records WHERE key LIKE '%:queries'").fetchall()
    for (content,) in rows:
        return [item["text"] for item in json.loads(content)["data"]["queries"]]
    return []


def _pages_read(directory: Path) -> list[tuple[str, str]]:
    """(wiki title, extracted text) of each page the task read (its snapshots)."""
    pages = []
    for snapshot in sorted((directory / "snapshots").glob("*/")):
        raw = (snapshot / "raw").read_bytes().decode("utf-8", errors="replace")
        match = re.search(r"<title>([^<]*)</title>", raw)
        title = re.sub(r"\s+[-\u2013\u2014]\s+Test Wiki$", "", match.group(1).strip()) if match else snapshot.name
        pages.append((html.unescape(title), (snapshot / "extracted.txt").read_text(encoding="utf-8")))
    return pages


def _replay_search(api_url: str, origin: str, ca_file: Path, queries: list[str]) -> dict[str, list[str]]:
    """What the wiki's search gives each query (the same client code the task uses), titles only."""
    from ditto.worker.interaction import WebOptions, web_search

    options = WebOptions(allowed_origins=[origin], wiki_url=api_url, ca_file=str(ca_file))

    async def titles(query: str) -> list[str]:
        try:
            found = await web_search(query[:400], engine="wikipedia", limit=5, options=options)
        except Exception as error:  # a diagnostic: show what went wrong
            return [f"<{type(error).__name__}: {error}>"]
        return [candidate.title for candidate in found.candidates]

    return {query: asyncio.run(titles(query)) for query in queries}


#: The source tree the tasks run from (``--src``).
SRC = ROOT / "src"


def _ask(question: str, api_url: str, ca_file: Path, tasks: Path) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ditto", "research", "web-search", "--wiki-url", api_url, "--ca-file", str(ca_file),
         "--question", question, "--json", "--base-dir", str(tasks)], capture_output=True, text=True, cwd=ROOT,
        timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{SRC}:{ROOT}"})
    seconds = time.monotonic() - started
    try:
        outcome = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"status": f"crash(rc={done.returncode})", "seconds": seconds, "stderr": done.stderr, "quotes": [],
                "uris": [], "queries": [], "read": [], "directory": None}
    result = outcome["result"]
    directory = Path(outcome["directory"])
    brief = None
    if result.get("brief") and Path(result["brief"]).is_file():
        brief = json.loads(Path(result["brief"]).read_text(encoding="utf-8"))
    evidence = brief["evidence"] if brief else []
    return {"status": result["status"], "seconds": seconds, "stderr": done.stderr, "directory": directory,
            "quotes": [item["quote"] for item in evidence], "uris": [item["uri"] for item in evidence],
            "queries": _queries(directory, brief), "read": _pages_read(directory),
            "failed": result.get("failedSources") or [], "summary": result.get("summary", "")}


def _print_detail(answer: dict[str, Any], searched: dict[str, list[str]]) -> None:
    for query, titles in searched.items():
        print(f"       search {query!r} -> {titles}")
    print(f"       read: {[title for title, _ in answer['read']]}")
    if answer["uris"]:
        print(f"       evidence URIs: {sorted(set(answer['uris']))}")
    for quote in answer["quotes"]:
        print(f"       quote: {_fold(quote)[:150]!r}")
    if answer.get("failed"):
        print(f"       failed sources: {answer['failed']}")


def run(show: bool) -> dict[str, Any]:
    from tests.support.loopback_tls import make_test_ca
    from tests.support.mediawiki import start_mediawiki
    from tests.support.sqlite_docs import page_text, page_title, sqlite_docs_dir

    docs = sqlite_docs_dir()
    titles = {stem: page_title(docs / f"{stem}.html") for stem in PAGES}
    texts = {stem: page_text(docs / f"{stem}.html") for stem in PAGES}
    for question, stem, phrases in QUESTIONS:
        for phrase in phrases.split("|"):
            if _fold(phrase) not in _fold(texts[stem]):
                raise SystemExit(f"the answer {phrase!r} is not in {stem}.html ({question})")
    results: dict[str, Any] = {"questions": len(QUESTIONS), "hits": 0, "no-evidence": 0, "rejected": 0, "other": 0,
                               "right_page": 0, "phrase_read": 0, "bm25": 0, "unanswerable": len(UNANSWERABLE),
                               "u_no_evidence": 0, "u_completed": 0, "u_other": 0, "seconds": [], "stderr": [],
                               "setup_s": 0.0}
    with tempfile.TemporaryDirectory(prefix="ditto-bench-wiki-") as folder:
        base = Path(folder)
        (base / "ca").mkdir()
        ca = make_test_ca(base / "ca")
        started = time.monotonic()
        with start_mediawiki(base / "wiki", ca, {titles[stem]: texts[stem] for stem in PAGES}) as wiki:
            results["setup_s"] = time.monotonic() - started
            for question, stem, phrases in QUESTIONS:
                answer = _ask(question, wiki.api_url, ca.ca_file, base / "tasks")
                results["seconds"].append(answer["seconds"])
                status = answer["status"]
                key = status if status in ("no-evidence", "rejected") else "other" if status != "completed" else None
                if key:
                    results[key] += 1
                hit = _holds(" ".join(answer["quotes"]), phrases)
                results["hits"] += hit
                read = dict(answer["read"])
                right = titles[stem] in read
                results["right_page"] += right
                in_read = any(_holds(text, phrases) for text in read.values())
                results["phrase_read"] += in_read
                if right:
                    results["bm25"] += _holds(_bm25_top1(read[titles[stem]], question), phrases)
                if answer["stderr"].strip():
                    results["stderr"].append((question, answer["stderr"]))
                if show:
                    print(f"{'HIT ' if hit else 'miss'} {status:<11} {stem:<15} {question}")
                    if not hit:
                        print(f"       expected: {titles[stem]!r} / {phrases!r}; right page read: {right}; "
                              f"phrase in a page read: {in_read}")
                        _print_detail(answer, _replay_search(wiki.api_url, wiki.origin, ca.ca_file,
                                                             answer["queries"]))
            for question in UNANSWERABLE:
                answer = _ask(question, wiki.api_url, ca.ca_file, base / "tasks")
                results["seconds"].append(answer["seconds"])
                status = answer["status"]
                good = status == "no-evidence"
                results["u_no_evidence"] += good
                results["u_completed"] += status == "completed"
                results["u_other"] += status not in ("no-evidence", "completed")
                if answer["stderr"].strip():
                    results["stderr"].append((question, answer["stderr"]))
                if show:
                    print(f"{'ok  ' if good else 'miss'} {status:<11} {'(unanswerable)':<15} {question}")
                    if not good:
                        _print_detail(answer, _replay_search(wiki.api_url, wiki.origin, ca.ca_file,
                                                             answer["queries"]))
    return results


def main() -> None:
    global SRC
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="print each question's outcome")
    parser.add_argument("--src", type=Path, default=SRC, help="the source tree the tasks run from")
    args = parser.parse_args()
    SRC = args.src.resolve()
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    results = run(args.show)
    count, unanswerable = results["questions"], results["unanswerable"]
    print(f"Real SQLite documentation ({len(PAGES)} pages) in a stock MediaWiki through `web-search` "
          f"(built-in model, HTTPS on loopback; wiki set up in {results['setup_s']:.1f} s)")
    print("| questions | answer quoted | no-evidence | rejected | other | right page read | answer in a page read "
          "| median s per task |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| answerable | {results['hits']}/{count} ({results['hits'] / count:.0%}) | {results['no-evidence']} | "
          f"{results['rejected']} | {results['other']} | {results['right_page']}/{count} | "
          f"{results['phrase_read']}/{count} | {statistics.median(results['seconds']):.2f} |")
    print(f"| unanswerable: no-evidence | {results['u_no_evidence']}/{unanswerable} (completed: "
          f"{results['u_completed']}, other: {results['u_other']}) | | | | | | |")
    print(f"| BM25 top-1 paragraph of the right page as read | {results['bm25']}/{results['right_page']} | | | | | | |")
    if results["stderr"]:
        print(f"\n{len(results['stderr'])} task(s) wrote to stderr; first lines:")
        for question, text in results["stderr"][:5]:
            print(f"  {question}: {text.strip().splitlines()[:3]}")


if __name__ == "__main__":
    main()
