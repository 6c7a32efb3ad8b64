"""Documents as a RETRIEVAL target: Markdown, plain-text and HTML files searched by keyword (seed 004).

The provider is registered in the task's RETRIEVAL worker (target
``research-documents``), so the workflow reaches files through
``RETRIEVAL.SEARCH`` like any other source. Each file is read once per run,
its exact bytes saved as a snapshot, and cut into passages that follow the
text (:func:`~ditto.text.passages.cut_passages`: paragraphs whose
sentences run across line breaks, list items, code and man-page blocks, at most
1000 characters; an HTML file is read as its main text, cut as web text is, and
saved with it). A query's words score each passage together with its heading
path (the title and section it sits under); passages without a query word are
never hits.
Each candidate carries the file URI, the snapshot SHA-256, the passage's
character offsets and its line range.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import urlparse
from urllib.request import url2pathname

from ....redaction import printable
from ....runtime import SKIP, Graph, NodeResult, graph
from ....text import TextAnalyzer, score_documents
from ....text.analysis import option_terms
from ....text.files import DEFAULT_LIMITS, DOCUMENT_SUFFIXES, WalkLimits, WalkReport, documents_described
from ....text.passages import cut_passages
from ....worker.infer.extractive import asks_a_question
from ..records import Passage
from ..types import QueryRecord
from .base import (
    SourceHits,
    SourceLimits,
    SourceSetup,
    constant_input,
    extracted_sha256,
    retrieval_candidates,
    save_file_snapshot,
)
from .focus import FOCUS_POOL, ReadPassage, closely_read, documents_to_read, focus_text
from .repeats import passage_words, says_the_same

__all__ = ["DOCUMENTS_TARGET", "DOCUMENT_SUFFIXES", "DocumentPassage", "DocumentSearchProvider", "DocumentsSource",
           "split_passages"]

logger = logging.getLogger(__name__)

#: The RETRIEVAL target name the task registers its documents under.
DOCUMENTS_TARGET: Final = "research-documents"
MAX_FILES: Final = 10_000
MAX_FILE_BYTES: Final = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class DocumentPassage:
    uri: str
    sha256: str
    text: str
    start: int
    end: int
    line_start: int
    line_end: int
    heading: str | None = None
    #: An HTML file's: ``{"extractedSha256"}`` of the main text the offsets point into.
    locator: dict[str, str] | None = None


def split_passages(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, line_start, line_end)`` of each passage of :func:`cut_passages`."""
    return [(span.start, span.end, span.line_start, span.line_end) for span in cut_passages(text)]


_Loaded = TypeVar("_Loaded")


async def load_documents(load: Callable[[], Awaitable[_Loaded]], failed: str) -> _Loaded:
    """Run a documents source's one-time load: its own ``RetrievalError`` passes, anything else is logged
    once with its traceback (``failed`` says what failed) and answered as a backend error, never forwarded."""
    from ....retrieval import RetrievalError

    try:
        return await load()
    except RetrievalError:
        raise
    except Exception:
        logger.exception(failed)
        raise RetrievalError("RETRIEVAL_BACKEND_ERROR", "the documents could not be read") from None


def document_query(input: Any, context: Any) -> tuple[Any, str]:
    """A documents search's checked request and its query text (text only, not cancelled). A filter is over the
    file's ``path`` (the close reading's ``{"path": {"in": [...]}}``, see :mod:`.focus`); each provider applies it."""
    from ....retrieval import RetrievalError, RetrievalSearchInput, parse_search_input

    request = input if isinstance(input, RetrievalSearchInput) else parse_search_input(input)
    signal = getattr(context, "signal", None)
    if signal is not None and signal.aborted:
        raise RetrievalError.from_signal(signal.reason)
    text = request.query.content
    if not isinstance(text, str):
        raise RetrievalError("RETRIEVAL_INVALID_INPUT", "document search needs a text query")
    if request.filter and set(request.filter) != {"path"}:
        raise RetrievalError("RETRIEVAL_INVALID_INPUT", "document search filters only by path")
    return request, text


