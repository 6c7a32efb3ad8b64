"""Web search and reading against real servers: Debian's MediaWiki and the real SQLite documentation.

Both are served over HTTPS on 127.0.0.1 with a test CA that clients trust through
``ca_file`` only. The wiki is a stock install (SQLite backend, PHP's built-in server)
holding thirteen SQLite documentation pages; the documentation site is the HTML the
``sqlite3-doc`` package ships. Missing packages fail the fixtures with the command
that installs them (``scripts/services``).
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ditto.worker.interaction import InteractionError, WebClient, WebOptions, web_read, web_search
from ditto.worker.interaction.config import DEFAULT_EXTRACT_MEMORY_BYTES
from ditto.worker.interaction.extract import extract_main_text
from ditto.worker.interaction.extractor import shared_extractor
from tests.support.loopback_tls import LoopbackCa, serve_directory
from tests.support.mediawiki import MediaWiki
from tests.support.sqlite_docs import sqlite_docs_dir

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
MIB = 1024 * 1024

#: Realistic questions, the page that answers them, and words of the answer found in that page's text.
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("What happens to the WAL file during a checkpoint?", "Write-Ahead Logging", "checkpoint"),
    ("Which lock does a process need before it can write to the database file?",
     "File Locking And Concurrency In SQLite Version 3", "EXCLUSIVE"),
    ("How do I make SQLite enforce foreign key constraints?", "SQLite Foreign Key Support", "PRAGMA foreign_keys"),
    ("What does the AUTOINCREMENT keyword change about rowid selection?", "SQLite Autoincrement", "ROWID"),
    ("Does VACUUM rebuild the database file into a minimal amount of disk space?", "VACUUM", "minimal amount"),
    ("Which type affinity does a column declared VARCHAR get?", "Datatypes In SQLite", "TEXT affinity"),
    ("Where does SQLite put temporary files?", "Temporary Files Used By SQLite", "temporary"),
    ("How does the online backup API copy a live database?", "SQLite Backup API", "sqlite3_backup_step"),
    ("How does FTS5 rank full-text query results with bm25?", "SQLite FTS5 Extension", "bm25"),
    ("What is the maximum length of a string or BLOB?", "Implementation Limits For SQLite", "SQLITE_MAX_LENGTH"),
    ("How does a rollback journal make a transaction atomic?", "Atomic Commit In SQLite", "rollback journal"),
)


@pytest.fixture(scope="session")
def big_page(real_ca: LoopbackCa, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real 4 MiB page (exactly the response cap): SQLite's requirements page, its text repeated."""
    directory = tmp_path_factory.mktemp("big-page")
    source = (sqlite_docs_dir() / "requirements.html").read_bytes()
    head, _, rest = source.partition(b"<body>")
    body, _, _ = rest.partition(b"</body>")
    page = head + b"<body>"
    tail = b"</body></html>"
    while len(page) + len(body) + len(tail) <= 4 * MIB:
        page += body
    page += body[: 4 * MIB - len(page) - len(tail)] + tail
    assert len(page) == 4 * MIB
    (directory / "big.html").write_bytes(page)
    (directory / "small.html").write_bytes((sqlite_docs_dir() / "wal.html").read_bytes())
    with serve_directory(directory, real_ca) as origin:
        yield f"{origin}/big.html"


def wiki_options(wiki: MediaWiki, **changes: object) -> WebOptions:
    values: dict[str, object] = {"wiki_url": wiki.api_url, "ca_file": str(wiki.ca_file),
                                 "allowed_origins": [wiki.origin], **changes}
    return WebOptions(**values)  # type: ignore[arg-type]


def title_only_hits(wiki: MediaWiki, query: str) -> list[str]:
    """What the stock wiki answers without ``srwhat`` (a title search), asked directly."""
    response = httpx.get(wiki.api_url, verify=ssl.create_default_context(cafile=str(wiki.ca_file)), timeout=30, params={
        "action": "query", "list": "search", "srsearch": query, "format": "json", "formatversion": "2"})
    return [hit["title"] for hit in response.json()["query"]["search"]]


# -- MediaWiki full-text search (issue 17 item 3, INT-4) -------------------------------------------
async def test_full_text_questions_find_their_page_on_a_stock_mediawiki(wiki: MediaWiki) -> None:
    """INT-4, issue 17 item 3: on a stock MediaWiki (SQLite backend) each realistic question finds the page
    that answers it among the five candidates, where the wiki's default (title) search finds nothing;
    the answer's words are in the page the candidate names."""
    firsts = 0
    async with WebClient(wiki_options(wiki)) as client:
        for question, title, answer in QUESTIONS:
            assert title_only_hits(wiki, question) == [], question
            result = await client.search({"query": question})
            titles = [candidate.title for candidate in result.candidates]
            assert title in titles, (question, titles)
            firsts += titles[0] == title
            assert answer.lower() in wiki.pages[title].lower()
            candidate = result.candidates[titles.index(title)]
            assert candidate.url.startswith(f"{wiki.origin}/index.php/")
    assert len(QUESTIONS) >= 8 and firsts >= len(QUESTIONS) * 2 // 3, firsts


