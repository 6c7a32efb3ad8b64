"""``create_text_search_provider``: keyword and BM25 search over the embedded index (RET-6).

Strategies:

* ``bm25`` — classic disjunctive BM25 (Lucene variant): any document sharing a term
  with the query is a candidate, ranked by BM25.
* ``keyword`` — conjunctive: only documents containing *every* query term, ranked by
  BM25. Use it when a query is a set of required keywords.

Candidates carry the document ``id``, its ``content``, the BM25 ``score``, ``source``
``{target: <request target name>, ref: <document ref or id>}`` and the document's
``metadata``. ``filter`` supports the shared filter language (see
:mod:`ditto.retrieval.engines.filters`); anything else fails with
``RETRIEVAL_INVALID_INPUT``. ``query.content`` must be a string. The provider reads no
per-request ``options``.

Searching a small index costs less than a thread hop, so it runs on the event loop;
indexes with at least ``offload_threshold`` documents search in a worker thread. The
lazy rebuild after changes always runs in a thread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import Field, ValidationError

from ...contracts import DittoModel
from ...errors import InvalidArgumentError, describe_validation_error
from ...text.analysis import TextAnalyzer
from .._results import trusted_candidate, trusted_output, trusted_source
from ..config import context_limit
from ..engines.bm25 import BM25Index, MatchMode, ProgressCallback, TextDocument
from ..engines.filters import parse_filter
from ..errors import STRATEGY_UNSUPPORTED, RetrievalError
from ..types import (
    RetrievalCandidateSource,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
)
from .base import begin_search, check_signal, query_text

__all__ = ["TextSearchOptions", "TextSearchProvider", "create_text_search_provider"]

TextStrategy = Literal["bm25", "keyword"]
_MODES: dict[str, MatchMode] = {"bm25": "any", "keyword": "all"}
Progress = bool | ProgressCallback | None
_SOURCE_CACHE_LIMIT = 200_000


class TextSearchOptions(DittoModel):
    """Constructor options of the text provider (analysis and BM25 parameters)."""

    default_strategy: TextStrategy = "bm25"
    k1: float = Field(default=1.2, ge=0, allow_inf_nan=False)
    b: float = Field(default=0.75, ge=0, le=1)
    stopwords: Literal["english", "none"] | tuple[str, ...] = "english"
    stemmer: str | None = "english"
    cjk: bool = True
    offload_threshold: int = Field(default=50_000, ge=1)
    #: Rank with BM25's coordination factor (see :meth:`BM25Index.search`); the hybrid's tuning asks for it.
    coordinate: bool = False


class TextSearchProvider:
    """A ``RetrievalSearchProvider`` over a :class:`BM25Index` it owns (or was given)."""

    strategies: tuple[str, ...] = tuple(_MODES)

    def __init__(self, index: BM25Index, options: TextSearchOptions | None = None) -> None:
        self._index = index
        self._options = options if options is not None else TextSearchOptions()
        self._default_mode = _MODES[self._options.default_strategy]
        self._offload = self._options.offload_threshold
        # Sources are immutable, so one object per (target, id, ref) is shared by all results.
        self._sources: dict[tuple[str, str, str | None], RetrievalCandidateSource] = {}

    @property
    def index(self) -> BM25Index:
        return self._index

    @property
    def options(self) -> TextSearchOptions:
        return self._options

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        request, signal = begin_search(input, context)
        query = query_text(request, "The text provider")
        strategy, mode = self._strategy(request)
        conditions = parse_filter(request.filter) if request.filter else ()
        limit = context_limit(request, context)
        index = self._index
        if index.dirty:
            await asyncio.to_thread(index.refresh)
            check_signal(signal)
        if len(index) >= self._offload:
            hits = await asyncio.to_thread(index.search, query, limit=limit, mode=mode, conditions=conditions,
                                           coordinate=self._options.coordinate)
            check_signal(signal)
        else:
            hits = index.search(query, limit=limit, mode=mode, conditions=conditions,
                                coordinate=self._options.coordinate)
        target = request.target.name
        sources = self._sources
        if len(sources) > _SOURCE_CACHE_LIMIT:
            sources.clear()
        candidates = []
        for document, score in hits:
            key = (target, document.id, document.ref)
            source = sources.get(key)
            if source is None:
                source = sources[key] = trusted_source(target, document.ref or document.id)
            candidates.append(trusted_candidate(document.id, document.content, score, source, document.metadata))
        return trusted_output(tuple(candidates), request.target, strategy)

    async def score_ids(self, input: RetrievalSearchInput | Mapping[str, Any], ids: Sequence[str],
                        context: RetrievalExecutionContext | None = None) -> list[float | None]:
        """The BM25 score :meth:`search` gives each of ``ids`` (``None``: not a hit, filtered out or unknown)."""
        request, signal = begin_search(input, context)
        query = query_text(request, "The text provider")
        _, mode = self._strategy(request)
        conditions = parse_filter(request.filter) if request.filter else ()
        index = self._index
        if index.dirty:
            await asyncio.to_thread(index.refresh)
            check_signal(signal)
        wanted = list(ids)
        if len(index) >= self._offload:
            scores = await asyncio.to_thread(index.score, query, wanted, mode=mode, conditions=conditions,
                                             coordinate=self._options.coordinate)
            check_signal(signal)
            return scores
        return index.score(query, wanted, mode=mode, conditions=conditions, coordinate=self._options.coordinate)

    def coordinated(self) -> TextSearchProvider:
        """This provider over the same index, ranking with the coordination factor (the hybrid's text branch)."""
        if self._options.coordinate:
            return self
        return TextSearchProvider(self._index, self._options.model_copy(update={"coordinate": True}))

    def _strategy(self, request: RetrievalSearchInput) -> tuple[str, MatchMode]:
        strategy = request.strategy
        if strategy is None:
            return self._options.default_strategy, self._default_mode
        mode = _MODES.get(strategy)
        if mode is None:
            raise RetrievalError(STRATEGY_UNSUPPORTED, "The text provider supports bm25 and keyword")
        return strategy, mode

    async def add_documents(self, documents: Iterable[TextDocument | Mapping[str, Any]], *,
                            progress: Progress = None) -> int:
        """Index (or replace) documents in a worker thread; ``progress`` as in the factory."""
        batch = list(documents)
        with _progress_callback(progress, len(batch)) as callback:
            return await asyncio.to_thread(self._index.add, batch, progress=callback)

    async def remove_documents(self, document_ids: Iterable[str]) -> int:
        """Remove documents by id; the matrix is rebuilt lazily before the next search."""
        return self._index.remove(list(document_ids))

    async def save(self, directory: str | os.PathLike[str]) -> None:
        await asyncio.to_thread(self._index.save, directory)

    @classmethod
    async def load(cls, directory: str | os.PathLike[str],
                   options: TextSearchOptions | Mapping[str, Any] | None = None) -> TextSearchProvider:
        """Open an index saved with :meth:`save` (its analysis and BM25 settings come with it)."""
        index = await asyncio.to_thread(BM25Index.load, directory)
        return create_text_search_provider(options=options, index=index)


def create_text_search_provider(documents: Iterable[TextDocument | Mapping[str, Any]] | None = None,
                                options: TextSearchOptions | Mapping[str, Any] | None = None, *,
                                index: BM25Index | None = None, progress: Progress = None) -> TextSearchProvider:
    """A keyword/BM25 provider over an embedded index.

    ``documents`` are indexed at once (``progress=True`` shows a rich progress bar, a
    callable receives ``(done, total)``). Pass ``index=`` to serve an existing
    :class:`BM25Index` (e.g. ``BM25Index.load(dir)``); its own analysis and BM25
    settings apply, so ``options`` may then only set strategy and offloading::

        provider = create_text_search_provider([{"id": "d1", "content": "Agent memory migration guide"},
                                                {"id": "d2", "content": "Garbage collection in runtimes"}])
        output = await provider.search({"query": {"content": "agent memory"}, "target": {"name": "kb"}})
    """
    try:
        resolved = options if isinstance(options, TextSearchOptions) else TextSearchOptions.model_validate(
            options or {})
    except ValidationError as error:
        raise InvalidArgumentError(f"invalid text search options: {describe_validation_error(error, root='options')}"
                                   ) from None
    if index is None:
        stopwords: Any = None if resolved.stopwords == "none" else resolved.stopwords
        analyzer = TextAnalyzer(stopwords=stopwords, stemmer=resolved.stemmer, cjk=resolved.cjk)
        index = BM25Index(k1=resolved.k1, b=resolved.b, analyzer=analyzer)
    elif resolved.model_fields_set & {"k1", "b", "stopwords", "stemmer", "cjk"}:
        raise InvalidArgumentError("k1, b and analysis options belong to the index when index= is given")
    if documents is not None:
        batch = list(documents)
        with _progress_callback(progress, len(batch)) as callback:
            index.add(batch, progress=callback)
    return TextSearchProvider(index, resolved)


@contextmanager
def _progress_callback(progress: Progress, total: int) -> Iterator[ProgressCallback | None]:
    if progress is None or progress is False:
        yield None
    elif progress is True:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(TextColumn("Indexing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      transient=True) as bar:
            task = bar.add_task("index", total=total)

            def advance(done: int, _total: int) -> None:
                bar.update(task, completed=done)

            yield advance
    else:
        callback: Callable[[int, int], None] = progress
        yield callback
