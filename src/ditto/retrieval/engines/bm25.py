"""An embedded BM25 index: bm25s for Lucene scoring, numpy for the per-query work.

Why bm25s (measured against tantivy in ``docs/benchmarks.md``): it exposes
Lucene's ``k1``/``b``, is pure numpy (no server, no Rust tokenizer plumbing, so jieba
segmentation and our analyzer plug in directly) and stores the index as a few arrays.

bm25s precomputes every (term, document) BM25 contribution into a CSC matrix. A query
is then the sum of the matrix columns of its terms: we gather those column slices and
add them with one ``np.bincount``, apply the filter mask, and take the top ``limit``
with ``np.argpartition`` among documents that matched (score > 0). That is vectorised
and selects the top-k *among documents that pass the filter* (no post-filtering).

Changes are cheap to make and lazy to apply: :meth:`BM25Index.add` analyses only the
new documents and :meth:`BM25Index.remove` drops term lists; the score matrix (whose
IDF and average length depend on the whole corpus) is rebuilt from the stored term ids
on the next search or :meth:`BM25Index.refresh`. Searches read an immutable snapshot, so
a search running in one thread never sees a half-applied change from another.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, ValidationError

from ...contracts import DittoModel, FrozenDict, InvalidJson, check_json, freeze_json, thaw_json
from ...errors import InvalidArgumentError, describe_validation_error
from ...text.analysis import TextAnalyzer
from ...text.bm25 import coordination_weights
from ..errors import INVALID_INPUT, RetrievalError
from ..filters import equality_key
from .filters import FilterCondition

__all__ = ["BM25Index", "IndexedDocument", "MatchMode", "ProgressCallback", "TextDocument"]

MatchMode = Literal["any", "all"]
ProgressCallback = Callable[[int, int], None]

_FORMAT: Final = "ditto-bm25"
_FORMAT_VERSION: Final = 1
_ANALYZE_CHUNK: Final = 512
_FloatArray = npt.NDArray[np.float64]
_BoolArray = npt.NDArray[np.bool_]


class TextDocument(DittoModel):
    """A document to index: ``content`` is searched, ``metadata`` is filterable, ``ref`` locates it."""

    id: str = Field(min_length=1)
    content: str
    metadata: dict[str, Any] | None = None
    ref: str | None = Field(default=None, min_length=1)


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """A stored document; ``metadata`` is a read-only snapshot shared by every result."""

    id: str
    content: str
    metadata: FrozenDict | None
    ref: str | None


@dataclass(slots=True)
class _Column:
    """One metadata key as arrays: numeric values (NaN elsewhere) and equality postings."""

    numbers: _FloatArray
    postings: dict[tuple[str, Any], npt.NDArray[np.intp]]


@dataclass(slots=True)
class _Snapshot:
    """An immutable view of the index used by searches."""

    documents: tuple[IndexedDocument, ...]
    data: npt.NDArray[np.float32]
    indices: npt.NDArray[np.int32]
    indptr: npt.NDArray[np.integer[Any]]
    n_terms: int
    columns: dict[str, _Column] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _positions: dict[str, int] | None = None

    def positions(self) -> dict[str, int]:
        """Document id → position in :attr:`documents` (built on first use)."""
        positions = self._positions
        if positions is None:
            positions = self._positions = {document.id: n for n, document in enumerate(self.documents)}
        return positions

    def column(self, key: str) -> _Column:
        column = self.columns.get(key)
        if column is None:
            with self.lock:
                column = self.columns.get(key)
                if column is None:
                    column = _build_column(self.documents, key)
                    self.columns[key] = column
        return column


def _build_column(documents: Sequence[IndexedDocument], key: str) -> _Column:
    numbers = np.full(len(documents), np.nan)
    positions: dict[tuple[str, Any], list[int]] = {}
    for position, document in enumerate(documents):
        metadata = document.metadata
        if metadata is None or key not in metadata:
            continue
        value = metadata[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers[position] = float(value)
        # A list-valued field (tags) matches equality on any of its elements.
        for item in value if isinstance(value, tuple) else (value,):
            eq = equality_key(item)
            if eq is not None:
                positions.setdefault(eq, []).append(position)
    postings = {eq: np.asarray(found, dtype=np.intp) for eq, found in positions.items()}
    return _Column(numbers=numbers, postings=postings)


def _score_floor(scores: npt.NDArray[Any], snapshot: _Snapshot, term_ids: Sequence[int], limit: int) -> float | None:
    """A score the ``limit``-th best document reaches for sure, to skip most candidates before the top-k.

    The ``limit``-th best score among any ``limit`` or more documents is a lower bound of the
    ``limit``-th best overall; the shortest posting list holding at least ``limit`` documents gives
    such a set cheaply. ``None`` when there is no such bound above zero (zero scores are not hits).
    """
    indptr = snapshot.indptr
    shortest: tuple[int, int] | None = None
    for term in term_ids:
        start, end = int(indptr[term]), int(indptr[term + 1])
        if end - start >= limit and (shortest is None or end - start < shortest[1] - shortest[0]):
            shortest = (start, end)
    if shortest is not None:
        sample = scores[snapshot.indices[shortest[0]:shortest[1]]]
        cut = len(sample) - limit
        floor = float(np.partition(sample, cut)[cut])
        if floor > 0.0:
            return floor
    return None


def _condition_mask(snapshot: _Snapshot, condition: FilterCondition) -> _BoolArray:
    column = snapshot.column(condition.field)
    size = len(snapshot.documents)
    if condition.op in ("eq", "in", "ne", "nin"):
        mask = np.zeros(size, dtype=np.bool_)
        values = (condition.value,) if condition.op in ("eq", "ne") else condition.value
        for value in values:
            eq = equality_key(value)
            found = column.postings.get(eq) if eq is not None else None
            if found is not None:
                mask[found] = True
        return ~mask if condition.op in ("ne", "nin") else mask
    numbers = column.numbers
    bound = float(condition.value)
    with np.errstate(invalid="ignore"):  # NaN (missing) compares False, as intended
        if condition.op == "gt":
            return numbers > bound
        if condition.op == "gte":
            return numbers >= bound
        if condition.op == "lt":
            return numbers < bound
        return numbers <= bound


class BM25Index:
    """A mutable BM25 (Lucene variant) index over :class:`TextDocument` records.

    Thread-safe: mutations take a lock; searches work on an immutable snapshot that is
    rebuilt lazily after changes. ``k1`` and ``b`` are Lucene's parameters.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, analyzer: TextAnalyzer | None = None) -> None:
        if not (isinstance(k1, (int, float)) and math.isfinite(k1) and k1 >= 0):
            raise InvalidArgumentError("k1 must be a finite number >= 0")
        if not (isinstance(b, (int, float)) and 0 <= b <= 1):
            raise InvalidArgumentError("b must be a number between 0 and 1")
        self._k1 = float(k1)
        self._b = float(b)
        self._analyzer = analyzer if analyzer is not None else TextAnalyzer()
        self._documents: dict[str, IndexedDocument] = {}
        self._tokens: dict[str, list[int]] = {}
        self._terms: dict[str, int] = {}
        self._lock = threading.RLock()
        self._snapshot: _Snapshot | None = None
        self._dirty = False

    # -- properties ---------------------------------------------------------
    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    @property
    def analyzer(self) -> TextAnalyzer:
        return self._analyzer

    @property
    def dirty(self) -> bool:
        """Whether a change waits for the score matrix to be rebuilt."""
        return self._dirty or self._snapshot is None

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, document_id: object) -> bool:
        return document_id in self._documents

    def get(self, document_id: str) -> IndexedDocument | None:
        return self._documents.get(document_id)

    def documents(self) -> tuple[IndexedDocument, ...]:
        """Every stored document in index order."""
        with self._lock:
            return tuple(self._documents.values())

    # -- changes ------------------------------------------------------------
    def add(self, documents: Iterable[TextDocument | Mapping[str, Any]], *,
            progress: ProgressCallback | None = None) -> int:
        """Add or replace documents by id (a replaced document keeps its position).

        Only the given documents are analysed. ``progress(done, total)`` is called after
        each chunk. Returns the number of documents written.
        """
        prepared = [_coerce_document(document, position) for position, document in enumerate(documents)]
        seen: dict[str, int] = {}
        for position, document in enumerate(prepared):
            first = seen.setdefault(document.id, position)
            if first != position:
                raise RetrievalError(INVALID_INPUT, f"document {position} repeats the id {_shown(document.id)} "
                                                    f"of document {first} in one add() call")
        total = len(prepared)
        analyzed: list[tuple[IndexedDocument, list[str]]] = []
        for start in range(0, total, _ANALYZE_CHUNK):
            chunk = prepared[start:start + _ANALYZE_CHUNK]
            for document, terms in zip(chunk, self._analyzer.analyze_many([d.content for d in chunk]),
                                       strict=True):
                analyzed.append((document, terms))
            if progress is not None:
                progress(min(start + _ANALYZE_CHUNK, total), total)
        with self._lock:
            for document, terms in analyzed:
                self._documents[document.id] = document
                self._tokens[document.id] = self._term_ids(terms)
            if analyzed:
                self._dirty = True
        if progress is not None and total == 0:
            progress(0, 0)
        return total

    def remove(self, document_ids: Iterable[str]) -> int:
        """Remove documents by id; unknown ids are ignored. Returns how many were removed."""
        removed = 0
        with self._lock:
            for document_id in document_ids:
                if self._documents.pop(document_id, None) is not None:
                    del self._tokens[document_id]
                    removed += 1
            if removed:
                self._dirty = True
        return removed

    def _term_ids(self, terms: list[str]) -> list[int]:
        vocabulary = self._terms
        ids = []
        for term in terms:
            term_id = vocabulary.get(term)
            if term_id is None:
                term_id = vocabulary[term] = len(vocabulary)
            ids.append(term_id)
        return ids

    # -- scoring matrix -------------------------------------------------------
    def refresh(self) -> None:
        """Rebuild the score matrix now if anything changed (otherwise the next search does)."""
        self._current()

    def _current(self) -> _Snapshot:
        snapshot = self._snapshot
        if snapshot is not None and not self._dirty:
            return snapshot
        with self._lock:
            if self._snapshot is None or self._dirty:
                self._snapshot = self._build()
                self._dirty = False
            return self._snapshot

    def _build(self) -> _Snapshot:
        documents = tuple(self._documents.values())
        n_terms = len(self._terms)
        if not any(self._tokens[document.id] for document in documents):  # nothing to score
            empty = np.zeros(0, dtype=np.float32)
            return _Snapshot(documents, empty, np.zeros(0, dtype=np.int32),
                             np.zeros(n_terms + 1, dtype=np.int64), n_terms)
        import bm25s  # here, not at the top: searching a saved index never builds (bm25s brings scipy, ~0.15 s)

        model = bm25s.BM25(k1=self._k1, b=self._b, method="lucene")
        scores = model.build_index_from_ids(
            unique_token_ids=list(range(n_terms)),
            corpus_token_ids=[self._tokens[document.id] for document in documents],
            show_progress=False,
        )
        return _Snapshot(documents, scores["data"], scores["indices"], scores["indptr"], n_terms)

    # -- search ---------------------------------------------------------------
    def search(self, query: str, *, limit: int = 10, mode: MatchMode = "any",
               conditions: Sequence[FilterCondition] = (), coordinate: bool = False
               ) -> list[tuple[IndexedDocument, float]]:
        """The best ``limit`` documents for ``query`` among those matching ``conditions``.

        ``mode="any"`` ranks documents containing any query term (classic BM25);
        ``mode="all"`` keeps only documents containing every query term. Only documents
        with a positive score are returned; ties keep index order.

        ``coordinate`` counts a repeated query term once and multiplies each score by the
        idf-weighted share of the query's distinct terms the document holds
        (:func:`ditto.text.bm25.coordination_weights`, the factor the in-memory
        ``score_documents(coordinate=True)`` applies), so a short passage that repeats one rare
        query word no longer outranks one that holds them all.
        """
        snapshot = self._current()
        scored = self._scores(snapshot, query, mode, conditions, coordinate)
        if scored is None:
            return []
        scores, term_ids = scored
        floor = _score_floor(scores, snapshot, term_ids, limit)
        candidates = np.flatnonzero(scores >= floor if floor is not None else scores > 0.0)
        chosen = scores[candidates]
        if len(candidates) > limit:
            # The limit-th best score by a value partition (cheaper than argpartition's index
            # bookkeeping), then every candidate at least that good: ties at the cut keep index order.
            cut = len(chosen) - limit
            keep = np.flatnonzero(chosen >= np.partition(chosen, cut)[cut])
            candidates, chosen = candidates[keep], chosen[keep]
        order = np.lexsort((candidates, -chosen))[:limit]
        documents = snapshot.documents
        return [(documents[position], score)
                for position, score in zip(candidates[order].tolist(), chosen[order].tolist(), strict=True)]

    def score(self, query: str, document_ids: Sequence[str], *, mode: MatchMode = "any",
              conditions: Sequence[FilterCondition] = (), coordinate: bool = False) -> list[float | None]:
        """The score :meth:`search` gives each of ``document_ids`` for ``query``, in their order.

        ``None`` for a document that would not be a hit (no query term, filtered out, or not
        in the index). A hybrid search uses this to complete another branch's candidates.
        """
        snapshot = self._current()
        scored = self._scores(snapshot, query, mode, conditions, coordinate)
        positions = snapshot.positions()
        found = [positions.get(document_id) for document_id in document_ids]
        if scored is None:
            return [None] * len(found)
        scores = scored[0]
        values = [float(scores[position]) if position is not None else 0.0 for position in found]
        return [value if value > 0.0 else None for value in values]

    def _scores(self, snapshot: _Snapshot, query: str, mode: MatchMode, conditions: Sequence[FilterCondition],
                coordinate: bool = False) -> tuple[npt.NDArray[Any], list[int]] | None:
        """Every document's score for ``query`` (zero: not a hit) and the query's term ids; ``None``: no term."""
        terms = self._analyzer.analyze(query)
        term_ids = self._query_term_ids(terms, snapshot.n_terms, mode)
        if not term_ids:
            return None
        if coordinate:
            term_ids = list(dict.fromkeys(term_ids))
        indptr = snapshot.indptr
        if len(term_ids) == 1:
            start, end = indptr[term_ids[0]], indptr[term_ids[0] + 1]
            rows = snapshot.indices[start:end]
            weights = snapshot.data[start:end]
        else:
            slices = [slice(indptr[term], indptr[term + 1]) for term in term_ids]
            rows = np.concatenate([snapshot.indices[s] for s in slices])
            weights = np.concatenate([snapshot.data[s] for s in slices])
        size = len(snapshot.documents)
        scores = np.asarray(np.bincount(rows, weights=weights, minlength=size), dtype=np.float64)
        if coordinate:
            scores = scores * self._coordination(snapshot, terms, size)
        if mode == "all":
            distinct = set(term_ids)
            if len(distinct) > 1:
                present = np.bincount(
                    np.concatenate([snapshot.indices[indptr[term]:indptr[term + 1]] for term in distinct]),
                    minlength=size)
                scores[present < len(distinct)] = 0.0
        if conditions:
            mask = _condition_mask(snapshot, conditions[0])
            for condition in conditions[1:]:
                mask &= _condition_mask(snapshot, condition)
            scores[~mask] = 0.0
        return scores, term_ids

    def _coordination(self, snapshot: _Snapshot, terms: Sequence[str], size: int) -> _FloatArray:
        """Each document's coordination factor for the query ``terms`` (0 where it holds none).

        A term's document frequency is its column's length in the score matrix (every
        document holding a term has a positive Lucene BM25 entry for it); a term no
        document holds counts with frequency 0, as in ``score_documents``."""
        vocabulary = self._terms
        indptr = snapshot.indptr
        ids = {term: vocabulary.get(term) for term in dict.fromkeys(terms)}
        frequency = {term: int(indptr[term_id + 1] - indptr[term_id]) for term, term_id in ids.items()
                     if term_id is not None and term_id < snapshot.n_terms}
        shares = coordination_weights(ids, frequency, size)
        factor = np.zeros(size)
        for term, share in shares.items():
            if term in frequency:
                term_id = ids[term]
                assert term_id is not None
                factor[snapshot.indices[indptr[term_id]:indptr[term_id + 1]]] += share
        return factor

    def matching_ids(self, conditions: Sequence[FilterCondition]) -> list[str]:
        """The ids of the documents whose metadata passes every condition, in index order.

        The same column masks :meth:`search` applies, for another engine over the same
        documents (a vector table) to restrict its candidates before its own top-k.
        """
        snapshot = self._current()
        if not conditions:
            return [document.id for document in snapshot.documents]
        mask = _condition_mask(snapshot, conditions[0])
        for condition in conditions[1:]:
            mask &= _condition_mask(snapshot, condition)
        documents = snapshot.documents
        return [documents[position].id for position in np.flatnonzero(mask).tolist()]

    def _query_term_ids(self, terms: Sequence[str], n_terms: int, mode: MatchMode) -> list[int]:
        vocabulary = self._terms
        ids: list[int] = []
        for term in terms:
            term_id = vocabulary.get(term)
            if term_id is not None and term_id < n_terms:
                ids.append(term_id)
            elif mode == "all":
                return []  # a term no document contains: nothing can contain them all
        return ids

    # -- persistence ------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the index (documents, term ids, score matrix, parameters) to ``directory``.

        Files are written under temporary names and renamed; ``manifest.json`` goes
        last, so a reader never takes a half-written directory for an index.
        """
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        with self._lock:
            snapshot = self._current()
            terms = [""] * len(self._terms)
            for term, term_id in self._terms.items():
                terms[term_id] = term
            documents = snapshot.documents
            lengths = np.asarray([len(self._tokens[d.id]) for d in documents], dtype=np.int64)
            flat = [term_id for d in documents for term_id in self._tokens[d.id]]
            manifest = {
                "format": _FORMAT, "version": _FORMAT_VERSION, "k1": self._k1, "b": self._b,
                "analyzer": self._analyzer.config(), "documents": len(documents), "terms": snapshot.n_terms,
            }
            (path / "manifest.json").unlink(missing_ok=True)
            _write_atomic(path / "documents.jsonl", "".join(
                json.dumps({"id": d.id, "content": d.content, "metadata": thaw_json(d.metadata), "ref": d.ref},
                           ensure_ascii=False) + "\n" for d in documents).encode("utf-8"))
            _write_atomic(path / "terms.json", json.dumps(terms[:snapshot.n_terms], ensure_ascii=False)
                          .encode("utf-8"))
            _save_array(path / "token_ids.npy", np.asarray(flat, dtype=np.int32))
            _save_array(path / "token_lengths.npy", lengths)
            _save_array(path / "scores_data.npy", np.asarray(snapshot.data))
            _save_array(path / "scores_indices.npy", np.asarray(snapshot.indices))
            _save_array(path / "scores_indptr.npy", np.asarray(snapshot.indptr))
            _write_atomic(path / "manifest.json", json.dumps(manifest, indent=2).encode("utf-8"))

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> BM25Index:
        """Open an index written by :meth:`save`; searches give identical results."""
        path = Path(directory)
        try:
            manifest = json.loads((path / "manifest.json").read_text("utf-8"))
        except (OSError, ValueError) as error:
            raise InvalidArgumentError(f"{path} does not hold a saved BM25 index") from error
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT \
                or manifest.get("version") != _FORMAT_VERSION:
            raise InvalidArgumentError(f"{path} does not hold a saved BM25 index of a supported version")
        index = cls(k1=manifest["k1"], b=manifest["b"], analyzer=TextAnalyzer.from_config(manifest["analyzer"]))
        terms = json.loads((path / "terms.json").read_text("utf-8"))
        index._terms = {term: term_id for term_id, term in enumerate(terms)}
        flat = np.load(path / "token_ids.npy").tolist()
        lengths = np.load(path / "token_lengths.npy").tolist()
        offset = 0
        documents: list[IndexedDocument] = []
        with (path / "documents.jsonl").open(encoding="utf-8") as handle:
            for line, length in zip(handle, lengths, strict=True):
                document = _coerce_document(json.loads(line))
                documents.append(document)
                index._documents[document.id] = document
                index._tokens[document.id] = flat[offset:offset + length]
                offset += length
        if len(documents) != manifest["documents"] or offset != len(flat):
            raise InvalidArgumentError(f"{path} holds an inconsistent BM25 index")
        index._snapshot = _Snapshot(tuple(documents), np.load(path / "scores_data.npy"),
                                    np.load(path / "scores_indices.npy"), np.load(path / "scores_indptr.npy"),
                                    int(manifest["terms"]))
        index._dirty = False
        return index


def _shown(document_id: str) -> str:
    """A document id as quoted in a message: ``repr``, cut to 60 characters (ids are the caller's text)."""
    return repr(document_id) if len(document_id) <= 60 else repr(document_id[:57]) + "..."


def _coerce_document(document: TextDocument | Mapping[str, Any], position: int | None = None) -> IndexedDocument:
    """A checked document; a bad one is ``RETRIEVAL_INVALID_INPUT`` naming its position and id, and what is wrong."""
    try:
        model = document if isinstance(document, TextDocument) else TextDocument.model_validate(document)
        if model.metadata is not None:
            check_json(model.metadata)
    except (ValidationError, InvalidJson) as error:
        given = document.get("id") if isinstance(document, Mapping) else None
        name = "a document" if position is None else f"document {position}"
        if isinstance(given, str) and given:
            name += f" (id {_shown(given)})"
        detail = describe_validation_error(error, root="document") if isinstance(error, ValidationError) \
            else f"metadata is not JSON: {error.reason}"
        raise RetrievalError(INVALID_INPUT, f"{name} is invalid: {detail} (a document needs a non-empty id, "
                                            "string content and JSON metadata)") from error
    metadata = freeze_json(model.metadata) if model.metadata is not None else None
    return IndexedDocument(model.id, model.content, metadata, model.ref)


def _write_atomic(path: Path, payload: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(payload)
    os.replace(temporary, path)


def _save_array(path: Path, array: npt.NDArray[Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as handle:
        np.save(handle, array, allow_pickle=False)
    os.replace(temporary, path)