def engine_order_hits(wiki: MediaWiki, query: str) -> list[str]:
    """What the stock wiki's full-text search answers for ``query``, in its own order."""
    response = httpx.get(wiki.api_url, verify=ssl.create_default_context(cafile=str(wiki.ca_file)), timeout=30, params={
        "action": "query", "list": "search", "srsearch": query, "srwhat": "text", "srlimit": "50",
        "format": "json", "formatversion": "2"})
    return [hit["title"] for hit in response.json()["query"]["search"]]


async def test_hits_of_the_sqlite_backend_are_ranked_not_alphabetical(wiki: MediaWiki) -> None:
    """INT-4, issue 17 item 3: the stock wiki (SQLite backend) answers a query holding every word in title
    order; the first candidate search gives is the page about the question, not the alphabetically first."""
    query = "Can two connections in one process use the same memory database?"
    answered = engine_order_hits(wiki, query)
    assert answered == sorted(answered) and answered[0] != "In-Memory Databases", answered
    async with WebClient(wiki_options(wiki)) as client:
        result = await client.search({"query": query})
    assert result.candidates[0].title == "In-Memory Databases", [c.title for c in result.candidates]


async def test_a_found_wiki_page_is_read_over_https_with_the_ca_file(wiki: MediaWiki) -> None:
    """INT-4/INT-5, issue 17 item 3: the candidate's link (from the wiki's own site info) is readable with the
    same ca_file, and the page text holds the answer."""
    options = wiki_options(wiki)
    found = await web_search("How does the online backup API copy a live database?", options=options)
    page = await web_read(found.candidates[0].url, options=options)
    assert page.status == 200 and "sqlite3_backup_step" in page.text


async def test_wiki_errors_name_the_configured_wiki(wiki: MediaWiki, tmp_path: Path) -> None:
    """INT-6, issue 17 item 3: failures name the configured wiki, not "Wikipedia"; without the CA the TLS
    check fails (the CA file is what makes the loopback wiki trusted)."""
    with pytest.raises(InteractionError) as caught:
        await web_search("checkpoint", options=WebOptions(wiki_url=wiki.api_url, timeout_s=10))
    assert caught.value.code == "INTERACTION_TOOL_FAILED"
    assert "127.0.0.1" in caught.value.message and "Wikipedia" not in caught.value.message
    with pytest.raises(InteractionError) as refused:
        await web_search("checkpoint", options=wiki_options(wiki, wiki_url=wiki.api_url.replace("api.php",
                                                                                              "nowhere.php")))
    assert "Wikipedia" not in refused.value.message


def test_wiki_url_and_ca_file_come_from_the_environment(wiki: MediaWiki) -> None:
    """Issue 17 item 3: DITTO_WORKER_INTERACTION_WIKI_URL and DITTO_WORKER_INTERACTION_CA_FILE set the options."""
    from ditto.worker.interaction import web_options_from_env

    options = web_options_from_env(None, {"DITTO_WORKER_INTERACTION_WIKI_URL": wiki.api_url,
                                          "DITTO_WORKER_INTERACTION_CA_FILE": str(wiki.ca_file)})
    assert options.wiki_url == wiki.api_url and options.ca_file == str(wiki.ca_file)
    assert options.wiki_name == "the wiki at 127.0.0.1"
    assert WebOptions().wiki_name == "Wikipedia"


# -- reading the real SQLite documentation (issue 16 items 1-2, INT-5) -----------------------------
async def test_real_sqlite_pages_are_read_over_https_with_the_ca_file(docs_origin: str, real_ca: LoopbackCa) -> None:
    """INT-5: the real SQLite pages read over HTTPS, trusted through ca_file alone; without it TLS fails."""
    options = WebOptions(allowed_origins=[docs_origin], ca_file=str(real_ca.ca_file))
    async with WebClient(options) as client:
        wal = await client.read({"url": f"{docs_origin}/wal.html"})
        locking = await client.read({"url": f"{docs_origin}/lockingv3.html"})
    assert "checkpoint" in wal.text and "\n".join(wal.lines) == wal.text
    assert wal.text == extract_main_text(wal.raw)  # exactly trafilatura's text, nothing cut
    assert "EXCLUSIVE" in locking.text and locking.status == 200
    with pytest.raises(InteractionError) as caught:
        await web_read(f"{docs_origin}/wal.html", options=WebOptions(allowed_origins=[docs_origin]))
    assert caught.value.code == "INTERACTION_TOOL_FAILED" and "certificate" in caught.value.message


