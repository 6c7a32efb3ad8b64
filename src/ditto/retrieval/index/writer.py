"""Building and changing an index: incremental, one writer at a time, crash-safe by generations.

A run takes the directory's writer lock (:mod:`.lock`; a second writer gets
``INDEX_BUSY``), copies the current generation's ``index.sqlite`` into a new
generation folder, applies the changes there (one SQLite transaction), rebuilds the BM25
arrays from the previous ones plus the changed passages, and publishes the result by
replacing ``manifest.json`` (:mod:`.manifest`). The old generation is deleted only
after that, so a process killed at any point (SIGKILL included) leaves the previous
manifest naming a complete, untouched generation; the half-built folder is removed by
the next run. Copying the database costs disk bandwidth on each run; in exchange there
is no recovery step and a reader never waits.

Incremental: a file whose size and modification time equal the recorded ones (and
which was not modified within :data:`_RACY_SECONDS` of the last run, when a change
could share its time stamp) is not read again; any other file is read and its SHA-256
compared with the recorded one, so a touched but unchanged file costs a read, never a
re-cut or re-embedding. Files recorded under a given source root that the walk no
longer finds are removed; ``remove=`` removes the named files or folders.

Embeddings: an index made with an embedding model records its id and dimension; every
later run must embed new passages with the same model (``INDEX_MODEL_MISMATCH``
otherwise: vectors of two models are not comparable, and a vector of another dimension
is refused, never truncated or padded). With a model, each passage's sentences get vectors
too (``store.sentence_texts``): research reads a passage sentence by sentence with the same
model, and embedding them here, once, spares every task that work (``sentences=False``
leaves them out; a task then embeds what it reads). An index with vectors but without
sentence vectors gains them on its next run with the model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from ...errors import DittoError
from ...redaction import printable
from ...text.analysis import TextAnalyzer
from ...text.files import WalkReport
from ...text.passages import PASSAGES_VERSION, heading_over
from ..engines.bm25 import BM25Index
from ..providers.embedding import EmbeddingProvider, embed_contents
from .errors import (
    INDEX_INVALID_INPUT,
    INDEX_MODEL_MISMATCH,
    INDEX_NOT_FOUND,
    INDEX_UNAVAILABLE,
    SearchIndexError,
)
from .lock import LOCK_FILE, writer_lock
from .manifest import MANIFEST_FILE, EmbeddingInfo, Manifest, read_manifest, sync_folder, write_manifest
from .sources import (
    INDEX_LIMITS,
    LINK_LISTS_SKIPPED,
    HtmlReader,
    IndexLimits,
    LoadedFile,
    PassageRow,
    SourceFile,
    discover,
    load_file,
)
from .store import (
    DB_FILE,
    SCHEMA,
    connect,
    create_vector_table,
    has_table,
    sentence_key,
    sentence_texts,
)

__all__ = ["BM25_FOLDER", "IndexSummary", "Progress", "update_index", "update_index_sync"]

logger = logging.getLogger(__name__)

BM25_FOLDER: Final = "bm25"
#: A file modified this close to the previous run may share its time stamp with a later change: read it.
_RACY_SECONDS: Final = 2.0
_EMBED_CHUNK: Final = 256

#: ``progress(stage, done, total)``: stages "scan", "read", "embed", "sentences", "bm25".
Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class IndexSummary:
    """What one run did (``ditto index`` prints it)."""

    directory: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: list[str] = field(default_factory=list)
    #: Other warnings (a ``remove`` path the index does not hold); ``skipped`` names skipped files only.
    notes: list[str] = field(default_factory=list)
    passages: int = 0
    embedded: int = 0
    #: Distinct sentences embedded this run (see the module docs).
    sentences: int = 0
    files: int = 0
    seconds: float = 0.0
    generation: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "files": {"added": self.added, "updated": self.updated,
                                                       "unchanged": self.unchanged, "removed": self.removed,
                                                       "skipped": len(self.skipped)},
                "warnings": [*self.skipped, *self.notes], "passages": self.passages, "embedded": self.embedded,
                "sentences": self.sentences,
                "indexedFiles": self.files, "seconds": round(self.seconds, 3), "generation": self.generation}


def _model_info(embedding: EmbeddingProvider) -> EmbeddingInfo:
    model = getattr(embedding, "model_id", None)
    dimensions = getattr(embedding, "dimensions", None)
    if not isinstance(model, str) or not model or isinstance(dimensions, bool) or not isinstance(dimensions, int):
        raise SearchIndexError(INDEX_UNAVAILABLE, "the embedding provider must say its model_id and dimensions")
    return EmbeddingInfo(model=model, dimensions=dimensions)


def _next_generation(previous: Manifest | None) -> str:
    number = int(previous.generation[2:]) + 1 if previous is not None else 1
    return f"g-{number:06d}"


#: One path or several (a lone ``str`` is one path, never its letters); ``None`` is none.
_PathsArgument = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None

#: What a generation folder is called (``g-000001``…); nothing else in an index folder is ever removed.
_GENERATION: Final = re.compile(r"g-[0-9]{6,}")


def _clean_stale(directory: Path, keep: str | None) -> None:
    """Remove generation folders no manifest names (left by a killed writer, or the one just replaced); only
    folders named as this module names them (a user's ``g-notes`` beside an index is theirs)."""
    for entry in directory.iterdir():
        if _GENERATION.fullmatch(entry.name) and entry.name != keep and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _make_folder(directory: Path, *, creating: bool) -> None:
    """The index folder, created when missing; a clear error when it cannot be one (a file is in the way, no
    permission) and, for a removal alone, when it holds no index yet (nothing to remove from)."""
    if (directory.exists() or directory.is_symlink()) and not directory.is_dir():
        raise SearchIndexError(INDEX_INVALID_INPUT, f"{printable(directory)} is a file, not an index folder")
    if not creating and not (directory / MANIFEST_FILE).exists():
        raise SearchIndexError(INDEX_NOT_FOUND, f"{printable(directory)} holds no index: nothing to remove from")
    if directory.is_dir():
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where a parent folder should be, no permission, a read-only file system
        reason = error.strerror or type(error).__name__
        raise SearchIndexError(INDEX_UNAVAILABLE, f"cannot create the index folder {printable(directory)}: "
                                                  f"{reason}") from None


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


async def update_index(directory: str | os.PathLike[str], sources: _PathsArgument = (), *,
                       remove: _PathsArgument = (), embedding: EmbeddingProvider | None = None,
                       ignore: str | Sequence[str] | None = (), analyzer: TextAnalyzer | None = None,
                       limits: IndexLimits | None = INDEX_LIMITS, progress: Progress | None = None,
                       embed_batch_size: int | None = None, records: bool = True,
                       sentences: bool = True, html: HtmlReader | None = None) -> IndexSummary:
    """Create or update the index in ``directory`` from ``sources``; see the module docs.

    ``analyzer`` applies when the index is created (later runs keep the index's own).
    ``embedding`` adds vectors; an index that has vectors needs it on every run. The
    blocking work runs in a worker thread; embedding runs on the caller's event loop.
    ``records=False`` reads ``.jsonl`` roots and BEIR folders as text like any file.
    ``sentences=False`` embeds passages only (see the module docs). ``html`` reads HTML files as their main
    text (``ditto.worker.interaction.extractor.html_document_reader()``); without it they are no documents.
    """
    if not os.fspath(directory):
        raise SearchIndexError(INDEX_INVALID_INPUT, "the index folder is an empty path: name one (--index DIR)")
    sources, remove, ignore = _paths(sources, "sources"), _paths(remove, "remove"), _globs(ignore)
    if limits is None:
        limits = INDEX_LIMITS
    loop = asyncio.get_running_loop()
    embed: Callable[[list[str]], list[Any]] | None = None
    info = _model_info(embedding) if embedding is not None else None
    if embedding is not None:
        provider = embedding

        def embed(texts: list[str]) -> list[Any]:
            future = asyncio.run_coroutine_threadsafe(
                embed_contents(provider, texts, batch_size=embed_batch_size,
                               dimensions=info.dimensions if info else None), loop)
            return future.result()

    return await asyncio.to_thread(_update_safely, Path(directory), sources, remove, embed, info, ignore, analyzer,
                                   limits, progress, records, sentences, html)


def _paths(value: Any, name: str) -> list[Path]:
    """``sources``/``remove`` as paths: one path (a ``str`` or ``PathLike``) is a list of one, ``None`` none; a
    ``str`` is never read letter by letter (``remove="docs/a.md"`` once removed the whole index)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    try:
        return [Path(os.fsdecode(item)) for item in value]
    except TypeError:
        raise SearchIndexError(INDEX_INVALID_INPUT, f"{name} must be paths (a path, or a list of them)") from None


def _globs(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    try:
        globs = tuple(value)
    except TypeError:
        globs = (value,)
    if not all(isinstance(item, str) for item in globs):
        raise SearchIndexError(INDEX_INVALID_INPUT, "ignore must be glob strings (one, or a list of them)")
    return globs


def update_index_sync(directory: str | os.PathLike[str], sources: _PathsArgument = (),
                      **options: Any) -> IndexSummary:
    """:func:`update_index` for code without an event loop (the command line)."""
    return asyncio.run(update_index(directory, sources, **options))


def _update_safely(directory: Path, *args: Any) -> IndexSummary:
    """:func:`_update` with the file system's and SQLite's failures as index errors (logged with their traceback):
    a folder that cannot be written, a damaged generation. Nothing is published by a run that fails."""
    import sqlite3

    fresh = not os.path.lexists(directory)
    try:
        try:
            return _update(directory, *args)
        except SearchIndexError:
            raise
        except sqlite3.DatabaseError:
            logger.exception("the index %s could not be read", printable(directory))
            raise SearchIndexError(INDEX_NOT_FOUND, f"the index {printable(directory)} is damaged (its database "
                                                    "cannot be read); build it again into a new folder") from None
        except OSError as error:
            logger.exception("writing the index %s failed", printable(directory))
            reason = error.strerror or type(error).__name__
            raise SearchIndexError(INDEX_UNAVAILABLE, f"the index {printable(directory)} cannot be written: "
                                                      f"{reason}") from None
    except BaseException:
        if fresh:
            _remove_empty_index_folder(directory)  # a refused first run leaves no folder holding only its lock
        raise


def _remove_empty_index_folder(directory: Path) -> None:
    try:
        (directory / LOCK_FILE).unlink(missing_ok=True)
        directory.rmdir()  # only when nothing else is in it
    except OSError:
        pass


def _update(directory: Path, sources: list[Path], remove: list[Path], embed: Callable[[list[str]], list[Any]] | None,
            info: EmbeddingInfo | None, ignore: tuple[str, ...], analyzer: TextAnalyzer | None,
            limits: IndexLimits, progress: Progress | None, records: bool = True,
            sentences: bool = True, html: HtmlReader | None = None) -> IndexSummary:
    started = time.perf_counter()
    _make_folder(directory, creating=not remove or bool(sources))
    summary = IndexSummary(str(directory))
    with writer_lock(directory):
        previous = read_manifest(directory) if (directory / MANIFEST_FILE).exists() else None
        if previous is not None and previous.embedding is not None:
            if info is None:
                raise SearchIndexError(INDEX_MODEL_MISMATCH, f"this index holds vectors of "
                                                             f"{previous.embedding.model}: new passages must be "
                                                             "embedded by it too (pass --embed)")
            if info != previous.embedding:
                raise SearchIndexError(INDEX_MODEL_MISMATCH, f"this index holds {previous.embedding.dimensions}-"
                                                             f"dimensional vectors of {previous.embedding.model}; "
                                                             f"{info.model} makes {info.dimensions}-dimensional ones "
                                                             "(use a new index, or the same model)")
        if previous is not None and not (directory / previous.generation / DB_FILE).is_file():
            raise SearchIndexError(INDEX_NOT_FOUND, f"the index {printable(directory)} is damaged: its manifest names "
                                                    f"{previous.generation}, which is missing; nothing was changed "
                                                    "(build it again into a new folder)")
        _clean_stale(directory, previous.generation if previous else None)
        plan = _scan(directory, previous, sources, remove, ignore, limits, progress, summary, records, html)
        backfilling = info is not None and previous is not None and (
            previous.embedding is None or (sentences and not previous.sentences))
        if previous is not None and plan.empty and not backfilling:  # nothing changed: nothing to publish
            summary.passages, summary.files, summary.generation = previous.passages, previous.files, previous.generation
            summary.seconds = time.perf_counter() - started
            return summary
        generation = _next_generation(previous)
        target = directory / generation
        target.mkdir()
        try:
            manifest = _build(directory, previous, target, plan, embed, info, analyzer, progress, summary,
                              sentences=sentences and embed is not None)
            write_manifest(directory, manifest)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        _clean_stale(directory, generation)
    summary.generation = generation
    summary.seconds = time.perf_counter() - started
    return summary


#: Reasons a file is left out that :meth:`WalkReport.tally` counts in one note: remembered by the index, so an
#: unchanged file left out for one is not read again (a manual's 85 index pages took 2 s of every task).
TALLIED_SKIPS: Final = (LINK_LISTS_SKIPPED,)


@dataclass(slots=True)
class _Plan:
    """What a run changes: files read and cut, files only re-stamped, files whose passages go."""

    changed: list[LoadedFile] = field(default_factory=list)
    touched: list[SourceFile] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    #: Files newly left out for a tallied reason (:data:`TALLIED_SKIPS`), and paths whose remembered skip goes.
    skipped: list[tuple[SourceFile, str]] = field(default_factory=list)
    unskipped: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.changed or self.touched or self.gone or self.skipped or self.unskipped)


def _scan(directory: Path, previous: Manifest | None, sources: list[Path], remove: list[Path],
          ignore: tuple[str, ...], limits: IndexLimits, progress: Progress | None, summary: IndexSummary,
          records: bool, html: HtmlReader | None) -> _Plan:
    """Compare the sources with the published generation (read-only): nothing is written here."""
    known: dict[str, tuple[str, str, int, int]] = {}
    remembered: dict[str, tuple[int, int, str]] = {}  # skipped files: size, time, reason
    since = 0.0
    if previous is not None:
        since = previous.updated
        connection = connect(directory / previous.generation / DB_FILE, vectors=False, read_only=True)
        try:
            known = {path: (kind, sha, size, mtime) for path, kind, sha, size, mtime in
                     connection.execute("SELECT path, kind, sha256, size, mtime_ns FROM files")}
            if has_table(connection, "skipped"):
                remembered = {path: (size, mtime, reason) for path, size, mtime, reason in
                              connection.execute("SELECT path, size, mtime_ns, reason FROM skipped")}
        finally:
            connection.close()
    plan = _Plan()
    # Passages cut by another version of the cutter would sit beside newly cut ones: every file is cut again.
    recut = previous is not None and previous.cutter != PASSAGES_VERSION
    if recut and known:
        summary.notes.append("the passages of this index were cut by another version of ditto: every file is "
                             "read and cut again")
    report = WalkReport(max_notes=1000)
    seen: set[str] = set()
    left_out: set[str] = set()  # files skipped for a tallied reason, this run
    roots = [str(root.resolve()) for root in sources]
    # A file named twice (``docs docs``, ``docs docs/a.md``, a link to the same folder) is one file.
    found = list({source.path: source for source in discover(sources, ignore=ignore, limits=limits, report=report,
                                                             records=records, html=html is not None)}.values())
    for number, source in enumerate(found, start=1):
        if progress is not None:
            progress("read", number, len(found))
        recorded = known.get(source.path)
        racy = source.mtime_ns / 1e9 >= since - _RACY_SECONDS
        if recorded is not None and recorded[0] == source.kind and recorded[2:] == (source.size, source.mtime_ns) \
                and not racy and not recut:
            seen.add(source.path)
            summary.unchanged += 1
            continue
        skip = remembered.get(source.path)
        if skip is not None and skip[:2] == (source.size, source.mtime_ns) and not racy and not recut:
            report.tally(skip[2], printable(source.path))  # left out before, unchanged since: not read again
            left_out.add(source.path)
            continue
        if skip is not None:
            plan.unskipped.append(source.path)
        tallied = {reason: report.tallies.get(reason, (0, ""))[0] for reason in TALLIED_SKIPS}
        loaded = load_file(source, limits=limits, report=report, html=html)
        if loaded is None:
            reason = next((reason for reason in TALLIED_SKIPS if report.tallies.get(reason, (0, ""))[0] >
                           tallied[reason]), None)
            if reason is not None:  # remembered; a file indexed before is gone from the index (not seen)
                plan.skipped.append((source, reason))
                left_out.add(source.path)
            continue
        seen.add(source.path)
        if recorded is not None and recorded[1] == loaded.sha256 and recorded[0] == source.kind and not recut:
            if recorded[2:] != (source.size, source.mtime_ns):
                plan.touched.append(source)
            summary.unchanged += 1
            continue
        if recorded is None:
            summary.added += 1
        else:
            summary.updated += 1
            plan.replaced.append(source.path)
        plan.changed.append(loaded)
    report.finish()
    summary.skipped = list(report.notes)
    if sources and report.roots_usable == 0:
        raise SearchIndexError(INDEX_INVALID_INPUT, f"no source exists or may be read: "
                                                    f"{', '.join(printable(s) for s in sources[:3])}"
                                                    + (f" ({report.notes[0]})" if report.notes else ""))
    if sources and not seen:
        detail = f"; {report.notes[0]}" if report.notes else ""
        raise SearchIndexError(INDEX_INVALID_INPUT, "nothing to index: no readable Markdown, text or JSONL file "
                                                    f"was found in {', '.join(printable(s) for s in sources[:3])}"
                                                    + detail)
    plan.gone = [path for path in known if _under(path, roots) and path not in seen]
    plan.unskipped += [path for path in remembered if (_under(path, roots) and path not in left_out) or _under(
        path, [str(root.resolve()) for root in remove])]
    removed_roots = [str(path.resolve()) for path in remove]
    for path, root in zip(remove, removed_roots, strict=True):
        if not any(_under(known_path, [root]) for known_path in known):
            summary.notes.append(f"{printable(path)}: nothing of it is in the index (nothing removed)")
    plan.gone += [path for path in known if _under(path, removed_roots) and path not in plan.gone]
    summary.removed = len(plan.gone)
    return plan


def _build(directory: Path, previous: Manifest | None, target: Path, plan: _Plan,
           embed: Callable[[list[str]], list[Any]] | None, info: EmbeddingInfo | None,
           analyzer: TextAnalyzer | None, progress: Progress | None, summary: IndexSummary, *,
           sentences: bool) -> Manifest:
    if previous is not None:
        shutil.copyfile(directory / previous.generation / DB_FILE, target / DB_FILE)
        try:
            bm25 = BM25Index.load(directory / previous.generation / BM25_FOLDER)
        except DittoError:  # its arrays missing or damaged
            raise SearchIndexError(INDEX_NOT_FOUND, f"the index {printable(directory)} is damaged (the BM25 arrays "
                                                    f"of {previous.generation} cannot be read); build it again into "
                                                    "a new folder") from None
    else:
        bm25 = BM25Index(analyzer=analyzer if analyzer is not None else TextAnalyzer())
    connection = connect(target / DB_FILE, vectors=info is not None)
    try:
        connection.executescript(SCHEMA)
        if info is not None:
            create_vector_table(connection, info.dimensions)
        changed, touched, gone, replaced = plan.changed, plan.touched, plan.gone, plan.replaced
        new_rows = [row for loaded in changed for row in loaded.passages]
        _check_ids(connection, new_rows, {*gone, *replaced})
        vectors_of = _embed_rows(new_rows, embed, progress) if embed is not None else None
        backfill: list[tuple[int, bytes]] = []
        if embed is not None and previous is not None and previous.embedding is None:
            # vectors are new to this index: the passages it already holds get theirs too
            leaving = {*gone, *replaced}
            kept = [(rowid, heading_over(text, heading)) for rowid, path, heading, text in
                    connection.execute("SELECT rowid, path, heading, text FROM passages") if path not in leaving]
            for start in range(0, len(kept), _EMBED_CHUNK):
                chunk = kept[start:start + _EMBED_CHUNK]
                backfill.extend((rowid, np.asarray(vector, dtype=np.float32).tobytes())
                                for (rowid, _), vector in zip(chunk, embed([text for _, text in chunk]), strict=True))
                if progress is not None:
                    progress("embed", min(start + _EMBED_CHUNK, len(kept)), len(kept))
        sentences_of: list[list[tuple[bytes, bytes]]] | None = None
        sentence_backfill: list[tuple[int, bytes, bytes]] = []
        if sentences and embed is not None:
            bare: list[tuple[int, str]] = []
            if previous is not None and not previous.sentences:
                # passages without sentence vectors yet (an index made before them, or with sentences=False)
                leaving = {*gone, *replaced}
                bare = [(rowid, text) for rowid, path, text in connection.execute(
                    "SELECT rowid, path, text FROM passages WHERE rowid NOT IN (SELECT passage FROM sentences)")
                    if path not in leaving]
            embedded = _sentence_vectors([*(row.text for row in new_rows), *(text for _, text in bare)], embed,
                                         progress)
            sentences_of = embedded[:len(new_rows)]
            for (rowid, _), rows in zip(bare, embedded[len(new_rows):], strict=True):
                sentence_backfill.extend((rowid, key, vector) for key, vector in rows)
        stale_ids = _ids_of(connection, [*gone, *replaced])
        connection.execute("BEGIN")
        try:
            if backfill:
                connection.executemany("INSERT INTO vectors(rowid, embedding) VALUES (?, ?)", backfill)
            if sentence_backfill:
                connection.executemany("INSERT INTO sentences(passage, sha256, embedding) VALUES (?, ?, ?)",
                                       sentence_backfill)
            _write(connection, gone, replaced, changed, touched, new_rows, vectors_of, sentences_of)
            _remember_skips(connection, plan)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        if progress is not None:
            progress("bm25", 0, 1)
        bm25.remove(stale_ids)
        bm25.add({"id": row.id, "content": row.search_text, "metadata": row.search_metadata()} for row in new_rows)
        bm25.save(target / BM25_FOLDER)
        _sync_tree(target)
        passages = connection.execute("SELECT count(*) FROM passages").fetchone()[0]
        files = connection.execute("SELECT count(*) FROM files").fetchone()[0]
        if progress is not None:
            progress("bm25", 1, 1)
    finally:
        connection.close()
    summary.passages = passages
    summary.files = files
    summary.embedded = len(new_rows) + len(backfill) if embed is not None else 0
    summary.sentences = len({key for rows in sentences_of or () for key, _ in rows}
                            | {key for _, key, _ in sentence_backfill})
    return Manifest(generation=target.name, passages=passages, files=files, analyzer=bm25.analyzer.config(),
                    embedding=info if info is not None else (previous.embedding if previous else None),
                    updated=time.time(), cutter=PASSAGES_VERSION, sentences=sentences)


def _check_ids(connection: Any, rows: Sequence[PassageRow], leaving: set[str]) -> None:
    """Refuse a passage id given twice in this run, or already held by a file that stays."""
    seen: dict[str, str] = {}
    for row in rows:
        other = seen.get(row.id)
        if other is not None:
            raise SearchIndexError(INDEX_INVALID_INPUT, f"the id {printable(row.id)} is given twice (in "
                                                        f"{printable(other)} and {printable(row.path)})")
        seen[row.id] = row.path
    for start in range(0, len(rows), 500):
        chunk = [row.id for row in rows[start:start + 500]]
        found = connection.execute(
            f"SELECT id, path FROM passages WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
        for passage_id, path in found:
            if path not in leaving:
                raise SearchIndexError(INDEX_INVALID_INPUT, f"the id {printable(passage_id)} is already in the index "
                                                            f"(from {printable(path)})")


def _ids_of(connection: Any, paths: Iterable[str]) -> list[str]:
    ids: list[str] = []
    for path in paths:
        ids.extend(row[0] for row in connection.execute("SELECT id FROM passages WHERE path = ?", (path,)))
    return ids


def _embed_rows(rows: Sequence[PassageRow], embed: Callable[[list[str]], list[Any]],
                progress: Progress | None) -> list[bytes]:
    vectors: list[bytes] = []
    for start in range(0, len(rows), _EMBED_CHUNK):
        chunk = rows[start:start + _EMBED_CHUNK]
        for vector in embed([row.search_text for row in chunk]):
            vectors.append(np.asarray(vector, dtype=np.float32).tobytes())
        if progress is not None:
            progress("embed", min(start + _EMBED_CHUNK, len(rows)), len(rows))
    return vectors


def _sentence_vectors(texts: Sequence[str], embed: Callable[[list[str]], list[Any]],
                      progress: Progress | None) -> list[list[tuple[bytes, bytes]]]:
    """For each passage text, its sentences' (key, float32 vector bytes); a sentence repeated across
    passages is embedded once."""
    per_passage = [sentence_texts(text) for text in texts]
    unique = list(dict.fromkeys(sentence for sentences in per_passage for sentence in sentences))
    vectors: dict[str, bytes] = {}
    for start in range(0, len(unique), _EMBED_CHUNK):
        chunk = unique[start:start + _EMBED_CHUNK]
        for text, vector in zip(chunk, embed(chunk), strict=True):
            vectors[text] = np.asarray(vector, dtype=np.float32).tobytes()
        if progress is not None:
            progress("sentences", min(start + _EMBED_CHUNK, len(unique)), len(unique))
    return [[(sentence_key(sentence), vectors[sentence]) for sentence in sentences] for sentences in per_passage]


def _remember_skips(connection: Any, plan: _Plan) -> None:
    """Keep the files left out for a tallied reason, so that later runs count them without reading them."""
    connection.executemany("DELETE FROM skipped WHERE path = ?", [(path,) for path in plan.unskipped])
    connection.executemany("INSERT OR REPLACE INTO skipped(path, size, mtime_ns, reason) VALUES (?, ?, ?, ?)",
                           [(source.path, source.size, source.mtime_ns, reason) for source, reason in plan.skipped])


def _write(connection: Any, gone: Sequence[str], replaced: Sequence[str], changed: Sequence[LoadedFile],
           touched: Sequence[SourceFile], rows: Sequence[PassageRow], vectors: Sequence[bytes] | None,
           sentences: Sequence[Sequence[tuple[bytes, bytes]]] | None = None) -> None:
    has_vectors, has_sentences = has_table(connection, "vectors"), has_table(connection, "sentences")
    for path in [*gone, *replaced]:
        if has_vectors:
            connection.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM passages WHERE path = ?)",
                               (path,))
        if has_sentences:
            connection.execute("DELETE FROM sentences WHERE passage IN (SELECT rowid FROM passages WHERE path = ?)",
                               (path,))
        connection.execute("DELETE FROM passages WHERE path = ?", (path,))
    for path in [*gone, *replaced]:
        connection.execute("DELETE FROM extracted WHERE path = ?", (path,))
    for path in gone:
        connection.execute("DELETE FROM files WHERE path = ?", (path,))
    for loaded in changed:
        source = loaded.source
        connection.execute("INSERT OR REPLACE INTO files(path, kind, sha256, size, mtime_ns, raw) VALUES "
                           "(?, ?, ?, ?, ?, ?)", (source.path, source.kind, loaded.sha256, source.size,
                                                  source.mtime_ns, loaded.raw))
        if loaded.extracted is not None:
            connection.execute("INSERT OR REPLACE INTO extracted(path, text) VALUES (?, ?)",
                               (source.path, loaded.extracted))
    for source in touched:
        connection.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                           (source.size, source.mtime_ns, source.path))
    for position, row in enumerate(rows):
        cursor = connection.execute(
            'INSERT INTO passages(id, path, ordinal, start, "end", line_start, line_end, sha256, heading, text, '
            "metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.path, row.ordinal, row.start, row.end, row.line_start, row.line_end, row.sha256,
             row.heading, row.text, json.dumps(row.metadata, ensure_ascii=False)))
        if vectors is not None:
            connection.execute("INSERT INTO vectors(rowid, embedding) VALUES (?, ?)",
                               (cursor.lastrowid, vectors[position]))
        if sentences is not None:
            connection.executemany("INSERT INTO sentences(passage, sha256, embedding) VALUES (?, ?, ?)",
                                   [(cursor.lastrowid, key, vector) for key, vector in sentences[position]])


def _sync_tree(folder: Path) -> None:
    """``fsync`` every file of a finished generation before the manifest names it."""
    for root, _, names in os.walk(folder):
        for name in names:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        sync_folder(Path(root))
