"""Documents as a RETRIEVAL target: Markdown and plain-text files searched by keyword (seed 004).

The provider is registered in the task's RETRIEVAL worker (target
``research-documents``), so the workflow reaches files through
``RETRIEVAL.SEARCH`` like any other source. Each file is read once per run,
its exact bytes saved as a snapshot, and split into passages: paragraphs
(runs of non-blank lines), long ones cut at line boundaries. A query's words
score the passages with BM25; passages without a query word are never hits.
Each candidate carries the file URI, the snapshot SHA-256, the passage's
character offsets and its line range.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ....redaction import printable
from ....runtime import Graph, NodeResult, graph
from ....text import TextAnalyzer, score_documents
from ..files import DEFAULT_LIMITS, WalkLimits, WalkReport
from ..records import Passage
from ..types import QueryRecord
from .base import SourceHits, SourceLimits, SourceSetup, constant_input, failed_source

__all__ = ["DOCUMENTS_TARGET", "DOCUMENT_SUFFIXES", "DocumentPassage", "DocumentSearchProvider", "DocumentsSource",
           "split_passages"]

logger = logging.getLogger(__name__)

#: The RETRIEVAL target name the task registers its documents under.
DOCUMENTS_TARGET: Final = "research-documents"
DOCUMENT_SUFFIXES: Final = frozenset({".md", ".markdown", ".txt", ".text", ".rst"})
MAX_FILES: Final = 10_000
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
MAX_PASSAGE_CHARS: Final = 4000


@dataclass(frozen=True, slots=True)
class DocumentPassage:
    uri: str
    sha256: str
    text: str
    start: int
    end: int
    line_start: int
    line_end: int


def split_passages(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, line_start, line_end)`` of each paragraph; long ones cut at line ends."""
    passages: list[tuple[int, int, int, int]] = []
    lines = text.split("\n")
    offset = 0
    block: list[tuple[int, int, int]] = []  # (start, end, line number) of each line in the open block

    def close() -> None:
        while block:
            first = block[0]
            size_end = first[0] + MAX_PASSAGE_CHARS
            taken = 1
            while taken < len(block) and block[taken][1] <= size_end:
                taken += 1
            chunk = block[:taken]
            del block[:taken]
            start, end = chunk[0][0], min(chunk[-1][1], first[0] + MAX_PASSAGE_CHARS)
            passages.append((start, end, chunk[0][2], chunk[-1][2]))

    for number, line in enumerate(lines, start=1):
        stripped_end = offset + len(line.rstrip("\r"))
        if line.strip():
            block.append((offset + (len(line) - len(line.lstrip())), stripped_end, number))
        else:
            close()
        offset += len(line) + 1
    close()
    return passages


