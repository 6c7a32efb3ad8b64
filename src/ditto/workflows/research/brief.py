"""The brief: built from the verified evidence, written as ``brief.json`` and ``brief.md``.

``brief.json`` is deterministic for a given evidence checkpoint (only
``createdAt`` is a timestamp), so a resumed task writes the same bytes as an
uninterrupted one. Its JSON Schema ships as ``brief.schema.json`` beside this
module (:func:`brief_schema`).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from ...text.unwrap import unwrap
from .markdown import inline, quote_block
from .types import Brief, Evidence

__all__ = ["brief_json", "brief_markdown", "brief_schema", "location", "summarize"]


@cache
def _schema_text() -> str:
    return resources.files(__package__).joinpath("brief.schema.json").read_text(encoding="utf-8")


def brief_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``artifacts/brief.json``."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


def brief_json(brief: Brief) -> str:
    """The exact text of ``brief.json`` (2-space indent, UTF-8 kept, trailing newline)."""
    return json.dumps(brief.to_json_dict(), indent=2, ensure_ascii=False) + "\n"


def summarize(brief: Brief) -> str:
    """One line for people: status, citations and where they came from."""
    kinds = sorted({item.source_type for item in brief.evidence})
    text = f"{brief.status}: {len(brief.citations)} citation(s)"
    if kinds:
        text += f" from {', '.join(kinds)}"
    if brief.failed_sources:
        text += f"; unavailable: {', '.join(source.source for source in brief.failed_sources)}"
    return text


_KIND_WORDS: Final = {"document": "Document", "knowledge-internal": "Internal knowledge",
                      "knowledge-external": "External knowledge base", "web": "Web page"}
_STATUS_WORDS: Final = {
    "completed": "Completed: every requested source was read, and the evidence below was found in them.",
    "partial": "Partial: some sources could not be read (listed under Failed sources); the evidence below comes "
               "from the others.",
    "no-evidence": "No evidence: every requested source was read, and none of them held a passage that answers "
                   "the question.",
}
_PROVENANCE_WORDS: Final = {"model": "chosen by the model", "rewrite": "rewritten into a vocabulary entry",
                            "expand": "expanded into a vocabulary entry"}


def _kind_words(source_type: str) -> str:
    """A source type in words; a registered source's own type as it is (escaped)."""
    return _KIND_WORDS.get(source_type) or inline(source_type)


def _file_path(uri: str) -> str:
    """A ``file://`` URI as the path it names; anything else as it is."""
    parts = urlsplit(uri)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return unquote(parts.path)
    return uri


def _lines(item: Evidence) -> str:
    return f"{item.line_start}-{item.line_end}"


def location(item: Evidence) -> str:
    """Where a quote is, in words: a file and line range, a knowledge record, a page (plain text, unescaped)."""
    if item.source_type == "document":
        record = (item.locator or {}).get("recordId")
        if isinstance(record, str):  # a JSONL/BEIR record of an index
            return (f"record {record} of {_file_path(item.uri)} (line {(item.locator or {}).get('recordLine')}), "
                    f"lines {_lines(item)} of the record")
        if "extractedSha256" in (item.locator or {}):  # an HTML file, quoted in its main text
            return f"{_file_path(item.uri)}, lines {_lines(item)} of its extracted text"
        return f"{_file_path(item.uri)}:{_lines(item)}"
    if item.source_type == "knowledge-internal":
        return f"internal knowledge record {item.uri}, lines {_lines(item)}"
    if item.source_type == "knowledge-external":
        base, _, ref = item.uri.rpartition("#")
        if base and ref:
            return f"record {ref} of {_file_path(base)}, lines {_lines(item)}"
        return f"record {item.uri}, lines {_lines(item)}"
    return f"page {item.uri}, lines {_lines(item)} of its extracted text"


