"""``ResearchSourceContract``: what every research source promises, as pytest tests.

A research source (documents, knowledge, the web, yours) turns queries into a
graph of node calls and the calls' results into passages. The contract runs a
source against a real runtime and checks what the evidence stage relies on.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ..runtime import Graph, NodeResult, Runtime
from ..workflows.research.sources.base import ResearchSource, SourceHits, SourceLimits
from ..workflows.research.taskdir import snapshot_text
from ..workflows.research.types import QueryRecord

__all__ = ["ResearchSourceContract"]

T = TypeVar("T")


def _shape(plan: Graph | None) -> list[tuple[str, str, tuple[str, ...]]] | None:
    return None if plan is None else [(node.id, node.node_type, node.deps) for node in plan.nodes]


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


class ResearchSourceContract:
    """Subclass as ``class TestMySource(ResearchSourceContract)`` and implement:

    * ``source(directory)`` — an async context manager yielding ``(runtime, source, snapshots)``:
      a runtime with the workers the source calls, the source (created with a
      ``SourceSetup`` of a task made in ``directory``) and that task's ``snapshots`` folder;
      the material must answer :attr:`query` and not :attr:`unmatched_query`;
    * ``failing_source(directory)`` — the same, but the backend the source reads fails.

    The suite checks: the source declares its type and limits; its plan is a pure
    function of the queries; every passage is verbatim in a saved snapshot at its
    offsets, found by its query, within ``records_per_query``; nothing found is no
    failure; a failing backend is a ``failure`` in the hits, never an exception.
    """

    query: ClassVar[str] = "backup retention days"
    unmatched_query: ClassVar[str] = "zqxj wvbk yplm"

    # -- hooks -------------------------------------------------------------------------
    def source(self, directory: Path) -> AbstractAsyncContextManager[tuple[Runtime, ResearchSource, Path]]:
        raise NotImplementedError("implement source(directory) as an async context manager")

    def failing_source(self, directory: Path) -> AbstractAsyncContextManager[tuple[Runtime, ResearchSource, Path]]:
        raise NotImplementedError("implement failing_source(directory) as an async context manager")

    # -- helpers -----------------------------------------------------------------------
    @staticmethod
    def queries(*texts: str) -> tuple[QueryRecord, ...]:
        return tuple(QueryRecord(text=text, provenance="model") for text in texts)

    @staticmethod
    async def hits(runtime: Runtime, source: ResearchSource, queries: tuple[QueryRecord, ...]) -> SourceHits:
        """What the evidence stage does with a source: run its plan, collect the results."""
        plan = source.plan(queries)
        results: Mapping[str, NodeResult[Any]] = {} if plan is None else (await runtime.run(plan, None)).results
        return source.collect(queries, results)

    def _in_directory(self, body: Any) -> None:
        with tempfile.TemporaryDirectory() as folder:
            _run(body(Path(folder)))

    # -- the contract ------------------------------------------------------------------
    def test_source_declares_its_type_and_limits(self) -> None:
        """A source names its evidence type and declares its limits; its plan is a Graph (or None)."""

        async def body(directory: Path) -> None:
            async with self.source(directory) as (_runtime, source, _snapshots):
                assert isinstance(source, ResearchSource)
                assert isinstance(source.source_type, str) and source.source_type
                assert isinstance(source.limits, SourceLimits)
                plan = source.plan(self.queries(self.query))
                assert plan is None or isinstance(plan, Graph)

        self._in_directory(body)

    def test_plan_is_a_pure_function_of_the_queries(self) -> None:
        """Planning reads nothing and writes nothing: the same queries give the same nodes, no snapshot."""

        async def body(directory: Path) -> None:
            async with self.source(directory) as (_runtime, source, snapshots):
                before = sorted(path.name for path in snapshots.iterdir()) if snapshots.exists() else []
                first, second = source.plan(self.queries(self.query)), source.plan(self.queries(self.query))
                assert _shape(first) == _shape(second)
                after = sorted(path.name for path in snapshots.iterdir()) if snapshots.exists() else []
                assert before == after, "planning must not read or save material"

        self._in_directory(body)

    def test_passages_are_verbatim_in_their_snapshots(self) -> None:
        """Each passage is ``snapshot_text[start:end]``, of the source's type, found by its query, and a
        query gives at most ``records_per_query`` of them."""

        async def body(directory: Path) -> None:
            async with self.source(directory) as (runtime, source, snapshots):
                queries = self.queries(self.query, f"{self.query} again")
                hits = await self.hits(runtime, source, queries)
                assert hits.failure is None, hits.failure
                assert hits.passages, "the contract query must find something"
                limit = source.limits.records_per_query
                for query in queries:
                    found = [p for p in hits.passages if p.query == query.text]
                    assert limit is None or len(found) <= limit, (query.text, len(found), limit)
                for passage in hits.passages:
                    assert passage.source_type == source.source_type
                    assert passage.uri and passage.query in passage.found_by
                    text = snapshot_text(snapshots / passage.snapshot_sha256)
                    assert text[passage.start:passage.end] == passage.text, "a passage must be verbatim"

        self._in_directory(body)

    def test_nothing_found_is_not_a_failure(self) -> None:
        """A query that matches nothing gives no passages and no failure (empty hits and faults stay apart)."""

        async def body(directory: Path) -> None:
            async with self.source(directory) as (runtime, source, _snapshots):
                hits = await self.hits(runtime, source, self.queries(self.unmatched_query))
                assert hits.failure is None and list(hits.passages) == []

        self._in_directory(body)

    def test_a_failing_backend_is_reported_not_raised(self) -> None:
        """A backend that fails makes ``hits.failure`` (source, code, message) with no passages."""

        async def body(directory: Path) -> None:
            async with self.failing_source(directory) as (runtime, source, _snapshots):
                hits = await self.hits(runtime, source, self.queries(self.query))
                assert hits.failure is not None and list(hits.passages) == []
                assert hits.failure.source == source.source_type and hits.failure.code

        self._in_directory(body)
