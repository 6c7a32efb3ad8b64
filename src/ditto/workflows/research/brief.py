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
from typing import Any

from .types import Brief

__all__ = ["brief_json", "brief_markdown", "brief_schema", "summarize"]


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


def _location(item: Any) -> str:
    same = item.line_start == item.line_end
    lines = f"line {item.line_start}" if same else f"lines {item.line_start}-{item.line_end}"
    return f"{item.uri}, {lines}, characters {item.start}-{item.end}"


def brief_markdown(brief: Brief) -> str:
    """``brief.md``: the same content as ``brief.json`` for people."""
    out = [f"# Research brief: {brief.question}", "",
           f"- Status: **{brief.status}**",
           f"- Request: `{brief.request_id}` ({brief.entry}, tenant `{brief.tenant}`)",
           f"- Sources: {', '.join(brief.sources)}" + (f" (knowledge: {brief.knowledge})" if brief.knowledge else ""),
           f"- Model: `{brief.model.provider}`" + (f" (`{brief.model.model}`)" if brief.model.model else ""),
           f"- Created: {brief.created_at}", "", "## Queries", ""]
    for query in brief.queries:
        entry = f", vocabulary entry \"{query.vocabulary_entry}\"" if query.vocabulary_entry else ""
        origin = query.provenance + entry
        out.append(f"- {query.text} ({origin})")
    out += ["", "## Evidence", ""]
    by_id = {item.id: item for item in brief.evidence}
    if not brief.citations:
        out.append("No evidence was found in the requested sources.")
    for citation in brief.citations:
        item = by_id[citation]
        out.append(f"### [{item.id}] {item.source_type}")
        out.append("")
        out.extend("> " + line if line else ">" for line in item.quote.split("\n"))
        out.append("")
        out.append(f"- Source: {_location(item)}")
        out.append(f"- Snapshot: `snapshots/{item.snapshot_sha256}`")
        out.append(f"- Found by query: {item.query}")
        out.append("")
    if brief.failed_sources:
        out += ["## Unavailable sources", ""]
        out.extend(f"- {source.source}: {source.code} ({source.message})" for source in brief.failed_sources)
        out.append("")
    out += ["## Coverage", ""]
    out.extend(f"- {item.source}: {item.status} ({item.hits} hit(s), {item.evidence} excerpt(s))"
               for item in brief.coverage)
    out += ["", "Quotes are verbatim in the saved snapshots; that proves they are in the material read, "
            "not that the material is authoritative or current.", ""]
    return "\n".join(out)
