"""The built-in model reads an index's passages by the sentence vectors the index already holds (issue 18:
a research task over a prepared index costs at most 0.3 s of CPU after the first).

Real weights (the packaged all-MiniLM-L6-v2), a real index in a tmp folder, ``run_research`` end to end: the
task over an index with sentence vectors sends the model only its own question, and its brief is the brief of
the same task over an index without them, which embeds what it reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):  # in CI the embed extra is installed (scripts/setup): a missing one fails there
    pytest.importorskip("onnxruntime")

from ditto.retrieval.index import update_index
from ditto.retrieval.index.embedding import local_embedding
from ditto.retrieval.index.store import sentence_texts
from ditto.workflows.research import run_research
from tests.research.helpers import brief
from tests.retrieval.index_support import write_docs

DOCS = {
    "backups.md": "# Backups\n\nDatabase backups are kept for thirty days and then deleted.\nThey run every "
                  "night at two in the morning.\n\nA restore takes about an hour for the largest database.\n",
    "alerts.md": "# Alerts\n\nAn alert pages the on-call engineer. Escalation to the manager follows after\n"
                 "fifteen minutes without an acknowledgement.\n",
    "garden.md": "# Garden\n\nTomatoes want six hours of sun. Water them in the morning.\n",
}
QUESTION = "How long are database backups retained?"


async def _task(tmp_path: Path, name: str, *, sentences: bool, seen: list[str]) -> dict[str, Any]:
    provider = local_embedding()
    index = tmp_path / name
    await update_index(index, [tmp_path / "docs"], embedding=provider, sentences=sentences)
    original = provider.embed

    async def spy(contents: Any, context: Any = None) -> Any:
        seen.extend(contents)
        return await original(contents, context)

    provider.embed = spy  # type: ignore[method-assign]
    try:
        task, result = await run_research("document-search", {"question": QUESTION, "index": str(index)},
                                          base_dir=tmp_path / f"tasks-{name}", env={"DITTO_RESEARCH_EMBED": "1"})
    finally:
        del provider.embed
    assert result.status == "completed", result
    return brief(task)


def _reading(data: dict[str, Any]) -> tuple[Any, ...]:
    """What the model made of the evidence: the quotes and the answer."""
    return (tuple((item["quote"], item["uri"]) for item in data["evidence"]),
            tuple(sentence["text"] for sentence in data["answer"]["sentences"]))


async def test_the_reading_uses_the_index_s_sentence_vectors_and_gives_the_same_brief(tmp_path: Path) -> None:
    """Issue 18: over an index with sentence vectors the built-in model embeds only the question, never a
    sentence of a passage; over one without them it embeds the sentences it reads; both briefs quote and
    answer the same."""
    write_docs(tmp_path / "docs", DOCS)
    held = {sentence for text in DOCS.values() for sentence in sentence_texts(text)}
    without: list[str] = []
    bare = await _task(tmp_path, "bare", sentences=False, seen=without)
    assert held & set(without), "the reading embeds the sentences it reads when the index has none"
    with_vectors: list[str] = []
    stored = await _task(tmp_path, "stored", sentences=True, seen=with_vectors)
    assert with_vectors and not held & set(with_vectors), with_vectors
    assert QUESTION in with_vectors
    assert _reading(stored) == _reading(bare)
    assert any("thirty days" in item["quote"] for item in stored["evidence"])
