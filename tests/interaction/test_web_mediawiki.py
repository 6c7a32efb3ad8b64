"""The MediaWiki request, ranking and link rules, and the extraction child's failure handling.

Pure functions get hypothesis invariants with the attacks as explicit examples; the
extractor tests use the real child process (killed with a real signal).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ditto.worker.interaction import InteractionError
from ditto.worker.interaction.extract_worker import trim_text
from ditto.worker.interaction.extractor import Extractor
from ditto.worker.interaction.mediawiki import (
    MAX_TERMS,
    WikiHit,
    content_terms,
    page_url,
    rank_relaxed,
    rank_unranked,
    ranks_by_relevance,
    search_params,
    term_query,
)

WIKI_GENERAL = {"server": "https://wiki.example", "articlepath": "/index.php/$1"}
WIKIPEDIA_GENERAL = {"server": "//en.wikipedia.org", "articlepath": "/wiki/$1"}


def test_search_asks_for_full_text_in_articles() -> None:
    """INT-4, issue 17 item 3: srwhat=text (a stock MediaWiki otherwise searches titles), main namespace."""
    params = search_params("checkpoint", 5, site_info=True)
    assert params["srwhat"] == "text" and params["srnamespace"] == "0" and params["srlimit"] == "5"
    assert params["meta"] == "siteinfo" and "general" in params["siprop"]
    assert "meta" not in search_params("checkpoint", 5, site_info=False)


@given(title=st.text(min_size=1, max_size=60))
@example(title="//evil.example/steal")
@example(title="../../api.php?action=delete")
@example(title="@evil.example")
@example(title="x#@evil.example")
@example(title="?title=Special:UserLogout")
@example(title="https://evil.example/")
@example(title="\\\\evil.example")
@example(title="a b/c:d")
def test_page_links_stay_on_the_wiki(title: str) -> None:
    """INT-4, issue 17 item 3: whatever a title holds, the link built for it stays on the wiki's own host."""
    for api_url, general in (("https://wiki.example/api.php", WIKI_GENERAL),
                             ("https://en.wikipedia.org/w/api.php", WIKIPEDIA_GENERAL),
                             ("https://en.wikipedia.org/w/api.php", None),
                             ("https://wiki.example/mw/api.php", None)):
        url = page_url(api_url, general, title)
        assert urlsplit(url).netloc == urlsplit(api_url).netloc, (title, url)
        assert "#" not in url and " " not in url


def test_page_links_follow_the_site_info() -> None:
    """INT-4: server + articlepath from the wiki (protocol-relative on Wikipedia), a guess without them."""
    assert page_url("https://en.wikipedia.org/w/api.php", WIKIPEDIA_GENERAL, "Write-ahead logging") == \
        "https://en.wikipedia.org/wiki/Write-ahead_logging"
    assert page_url("https://wiki.example/api.php", WIKI_GENERAL, "C++") == "https://wiki.example/index.php/C%2B%2B"
    assert page_url("https://wiki.example/mw/api.php", None, "A b") == "https://wiki.example/mw/index.php?title=A_b"


@given(query=st.text(max_size=200))
@example(query="How does a checkpoint copy pages back into the database?")
@example(query="the of and is")
@example(query="write-ahead write-ahead WRITE-AHEAD")
@example(query="預寫式日誌 如何 工作")
def test_content_terms_are_lowercase_unique_and_bounded(query: str) -> None:
    """Issue 17 item 3: at most MAX_TERMS distinct lower-case words of the query, no stop words."""
    terms = content_terms(query)
    assert len(terms) <= MAX_TERMS and len(set(terms)) == len(terms)
    assert all(term == term.lower() and term in query.lower() for term in terms)
    assert not {"the", "of", "and", "is", "how", "does"} & set(terms)
    for term in terms:
        assert term_query(term).rstrip("*") in term or term_query(term) == term


def test_light_stems_match_other_forms() -> None:
    assert term_query("checkpoints") == "checkpoint*" and term_query("copies") == "copi*"
    assert term_query("locking") == "lock*" and term_query("wal") == "wal" and term_query("class") == "class*"