class DocumentSearchProvider:
    """A ``RetrievalSearchProvider`` over files and folders (recursive, ignore-globs).

    ``save_snapshot(raw)`` stores the bytes of a file that gave a hit and returns their SHA-256; for an HTML
    file it is called as ``save_snapshot(raw, text)``, with the main text its quotes point into.
    """

    def __init__(self, paths: Sequence[Path], *, ignore: Sequence[str] = (),
                 save_snapshot: Callable[..., str], limits: WalkLimits = DEFAULT_LIMITS,
                 notes_key: Path | None = None) -> None:
        self._paths = [Path(path) for path in paths]
        #: The raw bytes of each file read, by SHA-256: a file's snapshot is saved when it first gives a hit,
        #: so a task keeps what it read as evidence candidates, not a copy of the whole folder.
        self._raw: dict[str, bytes] = {}
        #: An HTML file's main text, by the SHA-256 of its bytes: saved with them, quoted from.
        self._extracted: dict[str, str] = {}
        self._saved: set[str] = set()
        self._notes_key = notes_key
        self._ignore = tuple(ignore)
        self._save_snapshot = save_snapshot
        self._analyzer = TextAnalyzer(cjk="unigram", digits=True)  # no jieba: CJK characters are terms one by one
        self._corpus: list[DocumentPassage] | None = None
        self._terms: list[list[str]] = []
        self._lock = asyncio.Lock()
        #: What the last read skipped or stopped at; the workflow copies ``report.notes`` into the coverage.
        self.report = WalkReport()
        self.limits = limits

    def _ignored(self, path: Path, root: Path) -> bool:
        relative = path.relative_to(root).as_posix()
        return any(fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(path.name, pattern)
                   for pattern in self._ignore)

    def _load(self) -> list[DocumentPassage]:
        from ....text.files import read_documents

        self.report = WalkReport()
        corpus: list[DocumentPassage] = []
        from ....retrieval.index.sources import document_suffixes, document_text
        from ....worker.interaction.extractor import html_document_reader

        html = html_document_reader()
        for document in read_documents(self._paths, ignore=self._ignore, suffixes=document_suffixes(html is not None),
                                       limits=self.limits, report=self.report):
            read = document_text(document.path, document.raw, self.report, html=html)
            if read is None:
                continue
            text = read.text
            digest = hashlib.sha256(document.raw).hexdigest()
            self._raw[digest] = document.raw
            locator = None
            if read.extracted:
                self._extracted[digest] = text
                locator = {"extractedSha256": extracted_sha256(text)}
            uri = document.path.resolve().as_uri()
            for span in cut_passages(text, layout=read.layout):  # a long line is cut into passages, never truncated
                if len(corpus) >= self.limits.max_passages:
                    self.report.note(f"passage cap reached: only the first {self.limits.max_passages} passages "
                                     f"are searched; the rest of {printable(document.path)} and later files "
                                     "are not", cap=True)
                    return corpus
                corpus.append(DocumentPassage(uri, digest, text[span.start:span.end], span.start, span.end,
                                              span.line_start, span.line_end, span.heading, locator))
        self.report.finish()
        if self.report.roots_usable and not self._raw:
            names = ", ".join(printable(path) for path in self._paths[:3])
            self.report.note(f"no readable document was found in {names} "
                             f"({documents_described(self.limits.max_file_bytes)})", cap=True)
        if not self.report.roots_usable:
            from ....retrieval import RetrievalError

            missing = [path for path in self._paths if not path.exists()]
            named = f" ({printable(missing[0])} does not exist)" if missing else ""
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", f"no document path exists or may be read{named}")
        return corpus

    def _snapshot(self, digest: str) -> None:
        if digest not in self._saved:
            save_file_snapshot(self._save_snapshot, self._raw[digest], self._extracted.get(digest))
            self._saved.add(digest)

    async def search(self, input: Any, context: Any = None) -> Any:
        from ....retrieval import (
            RetrievalCandidate,
            RetrievalCandidateSource,
            RetrievalError,
            RetrievalSearchOutput,
        )

        request, text = document_query(input, context)
        async with self._lock:
            if self._corpus is None:
                self._corpus = await load_documents(lambda: asyncio.to_thread(self._load),
                                                    "reading the documents failed")
                texts = [f"{passage.heading or ''}\n{passage.text}" for passage in self._corpus]
                self._terms = [terms + option_terms(text)
                               for terms, text in zip(self._analyzer.analyze_many(texts), texts, strict=True)]
                if self._notes_key is not None:
                    WALK_NOTES[self._notes_key] = tuple(self.report.notes)
        corpus = self._corpus
        query_terms = self._analyzer.analyze(text) + option_terms(text)
        scores = score_documents(query_terms, self._terms, coordinate=True)
        ranked = sorted((index for index, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
        if request.filter:
            from ....retrieval.filters import compile_filter

            keep = compile_filter(request.filter)
            if keep is not None:
                paths = {passage.uri: _uri_path(passage.uri) for passage in (corpus[index] for index in ranked)}
                ranked = [index for index in ranked if keep({"path": paths[corpus[index].uri]})]
        defaults = getattr(context, "defaults", None)
        limit = request.limit or getattr(defaults, "search_limit", None) or 10
        candidates = []
        for index in ranked[:limit]:
            passage = corpus[index]
            try:
                self._snapshot(passage.sha256)
            except Exception:
                logger.exception("saving a document snapshot failed")
                raise RetrievalError("RETRIEVAL_BACKEND_ERROR", "a document snapshot could not be saved") from None
            ref = f"{passage.uri}#L{passage.line_start}-L{passage.line_end}"
            candidates.append(RetrievalCandidate(
                id=f"{passage.sha256[:16]}:{passage.start}", content=passage.text, score=scores[index],
                source=RetrievalCandidateSource(target=request.target.name, ref=ref),
                metadata={"uri": passage.uri, "snapshotSha256": passage.sha256, "start": passage.start,
                          "end": passage.end, "lineStart": passage.line_start, "lineEnd": passage.line_end,
                          "heading": passage.heading, "locator": passage.locator}))
        return RetrievalSearchOutput(candidates=tuple(candidates), strategy=request.strategy, target=request.target)


#: The documents source's last node: the close reading of the documents the question names (:mod:`.focus`).
_FOCUS: Final = "focus"


def _uri_path(uri: str) -> str:
    """The local path of a ``file:`` URI (what a ``path`` filter compares)."""
    return url2pathname(urlparse(uri).path)


def _file_path(candidate: Any) -> str | None:
    """The local path of a file candidate (``None`` for a JSONL/BEIR record, which is no file of its own)."""
    meta = candidate.metadata or {}
    uri = meta.get("uri")
    if "recordId" in (meta.get("locator") or {}) or not isinstance(uri, str) or not uri.startswith("file:"):
        return None
    return _uri_path(uri)


def _shown(queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]], per_query: int, *,
           fresh: bool) -> list[tuple[QueryRecord, Any]]:
    """``(query, candidate)`` of what each query shows, in query then rank order: its first ``per_query``
    candidates; when ``fresh``, its first ``per_query`` that no earlier query shows, and those of its first
    ``per_query`` that an earlier one shows (it found them too).

    A claim to check is shown fresh candidates: its second and third queries (its halves) mostly find the
    abstracts its first found, and their next ones are new evidence (SciFact train, hybrid: a relevant abstract
    shown 0.838 → 0.847, cited 0.808 → 0.813). A question is not: it is answered in depth, from the few
    passages its words rank first, and more passages only distract (the real-documents questions: 2 more
    answered, 8 fewer)."""
    from ....retrieval.worker import retrieval_search_node

    taken: set[tuple[Any, Any]] = set()
    found: list[tuple[QueryRecord, Any]] = []
    for index, query in enumerate(queries):
        result = results.get(f"q{index}")
        if result is None or result.status != "success":
            continue
        new = 0
        for rank, candidate in enumerate(retrieval_search_node.output_of(result).candidates):
            meta = candidate.metadata or {}
            place = (meta.get("uri"), meta.get("start"))
            if not fresh:
                if rank >= per_query:
                    break
                found.append((query, candidate))
            elif place in taken:
                if rank < per_query:
                    found.append((query, candidate))
            elif new < per_query:
                taken.add(place)
                new += 1
                found.append((query, candidate))
            else:
                break
    return found


