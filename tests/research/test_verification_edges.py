"""The model-answer checks at their limits (WF-10): query counts and vocabulary, excerpt counts per answer,
per source and per web page, quote length, duplicates, and the line range of a quote."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.worker.infer import ExcerptPassage, ExcerptTask, QueryTask
from ditto.workflows.research import ResearchError
from ditto.workflows.research.verification import Passage, line_range, verify_excerpts, verify_queries

BODY = "alpha beta gamma delta epsilon zeta eta theta " * 30

def _P(id: str, source_type: str, uri: str, sha: str, text: str, start: int, end: int, query: str,
       found_by: tuple[str, ...], **extra: Any) -> Passage:
    """A passage built positionally (the tests' short form)."""
    return Passage(id=id, source_type=source_type, uri=uri, snapshot_sha256=sha, text=text, start=start, end=end,
                   query=query, found_by=found_by, **extra)



def _passage(id: str, page: str | None = None, start: int = 100) -> Passage:
    return _P(id, "web" if page else "document", f"https://x/{id}", "0" * 64, BODY, start, start + len(BODY),
                   "q", ("q",), page=page)


def _task(**limits: Any) -> ExcerptTask:
    return ExcerptTask(question="q", passages=(ExcerptPassage(source_id="s1", text=BODY),), **limits)


def _refused(call: Any) -> tuple[str, str]:
    with pytest.raises(ResearchError) as raised:
        call()
    return raised.value.code, raised.value.message


def test_query_checks_at_their_limits() -> None:
    """WF-10: between min and max queries are accepted (both ends included); repeats, blank, over-long or NUL
    queries and ones outside the vocabulary are rejected with their codes."""
    task = QueryTask(question="q", min_queries=2, max_queries=3)
    assert [r.text for r in verify_queries({"queries": ["a", "b"]}, task, "model")] == ["a", "b"]
    assert len(verify_queries({"queries": ["a", "b", "c"]}, task, "model")) == 3
    assert _refused(lambda: verify_queries({"queries": ["a"]}, task, "model")) == (
        "RESEARCH_QUERY_COUNT", "the model chose 1 queries; the contract asks for 2-3")
    assert _refused(lambda: verify_queries({"queries": ["a", "b", "c", "d"]}, task, "model"))[0] == \
        "RESEARCH_QUERY_COUNT"
    assert _refused(lambda: verify_queries({"queries": ["a", "a"]}, task, "model")) == (
        "RESEARCH_QUERY_DUPLICATE", "the model chose the same query twice")
    for bad in (" ", "x" * 1001, "a\x00b"):
        assert _refused(lambda bad=bad: verify_queries({"queries": ["ok", bad]}, task, "model")) == (
            "RESEARCH_QUERY_COUNT", "the model chose a blank or oversized query")
    assert len(verify_queries({"queries": ["ok", "x" * 1000]}, task, "model")) == 2
    for answer in (None, {"queries": "a b"}, {"queries": ["a", 1]}, ["a", "b"]):
        assert _refused(lambda answer=answer: verify_queries(answer, task, "model")) == (
            "RESEARCH_MODEL_FAILED", "the model's answer holds no list of queries")
    vocabulary = QueryTask(question="q", vocabulary=("alpha", "beta"), min_queries=1, max_queries=2)
    records = verify_queries({"queries": ["beta"]}, vocabulary, "expand")
    assert [(r.text, r.vocabulary_entry, r.provenance) for r in records] == [("beta", "beta", "expand")]
    assert verify_queries({"queries": ["free"]}, QueryTask(question="q"), "model")[0].vocabulary_entry is None
    assert _refused(lambda: verify_queries({"queries": ["gamma"]}, vocabulary, "expand")) == (
        "RESEARCH_QUERY_OUT_OF_VOCABULARY",
        "the model chose a query that is not an entry of the controlled vocabulary")


def test_excerpt_checks_at_their_limits() -> None:
    """WF-10: the answer, per-source and per-page limits are inclusive; a 1000-character quote is accepted and
    1001 rejected; offsets are the passage's start plus the quote's position."""
    passages = [_passage("s1"), _passage("s2"), _passage("w1", page="p"), _passage("w2", page="p"),
                _passage("w3", page="p")]

    def excerpts(*pairs: tuple[str, str]) -> dict[str, Any]:
        return {"excerpts": [{"sourceId": s, "quote": q} for s, q in pairs]}

    two = verify_excerpts(excerpts(("s1", "beta"), ("s1", "gamma delta")), _task(max_per_source=2), passages)
    assert [(e.start, e.end, e.quote) for e in two] == [(106, 110, "beta"), (111, 122, "gamma delta")]
    assert _refused(lambda: verify_excerpts(excerpts(("s1", "beta"), ("s1", "gamma"), ("s1", "eta")),
                                            _task(max_per_source=2), passages)) == (
        "RESEARCH_TOO_MANY_EXCERPTS", "more than 2 excerpts from source s1")
    assert _refused(lambda: verify_excerpts(excerpts(("s1", "beta"), ("s2", "beta")), _task(max_excerpts=1),
                                            passages)) == (
        "RESEARCH_TOO_MANY_EXCERPTS", "the model chose 2 excerpts; at most 1 are allowed")
    assert len(verify_excerpts(excerpts(("w1", "beta"), ("w2", "beta")), _task(), passages)) == 2
    assert _refused(lambda: verify_excerpts(excerpts(("w1", "beta"), ("w2", "beta"), ("w3", "beta")), _task(),
                                            passages)) == (
        "RESEARCH_TOO_MANY_EXCERPTS", "more than 2 excerpts from one web page")
    assert _refused(lambda: verify_excerpts(excerpts(("s1", "beta"), ("s1", "beta")), _task(), passages)) == (
        "RESEARCH_TOO_MANY_EXCERPTS", "the model chose the same excerpt twice")
    long_quote = BODY[:1000]
    assert verify_excerpts(excerpts(("s1", long_quote)), _task(), passages)[0].end == 1100
    assert _refused(lambda: verify_excerpts(excerpts(("s1", BODY[:1001])), _task(), passages)) == (
        "RESEARCH_QUOTE_TOO_LONG", "a quote has 1001 characters; at most 1000 are allowed")
    assert _refused(lambda: verify_excerpts(excerpts(("s1", "alpha beta")), _task(max_quote_chars=9),
                                            passages))[0] == "RESEARCH_QUOTE_TOO_LONG"
    assert verify_excerpts(excerpts(("s1", "alpha bet")), _task(max_quote_chars=9), passages)[0].start == 100
    assert _refused(lambda: verify_excerpts(excerpts(("s9", "beta")), _task(), passages)) == (
        "RESEARCH_UNKNOWN_SOURCE", "the model cited a source id the task did not give it")
    assert _refused(lambda: verify_excerpts(excerpts(("s1", "  ")), _task(), passages)) == (
        "RESEARCH_QUOTE_NOT_FOUND", "the model gave an empty quote")
    assert _refused(lambda: verify_excerpts(excerpts(("s1", "omega")), _task(), passages)) == (
        "RESEARCH_QUOTE_NOT_FOUND", "a quote is not verbatim in source s1")
    assert _refused(lambda: verify_excerpts({"excerpts": "beta"}, _task(), passages)) == (
        "RESEARCH_MODEL_FAILED", "the model's answer holds no list of excerpts")
    assert verify_excerpts({"excerpts": []}, _task(), passages) == []


def test_line_range_counts_lines_of_the_quoted_span() -> None:
    """WF-10: 1-based first and last line; a quote ending with its newline stays on that line."""
    text = "one\ntwo\nthree\n"
    assert line_range(text, 0, 3) == (1, 1)
    assert line_range(text, 0, 4) == (1, 1)  # "one\n"
    assert line_range(text, 0, 5) == (1, 2)
    assert line_range(text, 4, 13) == (2, 3)
    assert line_range(text, 8, 8) == (3, 3)


def test_passage_json_round_trip_and_exact_excerpt_limit() -> None:
    """WF-10: a passage survives its JSON form field for field; exactly max_excerpts excerpts are accepted;
    a snapshot starting with a newline puts a quote after it on line 2."""
    passage = _P("w1", "web", "https://x/a", "ab" * 32, "text", 5, 9, "query", ("query", "other"),
                      locator={"heading": "Intro"}, page="https://x/a")
    data = passage.to_json_dict()
    assert data == {"id": "w1", "sourceType": "web", "uri": "https://x/a", "snapshotSha256": "ab" * 32,
                    "text": "text", "start": 5, "end": 9, "query": "query", "foundBy": ["query", "other"],
                    "locator": {"heading": "Intro"}, "page": "https://x/a"}
    assert Passage.model_validate(data) == passage
    bare = _P("d1", "document", "file:///d", "cd" * 32, "t", 0, 1, "q", ("q",))
    assert "locator" not in bare.to_json_dict() and Passage.model_validate(bare.to_json_dict()) == bare
    passages = [_passage("s1"), _passage("s2")]
    two = {"excerpts": [{"sourceId": "s1", "quote": "beta"}, {"sourceId": "s2", "quote": "beta"}]}
    assert len(verify_excerpts(two, _task(max_excerpts=2), passages)) == 2
    assert line_range("\nx", 1, 2) == (2, 2)
