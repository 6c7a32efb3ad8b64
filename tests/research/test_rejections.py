"""A model answer that fails verification is rejected as a whole, never fixed up (scripted INFER port)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.worker.memory import create_sqlite_memory_store
from ditto.workflows.research.checkpoints import checkpoint_key
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel, choose_excerpts


def _first_source(task: Any) -> str:
    return str(task.passages[0].source_id)


CASES = [
    ("wrong quote", "choose_excerpts",
     lambda task: {"excerpts": [{"sourceId": _first_source(task), "quote": "Backups are kept forever."}]},
     "RESEARCH_QUOTE_NOT_FOUND"),
    ("1001 characters", "choose_excerpts",
     lambda task: {"excerpts": [{"sourceId": _first_source(task), "quote": "x" * 1001}]},
     "RESEARCH_QUOTE_TOO_LONG"),
    ("unknown source id", "choose_excerpts",
     lambda task: {"excerpts": [{"sourceId": "doc-999", "quote": task.passages[0].text[:20]}]},
     "RESEARCH_UNKNOWN_SOURCE"),
    ("three quotes of one source", "choose_excerpts",
     lambda task: {"excerpts": [{"sourceId": _first_source(task), "quote": task.passages[0].text[i:i + 5]}
                                for i in range(3)]},
     "RESEARCH_TOO_MANY_EXCERPTS"),
]


@pytest.mark.parametrize(("case", "kind", "answer", "code"), CASES, ids=[case[0] for case in CASES])
async def test_bad_excerpts_are_rejected(case: str, kind: str, answer: Any, code: str, base: Path) -> None:
    """WF-7, WF-10: a wrong/oversized quote or an unknown source id rejects the answer; no brief, no evidence."""
    model = ScriptedModel({kind: answer})
    task, result = await run("document-search", {}, base, model)
    assert result.status == "rejected" and result.error is not None
    assert result.error.code == code
    assert not (task.directory / "artifacts" / "brief.json").exists()
    store = create_sqlite_memory_store(str(task.directory / "memory.sqlite"))
    try:
        assert await store.get(keys=[checkpoint_key(task.request_id, "evidence", task.checkpoint_id)]) == ()
    finally:
        await store.close()


QUERY_CASES = [
    ("rewrite", {"queries": ["how long do we keep backups"]}, "RESEARCH_QUERY_OUT_OF_VOCABULARY"),
    ("rewrite", {"queries": ["backup interval", "access review"]}, "RESEARCH_QUERY_COUNT"),
    ("expand", {"queries": ["backup interval"]}, "RESEARCH_QUERY_COUNT"),
    ("expand", {"queries": ["backup interval", "access review", "incident response", "backup retention period"]},
     "RESEARCH_QUERY_COUNT"),
    ("expand", {"queries": ["backup interval", "backup interval"]}, "RESEARCH_QUERY_DUPLICATE"),
    ("expand", {"queries": ["backup interval", "Backup Interval"]}, "RESEARCH_QUERY_OUT_OF_VOCABULARY"),
]


@pytest.mark.parametrize(("entry", "answer", "code"), QUERY_CASES)
async def test_query_contract(entry: str, answer: dict[str, Any], code: str, base: Path) -> None:
    """WF-9: out-of-vocabulary, too many, too few or repeated queries are rejected before any source is read."""
    model = ScriptedModel({"choose_queries": answer})
    task, result = await run(entry, {}, base, model)
    assert result.status == "rejected" and result.error is not None
    assert result.error.code == code
    assert model.calls["choose_excerpts"] == 0
    assert not (task.directory / "artifacts" / "brief.json").exists()


@given(noise=st.text(min_size=1, max_size=40))
async def test_quotes_not_in_the_passage_never_become_evidence(noise: str, tmp_path_factory: Any) -> None:
    """WF-10: any quote that is not verbatim in its passage is rejected (hypothesis)."""
    base = tmp_path_factory.mktemp("tasks")

    def answer(task: Any) -> dict[str, Any]:
        chosen = choose_excerpts(task)["excerpts"][:1]
        return {"excerpts": [{"sourceId": item["sourceId"], "quote": item["quote"] + "\u2063" + noise}
                             for item in chosen]}

    _task, result = await run("document-search", {}, base, ScriptedModel({"choose_excerpts": answer}))
    assert result.status == "rejected"
    assert result.error is not None and result.error.code in ("RESEARCH_QUOTE_NOT_FOUND", "RESEARCH_QUOTE_TOO_LONG")