def test_soak_two_reads_at_a_time_never_crash_and_memory_stays_flat(docs_origin: str, real_ca: LoopbackCa) -> None:
    """INT-5, issue 16 item 1: 200 real SQLite pages read two at a time in a separate process: every read
    succeeds, the one extraction child is never replaced (no crash), trafilatura never runs in the reading
    process (its lxml parser is shared by threads), and resident memory after the warm-up stays flat."""
    docs = sqlite_docs_dir()
    pages = sorted(path.name for path in docs.glob("*.html") if path.stat().st_size < 200_000)
    assert len(pages) > 100
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(HERE / "soak_extract.py"), docs_origin, str(real_ca.ca_file), "200",
                           *pages], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["done"] == 200 and report["error_count"] == 0, report
    assert report["children"] == 1 and report["trafilatura_loaded_here"] is False, report
    before, after = report["rss_before_kib"], report["rss_after_kib"]
    assert after["self"] - before["self"] < 40 * 1024, report
    assert after["child"] - before["child"] < 120 * 1024, report
    assert time.monotonic() - started < 90


# -- extraction inside the deadline and a budget (issue 16 item 2) ---------------------------------
async def test_a_real_4_mib_page_is_extracted_within_the_deadline(big_page: str, real_ca: LoopbackCa) -> None:
    """INT-5, issue 16 item 2: a 4 MiB page (the cap) is read inside the default 20 s deadline and its whole text
    (over a million characters: all the extraction gives) is kept: the default text bound only cuts what no real
    page produces."""
    origin = big_page.rsplit("/", 1)[0]
    started = time.monotonic()
    page = await web_read(big_page, options=WebOptions(allowed_origins=[origin], ca_file=str(real_ca.ca_file)))
    assert time.monotonic() - started < 20
    assert len(page.raw) == 4 * MIB and len(page.text) > 1_000_000
    assert page.text == extract_main_text(page.raw)
    assert "\n".join(page.lines) == page.text


async def test_extraction_counts_against_the_deadline(big_page: str, real_ca: LoopbackCa) -> None:
    """INT-5/INT-6, issue 16 item 2: the deadline covers extraction: a 4 MiB page with a 0.5 s deadline fails
    with INTERACTION_TIMEOUT soon after it (the child is killed), and the next read works; max_text_chars
    bounds the text (a prefix of the full text, cut at a line end). The page is fetched in well under 0.5 s and
    extracted in over a second here; a 1.5 s deadline passed only while the machine was busy (an idle one reads
    the whole page in 1.3 s)."""
    origin = big_page.rsplit("/", 1)[0]
    extractor = shared_extractor(DEFAULT_EXTRACT_MEMORY_BYTES)
    options = WebOptions(allowed_origins=[origin], ca_file=str(real_ca.ca_file), timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(InteractionError) as caught:
        await web_read(big_page, options=options)
    elapsed = time.monotonic() - started
    assert caught.value.code == "INTERACTION_TIMEOUT" and elapsed < 3.0, elapsed
    deadline = time.monotonic() + 2
    while extractor.pid is not None and time.monotonic() < deadline:  # noqa: ASYNC110 - the kill happens on the extracting thread
        await asyncio.sleep(0.02)
    assert extractor.pid is None  # killed, not left parsing
    again = await web_read(f"{origin}/small.html", options=WebOptions(allowed_origins=[origin],
                                                                      ca_file=str(real_ca.ca_file)))
    assert "checkpoint" in again.text and extractor.pid is not None  # a fresh child
    bounded = await web_read(f"{origin}/small.html", options=WebOptions(
        allowed_origins=[origin], ca_file=str(real_ca.ca_file), max_text_chars=1000))
    assert 0 < len(bounded.text) <= 1000 and again.text.startswith(bounded.text)


async def test_extraction_memory_budget_is_enforced(big_page: str, real_ca: LoopbackCa) -> None:
    """INT-6, issue 16 item 2: a page that needs more memory than extract_memory_bytes fails with
    INTERACTION_RESPONSE_TOO_LARGE (the child hits its address-space limit), never grows the caller."""
    origin = big_page.rsplit("/", 1)[0]
    options = WebOptions(allowed_origins=[origin], ca_file=str(real_ca.ca_file), extract_memory_bytes=160 * MIB)
    with pytest.raises(InteractionError) as caught:
        await web_read(big_page, options=options)
    assert caught.value.code == "INTERACTION_RESPONSE_TOO_LARGE" and "160 MiB" in caught.value.message
