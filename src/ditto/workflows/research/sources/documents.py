"""Documents as a RETRIEVAL target: Markdown and plain-text files searched by keyword (seed 004).

The provider is registered in the task's RETRIEVAL worker (target
``research-documents``), so the workflow reaches files through
``RETRIEVAL.SEARCH`` like any other source. Each file is read once per run,
its exact bytes saved as a snapshot, and cut into passages that follow the
text (:func:`~ditto.workflows.research.passages.cut_passages`: paragraphs whose
sentences run across line breaks, list items, code and man-page blocks, at most
1000 characters). A query's words score each passage together with its heading
path (the title and section it sits under); passages without a query word are
never hits.
Each candidate carries the file URI, the snapshot SHA-256, the passage's
character offsets and its line range.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ....text import TextAnalyzer, score_documents
from ..passages import cut_passages

__all__ = ["DOCUMENTS_TARGET", "DOCUMENT_SUFFIXES", "DocumentPassage", "DocumentSearchProvider", "split_passages"]

logger = logging.getLogger(__name__)

#: The RETRIEVAL target name the task registers its documents under.
DOCUMENTS_TARGET: Final = "research-documents"
DOCUMENT_SUFFIXES: Final = frozenset({".md", ".markdown", ".txt", ".text", ".rst"})
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


def split_passages(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, line_start, line_end)`` of each passage of :func:`cut_passages`."""
    return [(span.start, span.end, span.line_start, span.line_end) for span in cut_passages(text)]


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
            for span in cut_passages(text):
                corpus.append(DocumentPassage(uri, digest, text[span.start:span.end], span.start, span.end,
                                              span.line_start, span.line_end, span.heading))
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
        text = request.query.content
        if not isinstance(text, str):
            raise RetrievalError("RETRIEVAL_INVALID_INPUT", "document search needs a text query")
        async with self._lock:
            if self._corpus is None:
                self._corpus = await asyncio.to_thread(self._load)
                self._terms = self._analyzer.analyze_many([f"{passage.heading or ''}\n{passage.text}"
                                                           for passage in self._corpus])
        corpus = self._corpus
        query_terms = self._analyzer.analyze(text)
        scores = score_documents(query_terms, self._terms)
        ranked = sorted((index for index, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
        limit = request.limit or 10
        candidates = []
        for index in ranked[:limit]:
            passage = corpus[index]
            ref = f"{passage.uri}#L{passage.line_start}-L{passage.line_end}"
            candidates.append(RetrievalCandidate(
                id=f"{passage.sha256[:16]}:{passage.start}", content=passage.text, score=scores[index],
                source=RetrievalCandidateSource(target=request.target.name, ref=ref),
                metadata={"uri": passage.uri, "snapshotSha256": passage.sha256, "start": passage.start,
                          "end": passage.end, "lineStart": passage.line_start, "lineEnd": passage.line_end,
                          "heading": passage.heading}))
        return RetrievalSearchOutput(candidates=tuple(candidates), strategy=request.strategy, target=request.target)
