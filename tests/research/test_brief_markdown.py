"""``brief.md`` for people (issue 17) and its escaping of untrusted strings (issue 16 item 4; WF-15).

The property: whatever strings the brief's fields hold (quotes from snapshots, the model's queries and answer,
the request's question, URIs, failure messages, coverage notes), the rendered Markdown parses (markdown-it,
CommonMark and the GFM-like preset) into exactly the fixed structure: the same headings, one quote block per
cited evidence item, no link, image, raw HTML, code, table, rule or emphasis the renderer did not write.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ditto.workflows.research.brief import brief_markdown, location
from ditto.workflows.research.markdown import inline, quote_block
from ditto.workflows.research.types import Brief
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

KINDS = {"document": "Document", "knowledge-internal": "Internal knowledge",
         "knowledge-external": "External knowledge base", "web": "Web page"}
#: GFM's linkify (a bare URL shown as a link to itself) is off: it shows text as itself, only clickable.
PARSERS = (MarkdownIt("commonmark"), MarkdownIt("gfm-like").disable("linkify"))
FORBIDDEN = {"link_open", "image", "html_block", "html_inline", "code_inline", "code_block", "fence", "hr",
             "table_open", "s_open", "em_open", "ordered_list_open", "heading_open_extra"}

#: The attacks of issue 16 #4 and their relatives: each must stay inside its own field.
ATTACKS = [
    "The backup runs daily.\r### 9. e9: Document\r\rFrom /etc/passwd:1-1\r\r> fake quote\r",
    "backup\n## Evidence\n### 2. e2: Web page\n> injected quote\n- Found by the query: x",
    "line one\u2028### heading after a line separator\u2029> and a paragraph separator",
    "next line\x85# after NEL\x0b\x0c\x1b[31mred",
    "a paragraph\n===\nthat became a heading", "a paragraph\n---", "a paragraph\n-",
    "    indented code\n\tand a tab", "```\nfenced\n```", "~~~\nfenced", "<script>alert(1)</script>",
    "<div>\nblock html\n</div>", "[a link](javascript:alert(1)) ![an image](x.png) <https://evil.example>",
    "[ref]: https://evil.example", "1. ordered\n2) item", "- list\n+ item\n* item", "| a | b |\n|---|---|\n| 1 | 2 |",
    "**bold** _em_ ~~strike~~ `code`", "&lt;b&gt; &amp; &#35; heading", "trailing backslash\\\nnext",
    "> nested\n>> deeper", "#no space heading\n#\n######", "\u202eevil bidi\u202c\ufeffbom\u200bzero width",
    "\x00nul", "", " ", "\n", "\r\n", "line\n\n\nafter blank lines\n",
]


def _texts() -> st.SearchStrategy[str]:
    pieces = st.one_of(st.text(max_size=12), st.sampled_from(ATTACKS),
                       st.sampled_from(list("\r\n\t#>-*_[]()<>!|`~=+:.&\\ 1\u2028\u2029\x85")))
    return st.lists(pieces, max_size=6).map("".join)


def _brief(texts: list[str], shape: tuple[int, int, int, int, str]) -> Brief:
    """A brief whose every free-text field is taken (cyclically) from ``texts``."""
    evidence_count, query_count, failed_count, sentence_count, kind = shape
    pool = texts or [""]
    counter = iter(range(10_000))

    def text() -> str:
        return pool[next(counter) % len(pool)]

    types = list(KINDS)
    evidence = [{"id": f"e{n}", "sourceType": types[n % 4], "uri": text(), "snapshotSha256": "ab" * 32,
                 "quote": text(), "start": 0, "end": 1, "lineStart": 1, "lineEnd": 1, "query": text(),
                 "foundBy": [text()], "locator": {"ref": text()}} for n in range(1, evidence_count + 1)]
    ids = [item["id"] for item in evidence]
    data: dict[str, Any] = {
        "status": "partial" if evidence and failed_count else "completed" if evidence else "no-evidence",
        "requestId": text(), "entry": "multi-source", "question": text(), "tenant": text(),
        "sources": ["documents", "knowledge", "web"], "knowledge": "both",
        "model": {"provider": text()[:256] or "p", "model": text()[:256] or None},
        "queries": [{"text": text(), "provenance": "model", "vocabularyEntry": text()} for _ in range(query_count)],
        "evidence": evidence, "citations": ids,
        "failedSources": [{"source": text(), "code": text(), "message": text()} for _ in range(failed_count)],
        "coverage": [{"source": source, "status": "evidence", "hits": 1, "evidence": 1, "notes": [text(), text()],
                      "searched": [text()]} for source in types],
        "createdAt": text(),
        "answer": {"kind": kind, "sentences": [{"text": text(), "evidence": ids[:1] or ["e1"]}
                                               for _ in range(sentence_count)]} if sentence_count else None,
    }
    return Brief.model_validate(data)


def _headings(tokens: list[Token]) -> list[tuple[str, str]]:
    return [(token.tag, tokens[index + 1].content) for index, token in enumerate(tokens)
            if token.type == "heading_open"]


def _expected_headings(brief: Brief) -> list[tuple[str, str]]:
    by_id = {item.id: item for item in brief.evidence}
    evidence = [("h3", f"{n}. {citation}: {KINDS[by_id[citation].source_type]}")
                for n, citation in enumerate(brief.citations, start=1)]
    return [("h1", "Research brief"), ("h2", "Answer"), ("h2", "Status"), ("h2", "Evidence"), *evidence,
            ("h2", "Record"), ("h3", "Request"), ("h3", "Snapshots"), ("h3", "Queries"), ("h3", "Coverage"),
            ("h3", "Failed sources")]


def _all_types(tokens: list[Token]) -> Counter[str]:
    types: Counter[str] = Counter()
    for token in tokens:
        types[token.type] += 1
        for child in token.children or ():
            types[child.type] += 1
    return types


def assert_fixed_structure(brief: Brief) -> None:
    markdown = brief_markdown(brief)
    for parser in PARSERS:
        tokens = parser.parse(markdown)
        assert _headings(tokens) == _expected_headings(brief)
        types = _all_types(tokens)
        assert types["blockquote_open"] == len(brief.citations)
        assert all(token.level == 0 for token in tokens if token.type == "blockquote_open"), "a nested quote"
        assert types["strong_open"] == 1  # **Question:**
        assert not FORBIDDEN & set(types), {name: types[name] for name in FORBIDDEN & set(types)}
        sentences = len(brief.answer.sentences) if brief.answer else 0
        items = (sentences + 6 + len(brief.evidence) + len(brief.queries) + len(brief.coverage)
                 + len(brief.failed_sources))
        assert types["list_item_open"] == items
        assert types["heading_open"] == len(_expected_headings(brief))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_texts(), min_size=1, max_size=8),
       shape=st.tuples(st.integers(0, 3), st.integers(1, 2), st.integers(0, 2), st.integers(0, 2),
                       st.sampled_from(["extractive", "model"])))
@example(texts=[ATTACKS[0]], shape=(2, 1, 0, 1, "extractive"))
@example(texts=[ATTACKS[1]], shape=(1, 2, 1, 1, "model"))
@example(texts=ATTACKS, shape=(3, 2, 2, 2, "model"))
@example(texts=["a\r### 2. e2: Document\r> forged"], shape=(1, 1, 0, 0, "model"))
@example(texts=["q\n\n## Record\n\n### Request\n"], shape=(0, 1, 1, 0, "model"))
def test_any_strings_keep_the_fixed_structure(texts: list[str], shape: tuple[int, int, int, int, str]) -> None:
    """WF-15, issue 16 #4 (property): for any strings in the brief's fields (including \\r, newlines in model
    queries, U+2028/2029, U+0085, HTML, links, list and heading syntax) brief.md parses into exactly the fixed
    headings, one top-level quote block per citation, and no link, HTML, code, table or emphasis of its own."""
    assert_fixed_structure(_brief(texts, shape))


@given(text=_texts())
@example(text="one\rtwo")
@example(text="===")
@example(text="  1. x")
def test_a_quote_block_is_one_block_of_visible_text(text: str) -> None:
    """Issue 16 #4: a quote becomes one quote block whose lines all start with '>', and nothing invisible or
    line-breaking (\\r, U+2028, U+2029, U+0085, other controls) reaches the Markdown."""
    lines = quote_block(text)
    assert len(lines) == text.count("\n") + 1 and all(line.startswith(">") for line in lines)
    rendered = "\n".join(lines)
    assert not {"\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x00"} & set(rendered)
    tokens = PARSERS[0].parse(rendered + "\n")
    assert [token.type for token in tokens if token.level == 0] == ["blockquote_open", "blockquote_close"] or (
        not text.strip("\n") and tokens[0].type == "blockquote_open")
    single = inline(text)
    assert "\n" not in single and "\r" not in single


def test_escapes_are_readable() -> None:
    """Issue 16 #4: control characters are shown as visible escapes, Markdown syntax with a backslash."""
    assert inline("a\rb\u2028c\x85d\te") == "a\\rb\\u2028c\\x85d\\te"
    assert inline("# <b>*x*</b> [y](z) | ~") == "\\# \\<b\\>\\*x\\*\\</b\\> \\[y\\](z) \\| \\~"
    assert quote_block("first\n  - item\n===\n12. x\n") == [
        "> first", "> \u00a0\u00a0\\- item", "> \\===", "> 12\\. x", ">"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    task, result = asyncio.run(run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"},
                                   tmp_path_factory.mktemp("md") / "tasks", ScriptedModel()))
    assert result.status == "completed"
    return task.directory


