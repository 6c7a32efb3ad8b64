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
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ....runtime import Graph, NodeResult, graph
from ....text import TextAnalyzer, score_documents
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
                 save_snapshot: Callable[[bytes], str]) -> None:
        self._paths = [Path(path) for path in paths]
        self._ignore = tuple(ignore)
        self._save_snapshot = save_snapshot
        self._analyzer = TextAnalyzer(cjk="unigram")  # no jieba: CJK characters are terms one by one
        self._corpus: list[DocumentPassage] | None = None
        self._terms: list[list[str]] = []
        self._lock = asyncio.Lock()

    def _ignored(self, path: Path, root: Path) -> bool:
        relative = path.relative_to(root).as_posix()
        return any(fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(path.name, pattern)
                   for pattern in self._ignore)

    def _files(self) -> list[Path]:
        files: list[Path] = []
        for root in self._paths:
            if root.is_file():
                files.append(root)
            elif root.is_dir():
                for path in sorted(root.rglob("*")):
                    if len(files) >= MAX_FILES:
                        break
                    if (path.is_file() and path.suffix.lower() in DOCUMENT_SUFFIXES
                            and not any(part.startswith(".") for part in path.relative_to(root).parts)
                            and not self._ignored(path, root)):
                        files.append(path)
            else:
                from ....retrieval import RetrievalError

                raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", "a document path does not exist")
        return files

    def _load(self) -> list[DocumentPassage]:
        corpus: list[DocumentPassage] = []
        for path in self._files():
            try:
                with path.open("rb") as handle:  # bounded: a huge file is skipped without reading it all
                    raw = handle.read(MAX_FILE_BYTES + 1)
            except OSError:
                from ....retrieval import RetrievalError

                logger.exception("reading a document failed")
                raise RetrievalError("RETRIEVAL_BACKEND_ERROR", "a document could not be read") from None
            if len(raw) > MAX_FILE_BYTES:
                logger.warning("document %s skipped: larger than %d bytes", path, MAX_FILE_BYTES)
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                logger.warning("document %s skipped: not UTF-8", path)
                continue
            digest = self._save_snapshot(raw)
            uri = path.resolve().as_uri()
            for start, end, line_start, line_end in split_passages(text):
                corpus.append(DocumentPassage(uri, digest, text[start:end], start, end, line_start, line_end))
        return corpus

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
        corpus = self._corpus
        query_terms = self._analyzer.analyze(text)
        scores = score_documents(query_terms, self._terms)
        ranked = sorted((index for index, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
        defaults = getattr(context, "defaults", None)
        limit = request.limit or getattr(defaults, "search_limit", None) or 10
        candidates = []
        for index in ranked[:limit]:
            passage = corpus[index]
            ref = f"{passage.uri}#L{passage.line_start}-L{passage.line_end}"
            candidates.append(RetrievalCandidate(
                id=f"{passage.sha256[:16]}:{passage.start}", content=passage.text, score=scores[index],
                source=RetrievalCandidateSource(target=request.target.name, ref=ref),
                metadata={"uri": passage.uri, "snapshotSha256": passage.sha256, "start": passage.start,
                          "end": passage.end, "lineStart": passage.line_start, "lineEnd": passage.line_end}))
        return RetrievalSearchOutput(candidates=tuple(candidates), strategy=request.strategy, target=request.target)


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
        return SourceHits(passages=passages, hits=len(passages))