def _found_files(shown: Sequence[tuple[QueryRecord, Any]]) -> list[tuple[QueryRecord, str]]:
    """``(query, file path)`` of each file candidate ``shown`` (see :func:`_shown`), in order."""
    return [(query, path) for query, candidate in shown if (path := _file_path(candidate)) is not None]


#: What the documents walk of each task (by task directory) skipped or stopped at, for the brief's coverage.
#: The provider and the source of one task live in one process; the walk happens on the first search.
WALK_NOTES: dict[Path, tuple[str, ...]] = {}


class DocumentsSource:
    """The ``document`` source: ``RETRIEVAL.SEARCH`` on the task's documents target, one node per query.

    At most 3 passages per query (seed 004); each candidate's metadata carries
    the file URI, the snapshot SHA-256 and the passage's offsets (and, for a record of
    a prepared index, its ``locator``).
    """

    source_type = "document"
    limits = SourceLimits(records_per_query=3)

    def __init__(self, setup: SourceSetup) -> None:
        self.setup = setup
        self._per_query = self.limits.records_per_query or 1
        self._fresh = not asks_a_question(setup.request.question)

    def plan(self, queries: Sequence[QueryRecord]) -> Graph | None:
        from ....retrieval.worker import retrieval_search_node

        plan = graph("research-document")
        # A query of a claim may skip what earlier ones show (see _shown): it asks for as many more as they show.
        limit = self._per_query * (len(queries) if self._fresh else 1)
        for index, query in enumerate(queries):
            plan = plan.node(f"q{index}", retrieval_search_node.type, (), constant_input({
                "query": {"content": query.text}, "target": {"name": DOCUMENTS_TARGET}, "limit": limit}))
        searches = tuple(f"q{index}" for index in range(len(queries)))
        return plan.node(_FOCUS, retrieval_search_node.type, searches, self._focus_input(queries))

    def _focus_input(self, queries: Sequence[QueryRecord]) -> Callable[[Any, Mapping[str, NodeResult[Any]]], Any]:
        """The close reading's search (see :mod:`.focus`): the question inside the documents it names among those
        the queries found (:func:`.focus.documents_to_read`), or :data:`SKIP` when there are none."""
        question = self.setup.request.question

        def input_fn(_input: Any, deps: Mapping[str, NodeResult[Any]]) -> Any:
            paths = [path for _, path in _found_files(_shown(queries, deps, self._per_query, fresh=self._fresh))]
            reading = documents_to_read(question, paths)
            if not reading:
                return SKIP
            return {"query": {"content": focus_text(question)}, "target": {"name": DOCUMENTS_TARGET},
                    "limit": FOCUS_POOL * len(reading), "filter": {"path": {"in": reading}}}

        return input_fn

    def collect(self, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]]) -> SourceHits:
        from ....retrieval.worker import retrieval_search_node

        _, failure = retrieval_candidates(self.source_type, queries, results, None)
        if failure is not None:
            return SourceHits(failure=failure)
        found = _shown(queries, results, self._per_query, fresh=self._fresh)
        focus = results.get(_FOCUS)
        if focus is not None and focus.status != "success":
            # The queries' hits stand without it; the worker logged the cause.
            logger.warning("documents: the close reading of the named documents failed (%s)",
                           focus.error.code if focus.error else focus.status)
        elif focus is not None:
            # A passage of the close reading is found by the query that found its document, and is shown first:
            # the question is about its document, and the whole question chose it (the model reads in order).
            finder = {path: query for query, path in reversed(_found_files(found))}
            pool = [(path, candidate) for candidate in retrieval_search_node.output_of(focus).candidates
                    if (path := _file_path(candidate)) is not None and path in finder]
            read = [ReadPassage(document=path, text=candidate.content,
                                context=(candidate.metadata or {}).get("heading")) for path, candidate in pool]
            shown = closely_read(self.setup.request.question, read)
            found[:0] = [(finder[pool[index][0]], pool[index][1]) for index in shown]
        passages: list[Passage] = []
        kept: list[tuple[tuple[Any, Any], frozenset[str]]] = []  # (where, words) of each passage kept
        for query, candidate in found:
            meta = candidate.metadata or {}
            where, words = (meta.get("uri"), meta.get("start")), passage_words(candidate.content)
            if any(place != where and says_the_same(words, earlier) for place, earlier in kept):
                continue  # what the close reading or an earlier query showed, in another file (a page's source)
            kept.append((where, words))
            passages.append(Passage(id="", source_type=self.source_type, uri=meta["uri"],
                                    snapshot_sha256=meta["snapshotSha256"], text=candidate.content,
                                    start=meta["start"], end=meta["end"], query=query.text,
                                    found_by=(query.text,), context=meta.get("heading"),
                                    locator=meta.get("locator")))
        return SourceHits(passages=passages, hits=len(passages),
                          notes=WALK_NOTES.get(self.setup.task.directory, ()))
