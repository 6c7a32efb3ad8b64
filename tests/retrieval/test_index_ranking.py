"""How research ranks over an index: coordinated BM25, at most 3 documents per query (issues 17 and 18)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval.engines import BM25Index
from ditto.retrieval.index import create_index_search_provider, open_index, update_index
from ditto.text import TextAnalyzer, score_documents
from ditto.worker.infer.extractive import SUBJECT_QUERY_WORDS, choose_queries, keyword_query
from ditto.worker.infer.tasks import QueryTask
from ditto.workflows.research.sources.indexed_documents import (
    IndexedDocumentSearchProvider,
    rank_documents,
    select_passages,
)

QUERY = "mkdir parent directories"
#: One short passage repeating the rare word, one that holds every query word, and filler sharing the
#: common words: plain BM25 ranks the short one first, coordination the one about the question.
CORPUS = {
    "short.txt": "mkdir(1), mkdir(2), mkdir(3)\n",
    "full.txt": "mkdir -p, --parents: no error if existing, make parent directories as needed, with their file "
                "modes unaffected by any -m option.\n",
    **{f"parents{n}.txt": f"Parent directories of the working directory number {n} are listed here with their "
                          "owners.\n" for n in range(5)},
    **{f"shell{n}.txt": f"The shell reads line {n} of the script and runs it.\n" for n in range(5)},
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _research_provider(index: Path) -> IndexedDocumentSearchProvider:
    return IndexedDocumentSearchProvider(index=index, documents=[], ignore=(), save_snapshot=lambda raw: "",
                                         notes_key=None, env={"DITTO_RESEARCH_EMBED": "0"})


async def _search(provider: Any, query: str, limit: int = 3) -> list[Any]:
    output = await provider.search({"query": {"content": query}, "target": {"name": "research-documents"},
                                    "limit": limit})
    return list(output.candidates)


def test_the_engine_coordinates_only_when_asked() -> None:
    """Issue 17: with ``coordinate`` the passage holding every query word outranks a short one repeating one
    rare word; plain BM25 (the default, what ``ditto search`` ranks by) keeps the short one first."""
    index = BM25Index(analyzer=TextAnalyzer())
    index.add([{"id": name, "content": text} for name, text in CORPUS.items()])
    assert index.search(QUERY, limit=1)[0][0].id == "short.txt"
    assert index.search(QUERY, limit=1, coordinate=True)[0][0].id == "full.txt"


_WORDS = st.sampled_from(["backup", "kept", "days", "restore", "nightly", "disk", "full", "copy", "the", "of"])


@settings(max_examples=60, deadline=None)
@given(documents=st.lists(st.lists(_WORDS, min_size=1, max_size=12), min_size=1, max_size=12),
       query=st.lists(_WORDS, min_size=1, max_size=5, unique=True))
def test_the_index_coordinates_as_the_in_memory_scoring_does(documents: list[list[str]], query: list[str]) -> None:
    """Issue 17: one coordination for both BM25s: the index engine's coordinated scores are the in-memory
    ``score_documents(coordinate=True)`` scores up to Lucene's constant ``k1 + 1`` (same order, same ratios; the
    engine counts a repeated query word twice, the in-memory scoring once, so the query words are distinct)."""
    analyzer = TextAnalyzer()
    texts = [" ".join(words) for words in documents]
    index = BM25Index(analyzer=analyzer)
    index.add([{"id": str(n), "content": text} for n, text in enumerate(texts)])
    expected = score_documents(analyzer.analyze(" ".join(query)), [analyzer.analyze(text) for text in texts],
                               coordinate=True)
    found = dict((document.id, score) for document, score in
                 index.search(" ".join(query), limit=len(texts), coordinate=True))
    assert set(found) == {str(n) for n, score in enumerate(expected) if score > 0}
    for n, score in enumerate(expected):
        if score > 0:
            assert math.isclose(found[str(n)] * (index.k1 + 1), score, rel_tol=1e-4)


async def test_research_over_an_index_ranks_with_coordination(tmp_path: Path) -> None:
    """Issue 17: research over a prepared index ranks the passage that holds every query word above a short
    one holding one rare word, as the in-memory documents search did; the index provider alone does not."""
    folder = _write(tmp_path / "docs", CORPUS)
    await update_index(tmp_path / "idx", [folder])
    hits = await _search(_research_provider(tmp_path / "idx"), QUERY)
    assert hits[0].metadata["uri"] == (folder / "full.txt").resolve().as_uri()
    with open_index(tmp_path / "idx") as index:
        plain = await _search(create_index_search_provider(index), QUERY, limit=1)
        coordinated = await _search(create_index_search_provider(index, coordinate=True), QUERY, limit=1)
    assert Path(plain[0].metadata["path"]).name == "short.txt"
    assert Path(coordinated[0].metadata["path"]).name == "full.txt"


async def test_a_query_retrieves_at_most_three_documents_not_three_passages_of_one(tmp_path: Path) -> None:
    """Issue 18 (seed 004: each query retrieves at most 3 documents): a file whose every paragraph matches
    the query takes one slot with its best passage when other files match about as well; the other slots go
    to distinct files, each with its snapshot."""
    big = "\n\n".join(f"Backups of disk {n} are kept for {n} days, and backups of disk {n} are checked."
                      for n in range(8))
    files = {"big.txt": big + "\n", **{f"note{n}.txt": f"Note {n}: backups of the disk are kept offsite.\n"
                                       for n in range(4)}, "other.txt": "The shell runs commands.\n"}
    folder = _write(tmp_path / "docs", files)
    await update_index(tmp_path / "idx", [folder])
    with open_index(tmp_path / "idx") as index:
        passages = await _search(create_index_search_provider(index), "backups kept disk", limit=3)
    assert {Path(hit.metadata["path"]).name for hit in passages} == {"big.txt"}  # the plain index: one file
    hits = await _search(_research_provider(tmp_path / "idx"), "backups kept disk")
    uris = [hit.metadata["uri"] for hit in hits]
    assert len(hits) == 3 and len(set(uris)) == 3
    assert uris[0] == (folder / "big.txt").resolve().as_uri()
    assert all(hit.metadata["snapshotSha256"] for hit in hits)


def _hit(path: str | None, score: float) -> Any:
    return SimpleNamespace(score=score, metadata={"path": path} if path is not None else {"id": "record"})


def _paths(selected: list[tuple[float, Any]]) -> list[str]:
    return [hit.metadata["path"] for _, hit in selected]


def test_a_file_ranks_by_its_best_passage_and_a_bounded_share_of_the_next() -> None:
    """Issue 18: a file matching in several passages (an abstract's title and text) outranks one whose single
    passage is a little better; a long file of many weak matches cannot outrank a strong one by length;
    record hits without a path are left out; ties keep the order of the best passages."""
    ranked = rank_documents([_hit("a", 1.0), _hit("b", 0.95), _hit("b", 0.8), _hit(None, 5.0)])
    assert [passages[0].metadata["path"] for _, passages in ranked] == ["b", "a"]
    assert [hit.score for hit in ranked[0][1]] == [0.95, 0.8]
    long_file = [_hit("long", 0.8) for _ in range(20)]
    assert rank_documents([_hit("strong", 1.0), *long_file])[0][1][0].metadata["path"] == "strong"
    assert [p[0].metadata["path"] for _, p in rank_documents([_hit("x", 1.0), _hit("y", 1.0)])] == ["x", "y"]
    assert [score for score, _ in rank_documents([_hit("z", 1.0), _hit("z", -2.0)])] == [1.0]


def test_the_slots_go_to_distinct_files_first_but_a_strong_second_passage_still_counts() -> None:
    """Issue 18: with no weight for repeats a query's passages are one per file; with full weight they are
    the plain passage order; by default a file's second passage is taken only when it beats the next file's
    best by the repeat weight (a man page's answer is often its second passage)."""
    hits = [_hit("a", 1.0), _hit("a", 0.9), _hit("a", 0.85), _hit("b", 0.6), _hit("c", 0.5)]
    assert _paths(select_passages(hits, repeat_weight=0.0, rest_weight=0.0)) == ["a", "b", "c"]
    assert _paths(select_passages(hits, repeat_weight=1.0, rest_weight=0.0))[:3] == ["a", "a", "a"]
    assert _paths(select_passages(hits)) == ["a", "a", "b", "c", "a"]  # 0.9 * 0.75 > 0.6; 0.85 * 0.75 ** 2 < 0.5
    scores = [score for score, _ in select_passages(hits)]
    assert scores == sorted(scores, reverse=True)


def test_a_long_question_gets_a_second_query_of_its_first_half() -> None:
    """Issue 17 (seed 004: at most 2 model queries without a vocabulary): a long question (a claim) is also
    searched by the first half of its content words, its subject; a short one keeps one query, and one
    query allowed is one query."""
    claim = "Vitamin D deficiency increases the risk of multiple sclerosis relapses in adults."
    words = keyword_query(claim).split()
    assert len(words) >= SUBJECT_QUERY_WORDS
    queries = choose_queries(QueryTask(question=claim, min_queries=1, max_queries=2))
    assert queries == [" ".join(words), " ".join(words[:(len(words) + 1) // 2])]
    assert choose_queries(QueryTask(question=claim, min_queries=1, max_queries=1)) == [" ".join(words)]
    assert choose_queries(QueryTask(question="How long are backups kept?", min_queries=1, max_queries=2)) \
        == ["long backups kept"]


async def test_folder_caches_beyond_the_limit_go_least_recently_used_first_never_one_in_use(tmp_path: Path) -> None:
    """Issue 18: folder caches are kept to a limit: the least recently used go first; the task's own cache,
    one whose writer lock another process holds (being updated) and every cache under the limit stay."""
    import os

    from ditto.retrieval.index.lock import writer_lock
    from ditto.workflows.research.sources.indexed_documents import evict_folder_caches

    root = tmp_path / "caches"
    names = [f"c{n}" for n in range(5)]
    for age, name in enumerate(names):  # c0 used longest ago, c4 last
        folder = _write(tmp_path / f"docs-{name}", {"a.txt": f"Backups of {name} are kept.\n"})
        await update_index(root / name, [folder])
        (root / name / ".used").touch()
        os.utime(root / name / ".used", (1_000_000 + age, 1_000_000 + age))
    with writer_lock(root / "c1"):  # being updated by another task
        removed = evict_folder_caches(root, root / "c0", limit=3)
    assert sorted(path.name for path in removed) == ["c2"]
    assert sorted(path.name for path in root.iterdir()) == ["c0", "c1", "c3", "c4"]
    assert evict_folder_caches(root, root / "c0", limit=0) == []
    assert sorted(path.name for path in evict_folder_caches(root, root / "c0", limit=1)) == ["c1", "c3", "c4"]
    assert [path.name for path in root.iterdir()] == ["c0"]
