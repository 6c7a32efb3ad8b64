"""Verification invariants (hypothesis), the shipped brief schema, cancellation, missing documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from ditto.signal import AbortController
from ditto.worker.infer import ExcerptPassage, ExcerptTask
from ditto.workflows.research import ResearchError, ResearchOptions, brief_schema
from ditto.workflows.research.verification import Passage, line_range, verify_excerpts
from tests.research.helpers import ROOT, brief, run, trace
from tests.research.scripted import ScriptedModel, choose_excerpts

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300)

def _P(id: str, source_type: str, uri: str, sha: str, text: str, start: int, end: int, query: str,
       found_by: tuple[str, ...], **extra: Any) -> Passage:
    """A passage built positionally (the tests' short form)."""
    return Passage(id=id, source_type=source_type, uri=uri, snapshot_sha256=sha, text=text, start=start, end=end,
                   query=query, found_by=found_by, **extra)



@given(prefix=st.text(max_size=200), body=TEXT, data=st.data())
def test_any_verbatim_substring_is_located_exactly(prefix: str, body: str, data: st.DataObject) -> None:
    """WF-10: a quote taken verbatim from a passage maps to offsets and lines of the snapshot text."""
    snapshot = prefix + body
    start = data.draw(st.integers(0, len(body) - 1))
    end = data.draw(st.integers(start + 1, min(len(body), start + 1000)))
    quote = body[start:end]
    assume(quote.strip())  # a blank quote is rejected on purpose
    passage = _P("doc-1", "document", "file:///x", "0" * 64, body, len(prefix), len(snapshot), "q", ("q",))
    task = ExcerptTask(question="q", passages=(ExcerptPassage(source_id="doc-1", text=body),))
    (excerpt,) = verify_excerpts({"excerpts": [{"sourceId": "doc-1", "quote": quote}]}, task, [passage])
    assert snapshot[excerpt.start:excerpt.end] == quote
    first, last = line_range(snapshot, excerpt.start, excerpt.end)
    assert first == snapshot[:excerpt.start].count("\n") + 1
    assert last - first == quote[:-1].count("\n")


@settings.get_profile("security")  # tests/conftest.py: at least 150 examples, also in CI (issue 15)
@example(quote="Backups are retained for 90 days.")           # one character changed
@example(quote="backups are retained for 30 days.")           # case folded
@example(quote="Backups are retained for 30 days. ")          # trailing space
@example(quote="Backups  are retained for 30 days.")          # doubled space
@example(quote="Backups\u00a0are retained for 30 days.")      # no-break space
@example(quote="Backups are\u200b retained for 30 days.")     # zero-width space
@example(quote="\u0412ackups are retained for 30 days.")      # Cyrillic look-alike
@example(quote="Backups are retained for \uff13\uff10 days.")  # full-width digits (NFKC-equal)
@example(quote="   ")                                         # blank
@given(quote=TEXT)
def test_a_quote_absent_from_the_passage_is_rejected(quote: str) -> None:
    """WF-10: anything not verbatim in the named passage is rejected with a code, never located elsewhere; a
    quote that differs only in whitespace is located and carries the passage's own characters (issue 15:
    the near misses a normalising matcher would accept are explicit examples)."""
    body = "Backups are retained for 30 days."
    passage = _P("doc-1", "document", "file:///x", "0" * 64, body, 0, len(body), "q", ("q",))
    task = ExcerptTask(question="q", passages=(ExcerptPassage(source_id="doc-1", text=body),))
    if quote in body and quote.strip():
        return
    try:
        (excerpt,) = verify_excerpts({"excerpts": [{"sourceId": "doc-1", "quote": quote}]}, task, [passage])
    except ResearchError as error:
        assert error.code in ("RESEARCH_QUOTE_NOT_FOUND", "RESEARCH_QUOTE_TOO_LONG")
    else:  # only a quote differing in whitespace alone is located, and the evidence is the passage's own text
        assert excerpt.quote == body[excerpt.start:excerpt.end] and excerpt.quote.split() == quote.split(), quote


def test_brief_schema_ships_with_the_package() -> None:
    """WF-15: the brief's JSON Schema is a valid draft 2020-12 schema and listed as package data."""
    jsonschema.Draft202012Validator.check_schema(brief_schema())
    assert "workflows/research/brief.schema.json" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    required = set(brief_schema()["properties"]["evidence"]["items"]["required"])
    assert required == {"id", "sourceType", "uri", "snapshotSha256", "quote", "start", "end", "lineStart",
                        "lineEnd", "query"}


async def test_every_query_states_its_vocabulary_entry(base: Path) -> None:
    """WF-15: each query in brief.json carries provenance and vocabularyEntry (null for a free model query),
    and the shipped schema requires both."""
    required = set(brief_schema()["properties"]["queries"]["items"]["required"])
    assert {"text", "provenance", "vocabularyEntry"} <= required
    model = ScriptedModel()
    task, result = await run("document-search", {}, base, model)
    assert result.status == "completed"
    queries = brief(task)["queries"]
    assert queries and all(q["provenance"] == "model" and q["vocabularyEntry"] is None for q in queries)


async def test_cancelling_a_task_archives_nothing_of_the_running_stage(base: Path) -> None:
    """WF-8, WF-1: a fired signal ends the run with RESEARCH_CANCELLED; the resume redoes only that stage."""
    controller = AbortController()

    def cancel_while_choosing(task: Any) -> dict[str, Any]:
        controller.abort()
        return choose_excerpts(task)

    model = ScriptedModel({"choose_excerpts": cancel_while_choosing})
    task, result = await run("document-search", {}, base, model,
                             options=ResearchOptions(signal=controller.signal))
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "RESEARCH_CANCELLED"
    assert not (task.directory / "artifacts" / "brief.json").exists()
    resumed_model = ScriptedModel()
    task, result = await run("document-search", None, base, resumed_model, directory=task.directory)
    assert result.status == "completed"
    assert resumed_model.calls["choose_queries"] == 0 and resumed_model.calls["choose_excerpts"] == 1
    assert trace(task)


async def test_missing_document_path_is_a_source_failure(base: Path, tmp_path: Path, model: ScriptedModel) -> None:
    """WF-12, WF-7: a document path that does not exist fails the documents source (blocked), it is not empty."""
    task, result = await run("document-search", {"documents": [str(tmp_path / "nowhere")], "question": "Where?"},
                             base, model)
    assert result.status == "blocked"
    assert [(s.source, s.code) for s in result.failed_sources] == [("document", "RETRIEVAL_PROVIDER_UNAVAILABLE")]
    assert not (task.directory / "artifacts" / "brief.json").exists()


@pytest.mark.parametrize("directory", ["a\x00b", "a\udcffb", "", 5, None])
def test_unusable_task_paths_are_invalid_input(directory: object) -> None:
    """WF-13, WF-8: verify_task and open_task refuse a path with NUL, a lone surrogate, an empty one or a non-path
    with RESEARCH_INVALID_INPUT, never a raw ValueError/TypeError."""
    from ditto.workflows.research import open_task, verify_task

    for function in (verify_task, open_task):
        with pytest.raises(ResearchError) as caught:
            function(directory)  # type: ignore[arg-type]
        assert caught.value.code == "RESEARCH_INVALID_INPUT"
