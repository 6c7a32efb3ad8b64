"""The source port: what documents, knowledge and the web each implement, and the registry of sources.

A source turns the task's queries into graph nodes (``plan``) and the nodes'
results into passages (``collect``); the evidence stage adds the model's
excerpt choice as a node depending on them, so one graph per source carries
the edges queries → search (→ read) → excerpt choice. A source never sees the
controller: it gets a :class:`SourceSetup` (the task, the request stage's
record) when created, and node results when collecting. Its limits are
declared on it (:class:`SourceLimits`) and applied by the evidence stage.

Adding a source kind is one module with a class like this and one
:func:`~.registry.register_source` call (see ``docs/extending.md``)::

    class NotesSource:
        source_type = "notes"
        limits = SourceLimits(records_per_query=3)

        def __init__(self, setup: SourceSetup) -> None:
            self.setup = setup

        def plan(self, queries):
            ...   # a Graph of RETRIEVAL.SEARCH / MEMORY.SEARCH / your own nodes

        def collect(self, queries, results):
            ...   # SourceHits(passages=[...], hits=n)

    register_source(SourceSpec(kind="notes", source_type="notes", prefix="note", create=NotesSource))
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from ....runtime import Graph, NodeResult
from ....worker.infer.extractive import asks_a_question
from ..config import MAX_EXCERPTS_PER_GROUP
from ..records import Passage, RequestRecord
from ..types import FailedSource, QueryRecord, ResearchRequest

if TYPE_CHECKING:
    from ..taskdir import ResearchTask

__all__ = [
    "ResearchSource",
    "SourceHits",
    "SourceLimits",
    "SourceSetup",
    "constant_input",
    "extracted_sha256",
    "failed_source",
    "retrieval_candidates",
    "save_file_snapshot",
]

#: The most excerpts the model may choose from one source in one task (for a question; see
#: :meth:`SourceLimits.excerpts_for`). Six keeps the brief readable (three queries x two excerpts) and the model's
#: task small; the seed sets no per-task number.
DEFAULT_EXCERPTS_PER_SOURCE: Final = MAX_EXCERPTS_PER_GROUP


@dataclass(frozen=True, slots=True)
class SourceLimits:
    """A source's declared limits, applied by the evidence stage (seed 004's numbers for the built-ins).

    ``records_per_query``: hits kept per query (documents and external knowledge: 3; internal
    knowledge: 1 per key). ``excerpts``: excerpts the model may choose from this source in a task.
    ``excerpts_per_passage``: per passage shown. ``passages_per_page``: passages shown (and so
    excerpts) per web page (2). ``pages``: pages read in direct mode (2); ``candidates``: search
    engine candidates considered (5).
    """

    records_per_query: int | None = None
    excerpts: int = DEFAULT_EXCERPTS_PER_SOURCE
    excerpts_per_passage: int = 2
    passages_per_page: int | None = None
    pages: int | None = None
    candidates: int | None = None

    def excerpts_for(self, question: str, passages: int) -> int:
        """The most excerpts the model may choose from ``passages`` shown for ``question``: :attr:`excerpts`, or
        for a claim to check (not a question) one for each passage shown when there are more, and at most
        :attr:`excerpts_per_passage` for each. A question is answered in depth, from the few passages that hold
        the answer; a claim is checked against every abstract shown that bears on it, for or against, and its
        queries show nine (SciFact train, hybrid: a relevant abstract cited 0.816 with six, 0.821 with nine).

        Example::

            SourceLimits().excerpts_for("Vitamin D lowers the risk of falls.", 9)   # 9
            SourceLimits().excerpts_for("How long are backups kept?", 9)            # 6
        """
        budget = self.excerpts if asks_a_question(question) else max(self.excerpts, passages)
        return min(budget, self.excerpts_per_passage * passages)


@dataclass(frozen=True, slots=True)
class SourceSetup:
    """What a source is created with: the task (request, directory, snapshots) and the request stage."""

    task: ResearchTask
    request_record: RequestRecord

    @property
    def request(self) -> ResearchRequest:
        return self.task.request

    def save_snapshot(self, raw: bytes, extracted: str | None = None) -> str:
        """Store ``raw`` (and a page's extracted text) in the task's snapshots; returns the SHA-256."""
        return self.task.save_snapshot(raw, extracted)


@dataclass(frozen=True, slots=True)
class SourceHits:
    """What one source found for the task's queries.

    ``passages`` are shown to the model (ids unset: the stage names them);
    ``hits`` counts the raw hits before passages were cut; ``failure`` is a
    fault (never an empty result); ``notes`` name limits hit and entries skipped;
    ``searched`` names what was searched where that was a choice (knowledge keys).
    """

    passages: Sequence[Passage] = ()
    hits: int = 0
    failure: FailedSource | None = None
    notes: tuple[str, ...] = ()
    searched: tuple[str, ...] = ()


@runtime_checkable
class ResearchSource(Protocol):
    """One kind of source. ``plan`` returns the graph of its node calls for the queries (``None``
    when there is nothing to search); ``collect`` turns the nodes' results into :class:`SourceHits`."""

    source_type: str
    limits: SourceLimits

    def plan(self, queries: Sequence[QueryRecord]) -> Graph | None: ...

    def collect(self, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]]) -> SourceHits: ...


def extracted_sha256(text: str) -> str:
    """The SHA-256 of the extracted text quotes point into (a web page's, an HTML file's): the evidence's
    ``locator.extractedSha256``, so that ``ditto verify`` notices a changed ``extracted.txt`` anywhere, not only
    inside a quote (the snapshot's folder is named by the raw bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_file_snapshot(save: Callable[..., str], raw: bytes, extracted: str | None) -> str:
    """Save a document's bytes with a documents provider's ``save_snapshot``: ``save(raw)``, or ``save(raw, text)``
    for an HTML file, whose extracted text goes with its bytes (a plain file keeps the one-argument form)."""
    return save(raw) if extracted is None else save(raw, extracted)


def failed_source(source: str, result: NodeResult[Any]) -> FailedSource:
    """The failure of ``source`` from a node result that did not succeed."""
    error = result.error
    return FailedSource(source=source, code=error.code if error else result.status.upper(),
                        message=error.message if error else "the source failed")


def constant_input(value: Any) -> Callable[[Any, Any], Any]:
    """A graph ``input_fn`` that ignores the graph input and returns ``value``."""
    def input_fn(_input: Any, _deps: Any) -> Any:
        return value

    return input_fn


def retrieval_candidates(source_type: str, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]],
                         limit: int | None) -> tuple[list[tuple[QueryRecord, Any]], FailedSource | None]:
    """The ``RETRIEVAL.SEARCH`` candidates of nodes ``q0``, ``q1`` … with their queries, at most ``limit`` each,
    or the first failure (a source behind RETRIEVAL reads its results the same way)."""
    from ....retrieval.worker import retrieval_search_node

    found: list[tuple[QueryRecord, Any]] = []
    for index, query in enumerate(queries):
        result = results[f"q{index}"]
        if result.status != "success":
            return [], failed_source(source_type, result)
        found.extend((query, candidate) for candidate in retrieval_search_node.output_of(result).candidates[:limit])
    return found, None