@given(answers=st.lists(st.tuples(st.lists(st.sampled_from("ABCDEFG"), max_size=6, unique=True),
                                  st.integers(0, 100)), max_size=6),
       pages=st.one_of(st.none(), st.integers(1, 1000)))
def test_relaxed_ranking_is_a_permutation_and_prefers_pages_with_more_rare_words(
        answers: list[tuple[list[str], int]], pages: int | None) -> None:
    """Issue 17 item 3: each named page once; a page holding every word another holds (and more) ranks first."""
    hits = [([WikiHit(title, f"snippet {title}") for title in titles], max(count, len(titles)))
            for titles, count in answers]
    ranked = [hit.title for hit in rank_relaxed(hits, pages)]
    assert sorted(ranked) == sorted({title for titles, _ in answers for title in titles})
    words_of = {title: {index for index, (titles, _) in enumerate(answers) if title in titles} for title in ranked}
    for better in ranked:
        for worse in ranked:
            if words_of[better] > words_of[worse]:
                assert ranked.index(better) < ranked.index(worse)


def test_only_the_sqlite_backend_counts_as_unranked() -> None:
    """INT-4, issue 17 item 3: MediaWiki's SQLite search has no ORDER BY; every other backend ranks."""
    assert ranks_by_relevance(None) and ranks_by_relevance({"dbtype": "mysql"}) and ranks_by_relevance({})
    assert not ranks_by_relevance({"dbtype": "sqlite"})


_TITLES = st.sampled_from(["Alpha", "Beta Gamma", "Gamma", "Delta Log", "Write-Ahead Log"])


@given(full=st.lists(_TITLES, max_size=4, unique=True),
       answers=st.lists(st.tuples(st.lists(_TITLES, max_size=5, unique=True), st.integers(0, 100)), max_size=6),
       words=st.dictionaries(_TITLES, st.one_of(st.none(), st.integers(0, 10**6))),
       pages=st.one_of(st.none(), st.integers(1, 1000)))
def test_unranked_hits_are_ranked_once_each(full: list[str], answers: list[tuple[list[str], int]],
                                            words: dict[str, int | None], pages: int | None) -> None:
    """Issue 17 item 3: every page named (by the whole query or a word) comes back once, whatever the counts."""
    terms = ["gamma", "log", "write", "ahead", "delta", "beta"][:len(answers)]
    hits = [([WikiHit(title, "", words.get(title)) for title in titles], max(count, len(titles)))
            for titles, count in answers]
    ranked = rank_unranked([WikiHit(title, "", words.get(title)) for title in full], terms, hits, pages)
    assert sorted(hit.title for hit in ranked) == sorted({*full, *(t for titles, _ in answers for t in titles)})


def test_unranked_hits_prefer_the_title_that_names_the_words_then_the_rarer_words() -> None:
    """Issue 17 item 3: among pages holding every word (the SQLite backend lists them by title), the one whose
    title names the words comes first; a page holding only a common word comes last."""
    full = [WikiHit("Atomic Commit", "", 900), WikiHit("In-Memory Databases", "", 900)]
    answers = [([WikiHit("Atomic Commit", "", 900), WikiHit("In-Memory Databases", "", 900)], 3),
               ([WikiHit("Atomic Commit", "", 900), WikiHit("In-Memory Databases", "", 900),
                 WikiHit("Backup", "", 900)], 20)]
    ranked = [hit.title for hit in rank_unranked(full, ["memory", "databases"], answers, 20)]
    assert ranked == ["In-Memory Databases", "Atomic Commit", "Backup"]
    # Without a title match, a page holding the rarer word outranks one holding only the common one.
    answers = [([WikiHit("Zeta", "", 900)], 2), ([WikiHit("Alpha", "", 900), WikiHit("Zeta", "", 900)], 20)]
    assert [hit.title for hit in rank_unranked([], ["rare", "common"], answers, 20)] == ["Zeta", "Alpha"]


@given(text=st.text(alphabet="ab\n", max_size=50), limit=st.integers(0, 60))
def test_trimmed_text_is_a_prefix_within_the_limit(text: str, limit: int) -> None:
    """Issue 16 item 2: the extracted text bound cuts at a line end when it can, never exceeds the limit."""
    trimmed = trim_text(text, limit)
    assert len(trimmed) <= limit and text.startswith(trimmed)
    if len(text) <= limit:
        assert trimmed == text


