"""Research on real servers: web search on a stock MediaWiki and web reading of the real SQLite documentation,
both over HTTPS on loopback with a test CA, through the CLI a user runs (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.research.cli import output, research_args, run_cli, verify_args
from tests.support.loopback_tls import LoopbackCa
from tests.support.mediawiki import MediaWiki

#: (question, page, a phrase that must be in a quote), answers checked by grep in the real pages.
READ_QUESTIONS = (
    ("What happens to the WAL file during a checkpoint?", "wal.html", "checkpoint"),
    ("Which lock is needed before writing to the database file?", "lockingv3.html", "EXCLUSIVE"),
    ("How do I enable foreign key constraints?", "foreignkeys.html", "foreign_keys"),
    # The page's next section ("Maximum Number Of Columns … default setting … is 2000") is no part of the answer.
    ("What is the default maximum length of a string or BLOB?", "limits.html", "1,000,000,000"),
)


def _brief(directory: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((Path(directory) / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    return data


def test_web_search_on_a_stock_mediawiki_from_the_command_line(wiki: MediaWiki, tmp_path: Path) -> None:
    """WF-5, INT-4 (issue 17): `--wiki-url` and `--ca-file` point web search at a real MediaWiki; the page found is
    read and quoted, the brief names the wiki's page, and `ditto verify` passes."""
    done = run_cli(research_args("web-search", "--wiki-url", wiki.api_url, "--ca-file", str(wiki.ca_file),
                                 "--question", "How do I make SQLite enforce foreign key constraints?", "--json",
                                 "--base-dir", str(tmp_path), scripted=False))
    assert done.returncode == 0, done.stderr[-3000:]
    result = output(done)
    assert result["result"]["status"] == "completed", result
    data = _brief(result["directory"])
    evidence = data["evidence"]
    assert isinstance(evidence, list) and evidence
    assert all(str(item["uri"]).startswith(wiki.origin) for item in evidence)
    quotes = " ".join(str(item["quote"]) for item in evidence)
    assert "foreign" in quotes.lower()
    verify = run_cli(verify_args(Path(result["directory"])))
    assert verify.returncode == 0, verify.stdout


def test_a_wiki_page_may_give_both_its_excerpts_from_the_passage_that_answers(wiki: MediaWiki, tmp_path: Path) -> None:
    """WF-6 (issue 17): a page gives at most two excerpts, and both may come from the passage that answers: on the
    stock MediaWiki, "the same in-memory database from two connections" is answered by the sentence after the one
    a page's single excerpt took ("… file::memory:?cache=shared …")."""
    done = run_cli(research_args("web-search", "--wiki-url", wiki.api_url, "--ca-file", str(wiki.ca_file),
                                 "--question", "Can two connections in one process use the same in-memory database?",
                                 "--json", "--base-dir", str(tmp_path), scripted=False))
    assert done.returncode == 0, done.stderr[-3000:]
    evidence = _brief(output(done)["directory"])["evidence"]
    assert isinstance(evidence, list)
    assert "cache=shared" in " ".join(str(item["quote"]) for item in evidence)
    pages = [str(item["uri"]).split("#", 1)[0] for item in evidence]
    assert all(pages.count(page) <= 2 for page in pages)


@pytest.mark.parametrize("question, page, phrase", READ_QUESTIONS)
def test_web_read_of_real_sqlite_pages_is_never_rejected(docs_origin: str, real_ca: LoopbackCa, tmp_path: Path,
                                                        question: str, page: str, phrase: str) -> None:
    """WF-5, WF-6 (issue 17): the real SQLite documentation read with the built-in model gives a brief (never a
    rejection of our own model's answer), at most 2 excerpts per page, quoting the answer."""
    done = run_cli(research_args("web-read", "--url", f"{docs_origin}/{page}", "--ca-file", str(real_ca.ca_file),
                                 "--question", question, "--json", "--base-dir", str(tmp_path), scripted=False))
    assert done.returncode == 0, done.stderr[-3000:]
    result = output(done)["result"]
    assert result["status"] == "completed", result
    data = _brief(output(done)["directory"])
    evidence = data["evidence"]
    assert isinstance(evidence, list) and 1 <= len(evidence) <= 2
    assert phrase.lower() in " ".join(str(item["quote"]) for item in evidence).lower()
