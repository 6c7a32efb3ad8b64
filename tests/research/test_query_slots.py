"""Which passages each query of the documents source shows (issue 17: research that answers real questions on
real material; WF-6, seed 004's at most 3 documents per query)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ditto.worker.infer.extractive import asks_a_question
from ditto.workflows.research import (
    ResearchOptions,
    ResearchRequest,
    create_task,
    open_research_runtime,
    run_research,
    verify_task,
)
from ditto.workflows.research.records import RequestRecord
from ditto.workflows.research.sources.base import SourceLimits, SourceSetup
from ditto.workflows.research.sources.documents import DocumentsSource
from ditto.workflows.research.types import QueryRecord

#: Seven abstracts that all match the queries below, each in its own words besides.
ABSTRACTS = [f"Kinase {name} signalling regulates hepatic lipid metabolism in mice and {extra}.\n"
             for name, extra in (("ALPHA", "men"), ("BETA", "rats"), ("GAMMA", "fish"), ("DELTA", "flies"),
                                 ("EPSILON", "worms"), ("ZETA", "yeast"), ("ETA", "cells"))]


async def _shown(tmp_path: Path, question: str, queries: list[QueryRecord]) -> list[tuple[str, str]]:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for number, text in enumerate(ABSTRACTS):
        (docs / f"{number}.txt").write_text(text, encoding="utf-8")
    request = ResearchRequest(entry="document-search", question=question, documents=(str(docs),))
    task = create_task(request, directory=tmp_path / "task")
    async with open_research_runtime(task, env={"DITTO_RESEARCH_EMBED": "0"}) as runtime:
        source = DocumentsSource(SourceSetup(task, RequestRecord(request_id=task.request_id)))
        plan = source.plan(queries)
        assert plan is not None
        result = await runtime.run(plan, None)
        return [(passage.query, Path(passage.uri).name) for passage in source.collect(queries, result.results).passages]


async def test_a_claims_later_queries_show_what_earlier_ones_did_not(tmp_path: Path) -> None:
    """Issue 17, seed 004: each query of a claim to check shows at most 3 documents, and its slots go to documents
    no earlier query shows (what it finds again is shown once, found by both): two queries that rank the same
    documents show six, not three."""
    queries = [QueryRecord(text="kinase signalling hepatic lipid metabolism", provenance="model"),
               QueryRecord(text="kinase hepatic lipid", provenance="model")]
    shown = await _shown(tmp_path, "Kinase signalling regulates hepatic lipid metabolism.", queries)
    files = [name for _, name in shown]
    assert len(set(files)) == 6
    first = {name for query, name in shown if query == queries[0].text}
    second = {name for query, name in shown if query == queries[1].text}
    assert len(first) == 3 and len(second - first) == 3


async def test_a_questions_queries_show_their_own_best(tmp_path: Path) -> None:
    """Issue 17: a question is answered in depth: each query shows its own first 3 documents, whatever an earlier
    query showed, so two queries that rank the same documents show three."""
    queries = [QueryRecord(text="kinase signalling hepatic lipid metabolism", provenance="model"),
               QueryRecord(text="kinase hepatic lipid", provenance="model")]
    shown = await _shown(tmp_path, "Which kinase regulates hepatic lipid metabolism?", queries)
    first = {name for query, name in shown if query == queries[0].text}
    second = {name for query, name in shown if query == queries[1].text}
    assert len(first) == 3 and second == first



def _evidence(brief: str | None) -> int:
    return len(json.loads(Path(brief or "").read_text(encoding="utf-8"))["evidence"])


async def test_a_claim_may_cite_every_abstract_its_queries_show(tmp_path: Path) -> None:
    """Issue 17 (SciFact), WF-6: a claim to check is checked against every abstract shown that bears on it, one
    excerpt for each passage shown when there are more than six; a question keeps six at most. Both briefs verify
    (the verifier applies the same budget)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for number, name in enumerate(("ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON", "ZETA", "ETA", "THETA", "IOTA",
                                   "KAPPA", "LAMBDA", "MU")):
        (docs / f"{number}.txt").write_text(f"Kinase {name} signalling regulates hepatic lipid metabolism in mice.\n",
                                            encoding="utf-8")
    counts = {}
    for question in ("Kinase signalling regulates hepatic lipid metabolism in mice.",
                     "Which kinase signalling regulates hepatic lipid metabolism in mice?"):
        task, result = await run_research("document-search", {"question": question, "documents": [str(docs)]},
                                          base_dir=tmp_path / "tasks", env={"DITTO_RESEARCH_EMBED": "0"},
                                          options=ResearchOptions())
        assert result.status == "completed" and verify_task(task.directory) == []
        counts[question.endswith("?")] = _evidence(result.brief)
    assert counts[False] > 6 and counts[True] <= 6


@given(st.sampled_from(["Kinase signalling regulates lipid metabolism.", "How long are backups kept?"]),
       st.integers(min_value=0, max_value=40))
def test_the_excerpt_budget_of_a_claim_and_of_a_question(question: str, passages: int) -> None:
    """Issue 17, WF-6: at most two excerpts a passage shown; a question at most six; a claim one a passage shown
    when that is more than six."""
    allowed = SourceLimits().excerpts_for(question, passages)
    assert allowed == (min(6, 2 * passages) if asks_a_question(question) else min(max(6, passages), 2 * passages))