def test_brief_md_reads_in_order_for_people(finished: Path) -> None:
    """Issue 17, WF-15: brief.md opens with the question and the answer, then the status in words, the evidence
    in citation order (file path with :lineStart-lineEnd, knowledge records by key and table row, each quote a
    quote block), and closes with snapshots (SHA-256 and snapshots/<sha256>/), queries with provenance, coverage
    and failed sources."""
    import json

    data = json.loads((finished / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    brief = Brief.model_validate(data)
    markdown = (finished / "artifacts" / "brief.md").read_text(encoding="utf-8")
    assert markdown == brief_markdown(brief)
    order = [markdown.index(marker) for marker in ("**Question:** How long", "## Answer", "## Status",
                                                    "Completed: every requested source was read", "## Evidence",
                                                    "## Record", "### Snapshots", "### Queries", "### Coverage",
                                                    "### Failed sources")]
    assert order == sorted(order)
    first = brief.evidence[0]
    path = first.uri.removeprefix("file://")
    assert f"From {inline(path)}:{first.line_start}-{first.line_end} (characters {first.start}-{first.end}):" \
        in markdown
    assert location(brief.evidence[2]) == f"internal knowledge record {brief.evidence[2].uri}, lines 1-1"
    assert location(brief.evidence[4]).startswith(f"record {brief.evidence[4].locator['ref']} of /")  # type: ignore
    positions = [markdown.index(f"### {n}. {item.id}: ") for n, item in enumerate(brief.evidence, start=1)]
    assert positions == sorted(positions)
    for item in brief.evidence:
        assert "\n".join(quote_block(item.quote)) in markdown
        assert f"SHA-256 {item.snapshot_sha256}, saved in snapshots/{item.snapshot_sha256}/" in markdown
    assert f"- {inline(brief.queries[0].text)} (chosen by the model)" in markdown
    document = next(item for item in brief.coverage if item.source == "document")
    assert f"- Document: evidence, {document.hits} hit(s), {document.evidence} excerpt(s)" in markdown
    assert "None: every requested source was read." in markdown


def test_answer_wording_says_whose_words_they_are() -> None:
    """Issue 17: an extractive answer says its sentences are copied from the evidence; a model answer says it is
    the model's wording; no answer says so; no-evidence says the sources did not answer the question."""
    extractive = brief_markdown(_brief(["Backups are kept 30 days."], (1, 1, 0, 1, "extractive")))
    assert "Each sentence is copied word for word from the evidence it cites." in extractive
    assert "- Backups are kept 30 days. \\[e1\\]" in extractive
    model = brief_markdown(_brief(["Backups last a month."], (1, 1, 0, 1, "model")))
    assert "In the model's own words" in model
    none = brief_markdown(_brief(["x"], (1, 1, 0, 0, "model")))
    assert "No answer was written" in none
    empty = brief_markdown(_brief(["x"], (0, 1, 0, 0, "model")))
    assert "The sources did not answer the question" in empty
    assert "No evidence: every requested source was read" in empty
