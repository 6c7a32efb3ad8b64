"""Research over an index: ``--index DIR`` and the ``--documents`` folder cache; briefs verify offline (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ditto.retrieval.index import update_index
from ditto.workflows.research import run_research
from ditto.workflows.research.errors import ResearchError
from ditto.workflows.research.verify import check_task
from tests.retrieval.index_support import write_docs

QUESTION = "How long are backups kept?"


def _brief(result: Any) -> dict[str, Any]:
    assert result.status == "completed", (result.status, result.error)
    return json.loads(Path(result.brief).read_text(encoding="utf-8"))


def _generations(cache: Path) -> list[str]:
    return sorted(json.loads(manifest.read_text())["generation"] for manifest in cache.glob("*/manifest.json"))


async def test_research_over_a_prepared_index_quotes_the_files_and_verifies(tmp_path: Path) -> None:
    """Issue 18: `document-search --index DIR` searches the index instead of reading folders; the brief quotes
    the real file (URI, lines, the snapshot of the bytes indexed), says BM25 was used, and `verify` accepts it."""
    docs = write_docs(tmp_path / "docs")
    await update_index(tmp_path / "idx", [docs])
    task, result = await run_research("document-search", {"question": QUESTION, "index": str(tmp_path / "idx")},
                                      base_dir=tmp_path / "tasks", env={})
    brief = _brief(result)
    [item] = [e for e in brief["evidence"] if e["sourceType"] == "document"][:1]
    assert item["uri"] == (docs / "ops/backups.md").resolve().as_uri()
    assert "30 days" in item["quote"]
    raw = (task.directory / "snapshots" / item["snapshotSha256"] / "raw").read_bytes()
    assert raw == (docs / "ops/backups.md").read_bytes()
    [coverage] = [c for c in brief["coverage"] if c["source"] == "document"]
    assert any(note.startswith("retrieval: BM25 over the index") for note in coverage["notes"])
    report = check_task(task.directory, signing_key=None)
    assert report.ok, report.problems


async def test_the_folder_cache_is_reused_while_files_are_unchanged_and_follows_changes(tmp_path: Path) -> None:
    """Issue 18: a --documents folder is indexed once into the cache; a second task reuses it (no new
    generation published), a changed file is re-indexed before the next task, which quotes the new text; every
    brief verifies."""
    docs = write_docs(tmp_path / "docs")
    cache = tmp_path / "cache"
    env = {"DITTO_INDEX_CACHE_DIR": str(cache)}
    fields = {"question": QUESTION, "documents": [str(docs)]}
    first_task, first = await run_research("document-search", fields, base_dir=tmp_path / "tasks", env=env)
    assert "30 days" in json.dumps(_brief(first))
    generations = _generations(cache)
    assert len(generations) == 1
    second_task, second = await run_research("document-search", {**fields, "tenant": "other"},
                                             base_dir=tmp_path / "tasks", env=env)
    assert "30 days" in json.dumps(_brief(second)) and _generations(cache) == generations
    (docs / "ops/backups.md").write_text("# Backups\n\nBackups are kept for 90 days.\n", encoding="utf-8")
    third_task, third = await run_research("document-search", {**fields, "tenant": "third"},
                                           base_dir=tmp_path / "tasks", env=env)
    text = json.dumps(_brief(third))
    assert "90 days" in text and "30 days" not in text
    assert _generations(cache) != generations
    for task in (first_task, second_task, third_task):
        report = check_task(task.directory, signing_key=None)
        assert report.ok, report.problems


async def test_documents_and_index_together_are_refused(tmp_path: Path) -> None:
    """Issue 18: a request naming both --documents and --index is refused before any task is made."""
    with pytest.raises(ResearchError) as error:
        await run_research("document-search", {"question": QUESTION, "documents": [str(tmp_path)],
                                               "index": str(tmp_path / "idx")}, base_dir=tmp_path / "tasks", env={})
    assert error.value.code == "RESEARCH_INVALID_INPUT"


async def test_a_missing_index_fails_the_source_with_its_reason(tmp_path: Path) -> None:
    """Issue 18: --index naming no index: the documents source fails with the index's reason, not a traceback."""
    _, result = await run_research("document-search", {"question": QUESTION, "index": str(tmp_path / "none")},
                                   base_dir=tmp_path / "tasks", env={})
    assert result.status == "blocked" and result.error is not None and result.error.code == "RESEARCH_SOURCE_FAILED"
    [failed] = result.failed_sources
    assert failed.code == "RETRIEVAL_PROVIDER_UNAVAILABLE" and "holds no index" in failed.message