class DocumentSearchProvider:
    """A ``RetrievalSearchProvider`` over files and folders (recursive, ignore-globs)."""

    def __init__(self, paths: Sequence[Path], *, ignore: Sequence[str] = (),
                 save_snapshot: Callable[[bytes], str], limits: WalkLimits = DEFAULT_LIMITS,
                 notes_key: Path | None = None) -> None:
        self._paths = [Path(path) for path in paths]
        #: The raw bytes of each file read, by SHA-256: a file's snapshot is saved when it first gives a hit,
        #: so a task keeps what it read as evidence candidates, not a copy of the whole folder.
        self._raw: dict[str, bytes] = {}
        self._saved: set[str] = set()
        self._notes_key = notes_key
        self._ignore = tuple(ignore)
        self._save_snapshot = save_snapshot
        self._analyzer = TextAnalyzer(cjk="unigram")  # no jieba: CJK characters are terms one by one
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

    def _files(self) -> list[Path]:
        """The document files, walked by :mod:`..files` (no links followed, bounded, every skip noted)."""
        from ..files import walk_documents

        return list(walk_documents(self._paths, ignore=self._ignore, suffixes=DOCUMENT_SUFFIXES,
                                   limits=self.limits, report=self.report))

    def _load(self) -> list[DocumentPassage]:
        from ..files import read_documents

        self.report = WalkReport()
        corpus: list[DocumentPassage] = []
        for document in read_documents(self._paths, ignore=self._ignore, suffixes=DOCUMENT_SUFFIXES,
                                       limits=self.limits, report=self.report):
            try:
                text = document.raw.decode("utf-8")
            except UnicodeDecodeError:
                self.report.note(f"{printable(document.path)} skipped: not UTF-8")
                continue
            digest = hashlib.sha256(document.raw).hexdigest()
            self._raw[digest] = document.raw
            uri = document.path.resolve().as_uri()
            if any(len(line) > MAX_PASSAGE_CHARS for line in text.split("\n")):  # linear; a regex is not
                self.report.note(f"{printable(document.path)}: lines longer than {MAX_PASSAGE_CHARS} characters "
                                 f"are searched only up to their first {MAX_PASSAGE_CHARS} characters")
            for start, end, line_start, line_end in split_passages(text):
                if len(corpus) >= self.limits.max_passages:
                    self.report.note(f"passage cap reached: only the first {self.limits.max_passages} passages "
                                     f"are searched; the rest of {printable(document.path)} and later files "
                                     "are not", cap=True)
                    return corpus
                corpus.append(DocumentPassage(uri, digest, text[start:end], start, end, line_start, line_end))
        if not self.report.roots_usable:
            from ....retrieval import RetrievalError

            missing = [path for path in self._paths if not path.exists()]
            named = f" ({printable(missing[0])} does not exist)" if missing else ""
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", f"no document path exists or may be read{named}")
        return corpus

    def _snapshot(self, digest: str) -> None:
        if digest not in self._saved:
            self._save_snapshot(self._raw[digest])
            self._saved.add(digest)

    async def search(self, input: Any, context: Any = None) -> Any:
        from ....retrieval import (
            RetrievalCandidate,
            RetrievalCandidateSource,
            RetrievalError,
            RetrievalSearchInput,
            RetrievalSearchOutput,
            parse_search_input,
        )

        request = input if isinstance(input, RetrievalSearchInput) else parse_search_input(input)
        signal = getattr(context, "signal", None)
        if signal is not None and signal.aborted:
            raise RetrievalError.from_signal(signal.reason)
        text = request.query.content
        if not isinstance(text, str):
            raise RetrievalError("RETRIEVAL_INVALID_INPUT", "document search needs a text query")
        if request.filter:
            raise RetrievalError("RETRIEVAL_INVALID_INPUT", "document search does not support filters")
        async with self._lock:
            if self._corpus is None:
                try:
                    self._corpus = await asyncio.to_thread(self._load)
                except RetrievalError:
                    raise
                except Exception:
                    logger.exception("reading the documents failed")
                    raise RetrievalError("RETRIEVAL_BACKEND_ERROR", "the documents could not be read") from None
                self._terms = self._analyzer.analyze_many([passage.text for passage in self._corpus])
                if self._notes_key is not None:
                    WALK_NOTES[self._notes_key] = tuple(self.report.notes)
        corpus = self._corpus
        query_terms = self._analyzer.analyze(text)
        scores = score_documents(query_terms, self._terms)
        ranked = sorted((index for index, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
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
                          "end": passage.end, "lineStart": passage.line_start, "lineEnd": passage.line_end}))
        return RetrievalSearchOutput(candidates=tuple(candidates), strategy=request.strategy, target=request.target)


#: What the documents walk of each task (by task directory) skipped or stopped at, for the brief's coverage.
#: The provider and the source of one task live in one process; the walk happens on the first search.
WALK_NOTES: dict[Path, tuple[str, ...]] = {}


class DocumentsSource:
    """The ``document`` source: ``RETRIEVAL.SEARCH`` on the task's documents target, one node per query.

    At most 3 passages per query (seed 004); each candidate's metadata carries
    the file URI, the snapshot SHA-256 and the passage's offsets.
    """

    source_type = "document"
    limits = SourceLimits(records_per_query=3)

    def __init__(self, setup: SourceSetup) -> None:
        self.setup = setup

    def plan(self, queries: Sequence[QueryRecord]) -> Graph | None:
        from ....retrieval.worker import retrieval_search_node

        plan = graph("research-document")
        for index, query in enumerate(queries):
            plan = plan.node(f"q{index}", retrieval_search_node.type, (), constant_input({
                "query": {"content": query.text}, "target": {"name": DOCUMENTS_TARGET},
                "limit": self.limits.records_per_query}))
        return plan

    def collect(self, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]]) -> SourceHits:
        from ....retrieval.worker import retrieval_search_node

        passages: list[Passage] = []
        for index, query in enumerate(queries):
            result = results[f"q{index}"]
            if result.status != "success":
                return SourceHits(failure=failed_source(self.source_type, result))
            output = retrieval_search_node.output_of(result)
            for candidate in output.candidates[:self.limits.records_per_query]:
                meta = candidate.metadata or {}
                passages.append(Passage(id="", source_type=self.source_type, uri=meta["uri"],
                                        snapshot_sha256=meta["snapshotSha256"], text=candidate.content,
                                        start=meta["start"], end=meta["end"], query=query.text,
                                        found_by=(query.text,)))
        return SourceHits(passages=passages, hits=len(passages),
                          notes=WALK_NOTES.get(self.setup.task.directory, ()))
