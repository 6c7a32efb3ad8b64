"""An opened index: BM25 arrays in memory, passages, file bytes and vectors read from SQLite.

:func:`open_index` follows ``manifest.json`` to its generation and opens that
generation read-only; a writer publishing a new one meanwhile never changes what an
opened index sees (the old generation's files stay readable until closed). Searching is
thread-safe: BM25 works on immutable arrays, and SQLite reads share one connection
under a lock.

Vector search is exact cosine with metadata filters applied *before* the top-k: the
filter selects the passages that pass (the BM25 engine's metadata columns) and only those
are scored. The vectors live in ``sqlite-vec``'s ``vec0`` table; a table of at most
:data:`MATRIX_BYTES` is read once into a normalised matrix and scored with one matrix
product per query (several times faster than ``vec0`` re-reading the file each query),
larger ones are scanned by ``vec0``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..engines.bm25 import BM25Index
from ..engines.filters import FilterCondition
from .errors import INDEX_NOT_FOUND, SearchIndexError
from .manifest import EmbeddingInfo, Manifest, read_manifest
from .sources import PassageRow
from .store import DB_FILE, connect, has_table, sentence_key
from .writer import BM25_FOLDER

__all__ = ["SearchIndex", "open_index"]

#: ``vec0``'s k-nearest-neighbour query takes at most this ``k``; larger limits scan with ``ORDER BY``.
_KNN_MAX: Final = 4096
#: Vector tables up to this size are searched in memory (read once per opened index); sqlite-vec's
#: per-query scan of the file costs several times a matrix product (docs/benchmarks.md).
MATRIX_BYTES: Final = 1 << 30


@dataclass(frozen=True, slots=True)
class _Hit:
    id: str
    score: float


class SearchIndex:
    """One generation of an index directory, opened for searching (use :func:`open_index`)."""

    def __init__(self, directory: Path, manifest: Manifest, bm25: BM25Index, connection: Any) -> None:
        self.directory = directory
        self.manifest = manifest
        self.bm25 = bm25
        self._connection = connection
        self._lock = threading.Lock()
        self._vectors = manifest.embedding is not None and has_table(connection, "vectors")
        self._sentences = self._vectors and has_table(connection, "sentences")
        self._loaded: tuple[list[str], dict[str, int], npt.NDArray[np.float32]] | None = None
        self._record_files: frozenset[str] | None = None

    @property
    def embedding(self) -> EmbeddingInfo | None:
        """The model of the index's vectors, or ``None`` when it has none."""
        return self.manifest.embedding if self._vectors else None

    @property
    def generation(self) -> str:
        return self.manifest.generation

    def __len__(self) -> int:
        return len(self.bm25)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads ----------------------------------------------------------------------
    def passages(self, ids: Sequence[str]) -> dict[str, PassageRow]:
        """The stored passages with these ids (unknown ids are left out)."""
        if not ids:
            return {}
        found: dict[str, PassageRow] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start:start + 500])
                rows = self._connection.execute(
                    'SELECT id, path, ordinal, start, "end", line_start, line_end, sha256, heading, text, metadata '
                    f"FROM passages WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
                for row in rows:
                    found[row[0]] = PassageRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8],
                                               row[9], json.loads(row[10]))
        return found

    def file_bytes(self, path: str) -> tuple[str, bytes] | None:
        """``(sha256, exact bytes)`` of an indexed text file as it was indexed, or ``None``."""
        with self._lock:
            row = self._connection.execute("SELECT sha256, raw FROM files WHERE path = ? AND kind = 'text'",
                                           (path,)).fetchone()
        return (row[0], bytes(row[1])) if row is not None and row[1] is not None else None

    def extracted_text(self, path: str) -> str | None:
        """The main text an indexed HTML file's passages were cut from, or ``None`` (not an HTML file)."""
        with self._lock:
            if not has_table(self._connection, "extracted"):  # an index written before HTML was read
                return None
            row = self._connection.execute("SELECT text FROM extracted WHERE path = ?", (path,)).fetchone()
        return str(row[0]) if row is not None else None

    def record_files(self) -> frozenset[str]:
        """The paths of the indexed JSONL/BEIR files: their passages are records (one per line), not file text.

        Read once per opened index: a generation never changes.
        """
        if self._record_files is None:
            with self._lock:
                rows = self._connection.execute("SELECT path FROM files WHERE kind = 'records'").fetchall()
            self._record_files = frozenset(row[0] for row in rows)
        return self._record_files

    def files(self) -> list[tuple[str, str, str]]:
        """``(path, kind, sha256)`` of every indexed file."""
        with self._lock:
            return [tuple(row) for row in self._connection.execute("SELECT path, kind, sha256 FROM files "
                                                                   "ORDER BY path")]

    # -- vectors --------------------------------------------------------------------
    def sentence_vectors(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors (the index's model) of those of ``texts`` that are sentences of its passages.

        Research reads a passage sentence by sentence with the index's model; what the index embedded
        when it was built is not embedded again. A text it does not hold is left out (the caller embeds it).
        """
        info = self.manifest.embedding
        if not self._sentences or info is None or not texts:
            return {}
        by_key: dict[bytes, list[str]] = {}
        for text in texts:
            by_key.setdefault(sentence_key(text), []).append(text)
        keys = list(by_key)
        found: dict[str, npt.NDArray[np.float32]] = {}
        size = info.dimensions * 4
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                rows = self._connection.execute(
                    f"SELECT sha256, embedding FROM sentences WHERE sha256 IN ({','.join('?' * len(chunk))})",
                    chunk).fetchall()
                for key, blob in rows:
                    if len(blob) == size:  # a vector of another size is not this model's: embed the text again
                        vector = np.frombuffer(blob, dtype=np.float32)
                        for text in by_key[bytes(key)]:
                            found[text] = vector
        return found

    def search_vectors(self, vector: Sequence[float], *, limit: int,
                       conditions: Sequence[FilterCondition] = ()) -> list[tuple[str, float]]:
        """The ``limit`` passages nearest to ``vector`` among those passing ``conditions``: ``(id, cosine)``.

        Vectors that fit in :data:`MATRIX_BYTES` are read from the vector table once and scanned in memory
        (one matrix product); larger tables are scanned by sqlite-vec on each query.
        """
        if not self._vectors:
            from .errors import INDEX_UNAVAILABLE

            raise SearchIndexError(INDEX_UNAVAILABLE, "this index has no vectors (build it with --embed)")
        info = self.manifest.embedding
        if info is not None and self.manifest.passages * info.dimensions * 4 <= MATRIX_BYTES:
            return self._search_matrix(np.asarray(vector, dtype=np.float32), limit, conditions)
        return self.scan_vectors(vector, limit=limit, conditions=conditions)

    def _matrix(self) -> tuple[list[str], dict[str, int], npt.NDArray[np.float32]]:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    rows = self._connection.execute("SELECT p.id, v.embedding FROM vectors v JOIN passages p "
                                                    "ON p.rowid = v.rowid ORDER BY v.rowid").fetchall()
                    info = self.manifest.embedding
                    assert info is not None
                    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(
                        len(rows), info.dimensions).copy()
                    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                    norms[norms == 0.0] = 1.0
                    matrix /= norms
                    ids = [row[0] for row in rows]
                    self._loaded = (ids, {passage_id: position for position, passage_id in enumerate(ids)}, matrix)
                loaded = self._loaded
        return loaded

    def _search_matrix(self, query: npt.NDArray[np.float32], limit: int,
                       conditions: Sequence[FilterCondition]) -> list[tuple[str, float]]:
        ids, positions, matrix = self._matrix()
        norm = float(np.linalg.norm(query))
        if norm == 0.0 or not ids:
            return []
        if conditions:
            allowed = np.fromiter((positions[i] for i in self.bm25.matching_ids(conditions) if i in positions),
                                  dtype=np.intp)
            if not len(allowed):
                return []
            scores = matrix[allowed] @ (query / norm)
        else:
            allowed = None
            scores = matrix @ (query / norm)
        best = np.argpartition(-scores, limit - 1)[:limit] if len(scores) > limit else np.arange(len(scores))
        best = best[np.lexsort((best, -scores[best]))]
        rows = allowed[best] if allowed is not None else best
        return [(ids[row], float(scores[position])) for row, position in zip(rows.tolist(), best.tolist(),
                                                                              strict=True)]

    def score_vectors(self, vector: Sequence[float], ids: Sequence[str],
                      conditions: Sequence[FilterCondition] = ()) -> list[float | None]:
        """The cosine :meth:`search_vectors` gives each of ``ids`` (``None``: no vector, or filtered out)."""
        if not self._vectors or not ids:
            return [None] * len(ids)
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return [None] * len(ids)
        allowed = set(self.bm25.matching_ids(conditions)) if conditions else None
        info = self.manifest.embedding
        if info is not None and self.manifest.passages * info.dimensions * 4 <= MATRIX_BYTES:
            _, positions, matrix = self._matrix()
            rows = [positions.get(passage_id) for passage_id in ids]
            known = [row for row in rows if row is not None]
            values = iter((matrix[known] @ (query / norm)).tolist()) if known else iter(())
            found = [next(values) if row is not None else None for row in rows]
        else:
            with self._lock:
                scored = dict(self._connection.execute(
                    "SELECT p.id, 1.0 - vec_distance_cosine(v.embedding, ?) FROM vectors v JOIN passages p "
                    f"ON p.rowid = v.rowid WHERE p.id IN ({','.join('?' * len(ids))})", [query.tobytes(), *ids]
                ).fetchall())
            found = [float(scored[passage_id]) if passage_id in scored else None for passage_id in ids]
        return [score if allowed is None or passage_id in allowed else None
                for passage_id, score in zip(ids, found, strict=True)]

    def scan_vectors(self, vector: Sequence[float], *, limit: int,
                     conditions: Sequence[FilterCondition] = ()) -> list[tuple[str, float]]:
        """:meth:`search_vectors` through sqlite-vec's ``vec0`` scan, whatever the table's size."""
        query = np.asarray(vector, dtype=np.float32).tobytes()
        allowed: str | None = None
        if conditions:
            ids = self.bm25.matching_ids(conditions)
            if not ids:
                return []
            allowed = json.dumps(ids)
        with self._lock:
            # The nearest rowids first, from the vector table alone (a join in the same statement makes
            # sqlite-vec's planner scan far more), then their passage ids by primary key.
            if limit <= _KNN_MAX:
                sql = "SELECT rowid, distance FROM vectors WHERE embedding MATCH ? AND k = ?"
                parameters: list[Any] = [query, limit]
                if allowed is not None:
                    sql += " AND rowid IN (SELECT rowid FROM passages WHERE id IN (SELECT value FROM json_each(?)))"
                    parameters.append(allowed)
            else:
                sql = "SELECT rowid, vec_distance_cosine(embedding, ?) AS distance FROM vectors"
                parameters = [query]
                if allowed is not None:
                    sql += " WHERE rowid IN (SELECT rowid FROM passages WHERE id IN (SELECT value FROM json_each(?)))"
                    parameters.append(allowed)
                sql += " ORDER BY distance LIMIT ?"
                parameters.append(limit)
            nearest = self._connection.execute(sql, parameters).fetchall()
            if not nearest:
                return []
            rowids = [rowid for rowid, _ in nearest]
            names = dict(self._connection.execute(
                f"SELECT rowid, id FROM passages WHERE rowid IN ({','.join('?' * len(rowids))})", rowids).fetchall())
        rows = sorted(((names[rowid], distance) for rowid, distance in nearest if rowid in names),
                      key=lambda r: r[1])
        return [(passage_id, 1.0 - float(distance)) for passage_id, distance in rows]


def open_index(directory: str | Path) -> SearchIndex:
    """Open the index in ``directory`` for searching (``INDEX_NOT_FOUND``/``INDEX_NEWER_FORMAT`` when it cannot)."""
    path = Path(directory)
    for attempt in range(2):  # a writer may publish and delete the generation between two reads
        manifest = read_manifest(path)
        generation = path / manifest.generation
        try:
            bm25 = BM25Index.load(generation / BM25_FOLDER)
            connection = connect(generation / DB_FILE, vectors=manifest.embedding is not None, read_only=True)
        except SearchIndexError:
            raise
        except Exception as error:  # a vanished generation, a damaged file
            if attempt == 0:
                continue
            raise SearchIndexError(INDEX_NOT_FOUND, f"{path} names generation {manifest.generation}, which "
                                                    "cannot be read") from error
        return SearchIndex(path, manifest, bm25, connection)
    raise AssertionError("unreachable")