def _answer(brief: Brief) -> list[str]:
    answer = brief.answer
    if answer is None or not answer.sentences:
        if brief.status == "no-evidence":
            return ["The sources did not answer the question: nothing in them was relevant, so there is no answer "
                    "and no citation."]
        return ["No answer was written; the evidence below is what the sources say."]
    if answer.kind == "extractive":
        out = ["Each sentence is copied word for word from the evidence it cites."]
    else:
        out = ["In the model's own words: only the quotes under Evidence are checked word for word against the "
               "sources, not this wording."]
    out.append("")
    for sentence in answer.sentences:
        cited = ", ".join(inline(item) for item in sentence.evidence)
        # shown on one line as it reads (a copied sentence may run over hard line breaks and words hyphenated
        # at a line end; the quotes below keep them)
        out.append(f"- {inline(unwrap(sentence.text))} \\[{cited}\\]")
    return out


def brief_markdown(brief: Brief) -> str:
    """``brief.md``: the brief for people, in reading order, with every untrusted string escaped.

    Question and answer first, then the status in words, the evidence in the
    order the brief cites it (each quote a quote block), and last the record:
    request, snapshots, queries, coverage and failed sources. ``ditto verify``
    requires ``brief.md`` to be exactly this rendering of ``brief.json``.
    """
    out = ["# Research brief", "", f"**Question:** {inline(brief.question)}", "", "## Answer", ""]
    out += _answer(brief)
    out += ["", "## Status", "", _STATUS_WORDS[brief.status], "", "## Evidence", ""]
    by_id = {item.id: item for item in brief.evidence}
    if not brief.citations:
        out += ["No evidence was found in the requested sources.", ""]
    for number, citation in enumerate(brief.citations, start=1):
        item = by_id.get(citation)
        if item is None:
            out += [f"### {number}. {inline(citation)}", "", "This citation names no evidence item.", ""]
            continue
        out += [f"### {number}. {inline(item.id)}: {_kind_words(item.source_type)}", "",
                f"From {inline(location(item))} (characters {item.start}-{item.end}):", ""]
        out += quote_block(item.quote)
        out += ["", f"Found by the query: {inline(item.query)}", ""]
    out += ["## Record", "", "### Request", "",
            f"- Request id: {inline(brief.request_id)}",
            f"- Entry: {inline(brief.entry)}",
            f"- Tenant: {inline(brief.tenant)}",
            f"- Sources: {inline(', '.join(brief.sources))}"
            + (f" (knowledge: {inline(brief.knowledge)})" if brief.knowledge else ""),
            f"- Model: {inline(brief.model.provider)}" + (f" ({inline(brief.model.model)})" if brief.model.model
                                                         else ""),
            f"- Created: {inline(brief.created_at)}", "", "### Snapshots", ""]
    if not brief.evidence:
        out.append("No snapshot is cited.")
    for item in brief.evidence:
        out.append(f"- {inline(item.id)}: SHA-256 {inline(item.snapshot_sha256)}, saved in "
                   f"snapshots/{inline(item.snapshot_sha256)}/")
    out += ["", "### Queries", ""]
    for query in brief.queries:
        words = _PROVENANCE_WORDS.get(query.provenance, inline(query.provenance))
        entry = f", vocabulary entry: {inline(query.vocabulary_entry)}" if query.vocabulary_entry is not None else ""
        out.append(f"- {inline(query.text)} ({words}{entry})")
    if not brief.queries:
        out.append("No query was run.")
    out += ["", "### Coverage", ""]
    for coverage in brief.coverage:
        line = (f"- {_kind_words(coverage.source)}: {inline(coverage.status)}, {coverage.hits} hit(s), "
                f"{coverage.evidence} excerpt(s)")
        if coverage.searched:
            line += f"; searched: {', '.join(inline(name) for name in coverage.searched)}"
        if coverage.notes:
            line += f"; notes: {'; '.join(inline(note) for note in coverage.notes)}"
        out.append(line)
    if not brief.coverage:
        out.append("No source was read.")
    out += ["", "### Failed sources", ""]
    for source in brief.failed_sources:
        out.append(f"- {inline(source.source)}: {inline(source.code)}, {inline(source.message)}")
    if not brief.failed_sources:
        out.append("None: every requested source was read.")
    out += ["", "Quotes are verbatim in the saved snapshots; that proves they are in the material read, not that "
            "the material is authoritative or current.", ""]
    return "\n".join(out)