async def test_with_the_embed_extra_the_folder_cache_is_hybrid_and_says_so(tmp_path: Path) -> None:
    """Issue 18 (real weights): with the embed extra installed, the documents source's folder cache holds
    vectors of the local model, the search is hybrid, the coverage says so, and the brief verifies."""
    from ditto.retrieval.index.embedding import embedding_available

    assert embedding_available(), "the embed extra is part of the dev install"
    docs = write_docs(tmp_path / "docs")
    env = {"DITTO_INDEX_CACHE_DIR": str(tmp_path / "cache"), "DITTO_RESEARCH_EMBED": "1"}
    task, result = await run_research("document-search", {"question": QUESTION, "documents": [str(docs)]},
                                      base_dir=tmp_path / "tasks", env=env)
    brief = _brief(result)
    [coverage] = [c for c in brief["coverage"] if c["source"] == "document"]
    assert any(note.startswith("retrieval: hybrid (BM25 + sentence-transformers/all-MiniLM-L6-v2")
               for note in coverage["notes"]), coverage["notes"]
    assert "30 days" in json.dumps(brief)
    [manifest] = (tmp_path / "cache").glob("*/manifest.json")
    assert json.loads(manifest.read_text())["embedding"]["dimensions"] == 384
    report = check_task(task.directory, signing_key=None)
    assert report.ok, report.problems


async def test_with_the_embed_extra_the_builtin_model_quotes_a_paraphrase(tmp_path: Path) -> None:
    """Issues 17, 18 (real weights): over the user's documents with embeddings on, the built-in model reads with
    the same local model, so a passage that answers in other words (one word shared) is quoted, and one that
    only shares that word is not; with embeddings off the lexical gate alone finds nothing about it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "health.md").write_text("# Health\n\nTobacco use markedly increases the likelihood of developing lung "
                                    "carcinoma.\n", encoding="utf-8")
    (docs / "anatomy.md").write_text("# Anatomy\n\nThe lung is an organ of the respiratory system.\n",
                                     encoding="utf-8")
    (docs / "backups.md").write_text("# Backups\n\nBackups are kept for 30 days.\n", encoding="utf-8")
    question = "Does smoking raise the risk of lung cancer?"
    results = {}
    for embed in ("1", "0"):
        env = {"DITTO_INDEX_CACHE_DIR": str(tmp_path / f"cache-{embed}"), "DITTO_RESEARCH_EMBED": embed}
        task, result = await run_research("document-search", {"question": question, "documents": [str(docs)]},
                                          base_dir=tmp_path / f"tasks-{embed}", env=env)
        results[embed] = (task, result)
    task, result = results["1"]
    brief = _brief(result)
    assert brief["status"] == "completed"
    assert {Path(item["uri"]).name for item in brief["evidence"]} == {"health.md"}
    assert check_task(task.directory, signing_key=None).ok
    assert results["0"][1].status == "no-evidence"


async def test_a_chinese_query_is_searched_by_bm25_when_the_model_reads_english_only(tmp_path: Path) -> None:
    """Issues 17, 18 (real weights): all-MiniLM-L6-v2 reads English only, so over an index with its vectors a
    query in CJK script is searched by BM25 alone (its vector would be noise weighted 0.75 in the hybrid), an
    English one stays hybrid, and the coverage note says so."""
    from ditto.workflows.research.sources.indexed_documents import IndexedDocumentSearchProvider

    docs = write_docs(tmp_path / "docs")
    (docs / "zh.md").write_text("# 备份\n\n备份保留三十天。\n", encoding="utf-8")
    provider = IndexedDocumentSearchProvider(index=None, documents=[docs], ignore=(), save_snapshot=lambda raw: "",
                                             notes_key=None, env={"DITTO_INDEX_CACHE_DIR": str(tmp_path / "cache"),
                                                                  "DITTO_RESEARCH_EMBED": "1"})
    asked: list[Any] = []
    first = await provider.search({"query": {"content": "backups kept"}, "target": {"name": "documents"}, "limit": 3})
    assert first.candidates
    state = provider._state
    assert state is not None and state.english_only
    search = state.provider.search

    async def recording(request: Any, context: Any = None) -> Any:
        asked.append(request.get("strategy"))
        return await search(request, context)

    state.provider.search = recording
    english = await provider.search({"query": {"content": "backups kept"}, "target": {"name": "documents"},
                                     "limit": 3})
    chinese = await provider.search({"query": {"content": "备份保留多久"}, "target": {"name": "documents"},
                                     "limit": 3})
    assert asked == [None, "bm25"]
    assert english.candidates and chinese.candidates[0].content == "备份保留三十天。"
    assert any("BM25 alone for a query in Chinese, Japanese or Korean script" in note for note in state.notes)