PAGE = (b"<html><body><article><p>" + b"The extraction child reads pages one at a time. " * 20
        + b"</p></article></body></html>")


def test_a_crashed_child_is_a_tool_failure_and_the_next_call_starts_a_new_one() -> None:
    """INT-6, issue 16 item 1: the child dying mid-page (SIGSEGV, as lxml did) is INTERACTION_TOOL_FAILED for
    that read only; the caller lives and the next call gets a fresh child."""
    extractor = Extractor(memory_bytes=1 << 30)
    try:
        assert "one at a time" in extractor.extract(PAGE, timeout_s=20, max_text_chars=10_000)
        first = extractor.pid
        assert first is not None
        big = b"<html><body><table>" + b"".join(b"<tr><td>cell %d</td><td>text</td></tr>" % i
                                                 for i in range(60_000)) + b"</table></body></html>"
        killer = threading.Timer(0.3, os.kill, (first, signal.SIGSEGV))
        killer.start()
        with pytest.raises(InteractionError) as caught:
            extractor.extract(big, timeout_s=20, max_text_chars=10_000)
        killer.join()
        assert caught.value.code == "INTERACTION_TOOL_FAILED"
        assert "one at a time" in extractor.extract(PAGE, timeout_s=20, max_text_chars=10_000)
        assert extractor.pid not in (None, first)
    finally:
        extractor.close()


def test_a_cancelled_extraction_stops_the_child_promptly() -> None:
    """INT-6, issue 16 item 2: setting the cancel event ends the call with INTERACTION_CANCELLED within a tick
    and kills the child (it is not left parsing)."""
    extractor = Extractor(memory_bytes=1 << 30)
    cancel = threading.Event()
    try:
        extractor.extract(PAGE, timeout_s=20, max_text_chars=100)
        big = b"<html><body>" + b"<p>paragraph of words</p>" * 150_000 + b"</body></html>"
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(InteractionError) as caught:
            extractor.extract(big, timeout_s=20, max_text_chars=100, cancel=cancel)
        assert caught.value.code == "INTERACTION_CANCELLED" and time.monotonic() - started < 2.0
        assert extractor.pid is None
    finally:
        extractor.close()


def test_wiki_and_extraction_options_are_validated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 16/17: wiki_url is an http(s) URL, ca_file a PEM of CA certificates, the budgets positive (the
    memory budget at least 64 MiB); the older wikipedia_url still sets the wiki when wiki_url is not given;
    an explicit option wins over its environment variable."""
    from ditto.errors import InvalidArgumentError
    from ditto.worker.interaction import WebOptions, web_options_from_env

    for bad in ({"wiki_url": "ftp://wiki.example/api.php"}, {"wiki_url": "https://user@wiki.example/api.php"},
                {"max_text_chars": 0}, {"extract_memory_bytes": 1 << 20}, {"extract_memory_bytes": True},
                {"ca_file": str(tmp_path / "missing.pem")}):
        with pytest.raises(InvalidArgumentError):
            WebOptions(**bad)
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate")
    with pytest.raises(InvalidArgumentError):
        WebOptions(ca_file=str(not_pem))
    assert WebOptions(wikipedia_url="https://de.wikipedia.org").wiki_url == "https://de.wikipedia.org/w/api.php"
    assert WebOptions(wikipedia_url="https://de.wikipedia.org", wiki_url="https://w.example/api.php").wiki_url \
        == "https://w.example/api.php"
    env = {"DITTO_WORKER_INTERACTION_WIKI_URL": "https://env.example/w/api.php"}
    assert web_options_from_env(None, env).wiki_url == "https://env.example/w/api.php"
    assert web_options_from_env(None, env, wiki_url="https://mine.example/api.php").wiki_url == \
        "https://mine.example/api.php"
    assert web_options_from_env(None, {"DITTO_WORKER_INTERACTION_WIKI_URL": "  "}).wiki_url == \
        "https://en.wikipedia.org/w/api.php"
