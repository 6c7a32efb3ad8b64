"""Documents searched through a persistent index: a prepared one (``--index``) or the folder cache.

``--documents`` folders are indexed once into a **folder cache** (an index directory
under ``$DITTO_INDEX_CACHE_DIR``, default the user cache folder's ``ditto/indexes``,
one per set of roots, ignore globs and retrieval mode). Each task brings it up to date
incrementally (:func:`ditto.retrieval.index.update_index`: unchanged files are not
read again, changed ones re-cut, deleted ones dropped) and searches it, so only the
first task over a folder pays for reading and cutting it. The cache's BM25 analysis is
the documents source's own (CJK characters one by one, command-line options as
terms, the heading path scored with each passage), so its ranking is the one reading
the folder gives.

A brief stays verifiable offline as with folders: a hit's snapshot is the file's
bytes *as indexed* (kept in the index), its offsets and lines point into them, and
``verify`` checks the quote against that snapshot. An HTML file is read as its main
text (see :mod:`ditto.retrieval.index.sources`): its snapshot holds the HTML as ``raw``
and that text as ``extracted.txt``, quotes point into the text, and the evidence's
locator is ``{"extractedSha256"}``, the text's own hash (as a web page's). A JSONL or BEIR record has no file
of its own to quote from, so its snapshot is the record's text as indexed (UTF-8; a
BEIR record's title and text), its URI the record file's ``file://`` URI with the
percent-encoded record id as the fragment (:func:`record_uri`), and its locator
``{"recordId", "recordLine"}`` (the id as given and its line in that file). Each record
is a document of its own for the per-query limit.

Retrieval: hybrid (BM25 + the index's embedding model) when the index has
vectors and the ``embed`` extra can load their model, BM25 otherwise; the folder cache
embeds when the extra is installed (``DITTO_RESEARCH_EMBED=0`` turns that off). A query in
Chinese, Japanese or Korean script is searched by BM25 alone when the model is one known to
read English only (the packaged all-MiniLM-L6-v2). The coverage notes say which was used.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from ....redaction import printable
from ....text.analysis import OPTION_TERMS_VERSION, TextAnalyzer, has_cjk
from ....text.passages import MAX_PASSAGE_CHARS, PASSAGES_VERSION
from .base import extracted_sha256, save_file_snapshot
from .repeats import passage_words, says_the_same
from .spans import ranked_spans

__all__ = ["CACHE_ENV", "CACHE_LIMIT_ENV", "DEFAULT_CACHE_LIMIT", "IndexedDocumentSearchProvider", "embeddings_enabled",
           "evict_folder_caches", "folder_cache_dir", "rank_documents", "record_span", "record_uri",
           "select_passages"]

logger = logging.getLogger(__name__)

CACHE_ENV: Final = "DITTO_INDEX_CACHE_DIR"
#: How many folder caches are kept (least recently used ones beyond it are removed); 0 keeps all.
CACHE_LIMIT_ENV: Final = "DITTO_INDEX_CACHE_MAX"
DEFAULT_CACHE_LIMIT: Final = 16
#: Touched each time a task uses a folder cache: its modification time orders the caches for eviction.
_USED_FILE: Final = ".used"
EMBED_ENV: Final = "DITTO_RESEARCH_EMBED"
#: How long a task waits for another task updating the same folder cache.
_BUSY_WAIT_SECONDS: Final = 120.0
_OPEN_LIMIT: Final = 4
#: How much a file's further passages count against other files' best ones (:func:`select_passages`):
#: a query retrieves documents (seed 004), so the slots go to distinct files first, but a long file's
#: second passage may still beat a weak file.
_REPEAT_WEIGHT: Final = 0.75
#: Passages asked of the index per hit wanted: enough that ``limit`` distinct files remain after the
#: per-document cap (a SciFact abstract is three passages, a man page dozens).
_POOL_FACTOR: Final = 10
#: How much a file's next best passages add to its best one's score (:func:`rank_documents`), and how
#: many count. Both weights were chosen on training data only (docs/benchmarks.md): SciFact train
#: claims (a relevant abstract among those shown) and the real-documents train questions (the answer
#: passage among those shown), which pull apart: one abstract per file wants one passage per file, a
#: man page's answer is often its second passage.
_REST_WEIGHT: Final = 0.1
_REST_PASSAGES: Final = 2
#: The documents source's analysis (see :mod:`.documents`): what the folder cache indexes with.
_ANALYZER_CONFIG: Final = {"stopwords": "english", "stemmer": "english", "cjk": "unigram", "options": True,
                            "digits": True}

_OPENED: OrderedDict[tuple[str, str], Any] = OrderedDict()
_OPENED_LOCK = threading.Lock()


def embeddings_enabled(env: Mapping[str, str]) -> bool:
    """Whether research embeds: the ``embed`` extra is installed and ``$DITTO_RESEARCH_EMBED`` (the task's
    environment, then the process's) is not ``0``."""
    from ....retrieval.index.embedding import embedding_available

    wanted = env.get(EMBED_ENV) or os.environ.get(EMBED_ENV, "1")
    return wanted != "0" and embedding_available()


def folder_cache_dir(env: Mapping[str, str]) -> Path:
    """Where folder caches live: ``$DITTO_INDEX_CACHE_DIR`` (the task's environment, then the process's),
    else the user cache folder's ``ditto/indexes``."""
    given = env.get(CACHE_ENV) or os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ditto")) / "indexes"


def _cache_limit(env: Mapping[str, str]) -> int:
    given = env.get(CACHE_LIMIT_ENV) or os.environ.get(CACHE_LIMIT_ENV)
    if given is None:
        return DEFAULT_CACHE_LIMIT
    try:
        return max(0, int(given))
    except ValueError:
        logger.warning("%s=%s is not a number; keeping %d folder caches", CACHE_LIMIT_ENV, printable(given),
                       DEFAULT_CACHE_LIMIT)
        return DEFAULT_CACHE_LIMIT


def evict_folder_caches(root: Path, current: Path, limit: int) -> list[Path]:
    """Keep at most ``limit`` folder caches under ``root``: remove the least recently used others.

    Each folder searched gets its own cache, so without this ``root`` grows with every distinct
    folder ever researched. ``current`` (the cache this task uses) is marked used and never removed;
    nor is a cache another process is updating (its writer lock is taken: :mod:`ditto.retrieval.index.lock`)
    or one this process has open. A task of another process that is only *reading* a cache holds no
    lock; removing it under that task is safe on POSIX (its open files stay readable) and only a
    cache used longer ago than ``limit`` others is removed. ``limit`` 0 keeps every cache.
    Returns the caches removed; a cache that cannot be removed is logged and left.
    """
    import shutil

    from ....retrieval.index import SearchIndexError
    from ....retrieval.index.lock import writer_lock

    (current / _USED_FILE).touch()
    if limit <= 0:
        return []
    caches = []
    for entry in root.iterdir():
        marker = entry / _USED_FILE if (entry / _USED_FILE).exists() else entry / "manifest.json"
        if entry.is_dir() and not entry.is_symlink() and marker.exists():
            caches.append((marker.stat().st_mtime, entry))
    caches.sort(key=lambda item: item[0], reverse=True)
    with _OPENED_LOCK:
        opened = {Path(directory) for directory, _ in _OPENED}
    removed = []
    kept = 1  # current
    for _, entry in caches:
        if entry.resolve() == current.resolve():
            continue
        if kept < limit or entry.resolve() in opened:
            kept += 1
            continue
        try:
            with writer_lock(entry):
                shutil.rmtree(entry)
        except SearchIndexError:
            continue  # another task is updating it: in use
        except OSError:
            logger.exception("removing the folder cache %s failed", printable(entry))
            continue
        removed.append(entry)
    return removed


def _cache_key(roots: Sequence[Path], ignore: Sequence[str], model: str | None) -> str:
    described = json.dumps({"roots": sorted(str(root.resolve()) for root in roots), "ignore": list(ignore),
                            "analyzer": _ANALYZER_CONFIG, "embedding": model, "passages": PASSAGES_VERSION,
                            "options": OPTION_TERMS_VERSION},
                           sort_keys=True)
    return hashlib.sha256(described.encode("utf-8")).hexdigest()[:24]


def _open_cached(directory: Path) -> Any:
    """The opened index of ``directory``'s current generation, shared by the tasks of this process."""
    from ....retrieval.index import open_index
    from ....retrieval.index.manifest import read_manifest

    generation = read_manifest(directory).generation
    key = (str(directory.resolve()), generation)
    with _OPENED_LOCK:
        index = _OPENED.get(key)
        if index is not None:
            _OPENED.move_to_end(key)
            return index
    index = open_index(directory)
    with _OPENED_LOCK:
        _OPENED[(key[0], index.generation)] = index
        while len(_OPENED) > _OPEN_LIMIT:
            _, evicted = _OPENED.popitem(last=False)
            evicted.close()
    return index


def record_uri(path: str, record_id: str) -> str:
    """Where a JSONL/BEIR record is: its file's ``file://`` URI, the record id as the fragment.

    Every character of the id but the unreserved ones (letters, digits, ``-._~``) is
    percent-encoded as UTF-8, so an id holding spaces, ``#``, ``/``, ``%`` or any Unicode is
    one well-formed fragment that ``unquote`` gives back, and this is the only form a
    brief holds (``verify`` rebuilds it from the parts and compares).
    """
    return f"{Path(path).as_uri()}#{quote(record_id, safe='')}"


def record_span(text: str, query: str) -> tuple[int, int] | None:
    """The ``(start, end)`` of a record's text shown for ``query``; ``None`` for a blank record.

    A record that fits one passage (:data:`MAX_PASSAGE_CHARS`, surrounding white space
    trimmed) is shown whole: the index found the record, and its paragraphs belong
    together. A longer one shows its passage that best matches the query (its first when
    none shares a term, as a vector hit may), like a knowledge record's.
    """
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    if start >= end:
        return None
    if end - start <= MAX_PASSAGE_CHARS:
        return start, end
    spans = ranked_spans(text, [query], 1, fallback=True)
    if not spans:  # only headings or rules: its beginning
        return start, start + MAX_PASSAGE_CHARS
    span = spans[0][0]
    return span.start, span.end


@dataclass(slots=True)
class _State:
    index: Any
    provider: Any
    notes: tuple[str, ...]
    #: The index's JSONL/BEIR files (their hits are records); empty for a folder cache, which has none.
    records: frozenset[str] = frozenset()
    #: The index's embedding model reads English only: a query in CJK script is searched by BM25 alone.
    english_only: bool = False


#: How often the indexing of a documents folder is told to the task's progress, at most.
_PROGRESS_EVERY_S: Final = 2.0
_INDEXING_PHASES: Final = {"read": "reading files", "embed": "embedding passages", "sentences": "embedding sentences",
                           "bm25": "BM25 arrays"}
#: An indexed text file as research quotes it: its SHA-256, its bytes, and an HTML file's extracted text.
_StoredFile = tuple[str, bytes, str | None]


def _stored_file(index: Any, path: str) -> _StoredFile | None:
    stored = index.file_bytes(path)
    return None if stored is None else (*stored, index.extracted_text(path))


class IndexedDocumentSearchProvider:
    """A ``RetrievalSearchProvider`` for the task's documents target over an index (see the module docs).

    ``save_snapshot`` is called as :class:`~.documents.DocumentSearchProvider` calls it: ``(raw)``, or
    ``(raw, text)`` for an HTML file.
    """

    def __init__(self, *, index: Path | None, documents: Sequence[Path], ignore: Sequence[str],
                 save_snapshot: Callable[..., str], notes_key: Path | None,
                 env: Mapping[str, str], progress: Callable[[Any], None] | None = None) -> None:
        self._index_dir = index
        self._documents = list(documents)
        self._ignore = tuple(ignore)
        self._save_snapshot = save_snapshot
        self._notes_key = notes_key
        self._env = dict(env)
        self._progress = progress
        self._state: _State | None = None
        self._saved: set[str] = set()
        self._lock = asyncio.Lock()

    def _use_embeddings(self) -> bool:
        return embeddings_enabled(self._env)

    async def _open(self) -> _State:
        from ....retrieval import RetrievalError
        from ....retrieval.index import SearchIndexError, create_index_search_provider
        from ....retrieval.index.embedding import local_embedding

        notes: list[str] = []
        try:
            if self._index_dir is not None:
                directory = self._index_dir
                index = await asyncio.to_thread(_open_cached, directory)
                records = await asyncio.to_thread(index.record_files)
                where = f"the index {printable(directory)}"
            else:
                records = frozenset()
                index, skipped = await self._folder_cache()
                notes.extend(skipped)
                where = "the folder cache"
                if isinstance(index, _EmptyIndex):
                    return _State(index, None, tuple(notes))
            embedding = None
            if index.embedding is not None and self._use_embeddings():
                try:
                    embedding = await asyncio.to_thread(local_embedding, index.embedding.model)
                except RetrievalError as error:  # the index's model cannot run here (its package missing)
                    if error.code != "RETRIEVAL_PROVIDER_UNAVAILABLE":
                        raise
                    logger.warning("documents: searching %s by BM25 alone: %s", where, error.message)
                    notes.append(f"embeddings off: {error.message}")
        except SearchIndexError as error:
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", error.message) from None
        # Coordinated BM25, as the in-memory documents search ranks (a passage holding every query word
        # outranks a short one repeating one rare word).
        provider = create_index_search_provider(index, embedding=embedding, coordinate=True)
        english_only = False
        if provider.vectors:
            english_only = _reads_english_only(index.embedding.model)
            notes.append(f"retrieval: hybrid (BM25 + {index.embedding.model} embeddings) over {where}"
                         + ("; BM25 alone for a query in Chinese, Japanese or Korean script, which the model "
                            "does not read" if english_only else ""))
        else:
            notes.append(f"retrieval: BM25 over {where}")
        return _State(index, provider, tuple(notes), records, english_only)

    async def _folder_cache(self) -> tuple[Any, list[str]]:
        from ....retrieval import RetrievalError
        from ....retrieval.index import IndexLimits, SearchIndexError, update_index
        from ....retrieval.index.embedding import local_embedding
        from ....text.files import DEFAULT_LIMITS, documents_described
        from ....worker.interaction.extractor import html_document_reader

        if not await asyncio.to_thread(lambda: any(os.path.lexists(path) for path in self._documents)):
            named = printable(self._documents[0]) if self._documents else "(none)"
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE",
                                 f"no document path exists or may be read ({named} does not exist)")
        embedding = await asyncio.to_thread(local_embedding) if self._use_embeddings() else None
        model = getattr(embedding, "model_id", None)
        directory = folder_cache_dir(self._env) / _cache_key(self._documents, self._ignore, model)
        limits = IndexLimits(max_files=DEFAULT_LIMITS.max_files, max_entries=DEFAULT_LIMITS.max_entries,
                             max_depth=DEFAULT_LIMITS.max_depth, max_file_bytes=DEFAULT_LIMITS.max_file_bytes)
        deadline = time.monotonic() + _BUSY_WAIT_SECONDS
        delay = 0.05
        while True:
            try:
                summary = await update_index(directory, self._documents, ignore=self._ignore, embedding=embedding,
                                             analyzer=TextAnalyzer.from_config(dict(_ANALYZER_CONFIG)),
                                             limits=limits, records=False, html=html_document_reader(),
                                             progress=self._indexing_progress())
                break
            except SearchIndexError as error:
                if error.code == "INDEX_BUSY" and time.monotonic() < deadline:
                    await asyncio.sleep(delay)  # another task is updating this cache: its result is ours too
                    delay = min(delay * 2, 1.0)
                    continue
                if error.code == "INDEX_INVALID_INPUT":  # nothing readable: no hits, said in the coverage
                    names = ", ".join(printable(path) for path in self._documents[:3])
                    note = f"no readable document was found in {names} ({documents_described(limits.max_file_bytes)})"
                    logger.warning("documents: %s", note)
                    return _EmptyIndex(), [*error.message.split("; ", 1)[1:], note]
                raise
        index = await asyncio.to_thread(_open_cached, directory)
        await asyncio.to_thread(evict_folder_caches, directory.parent, directory, _cache_limit(self._env))
        return index, list(summary.skipped)

    def _indexing_progress(self) -> Callable[[str, int, int], None] | None:
        """The folder cache's progress as the task's progress events, on the task's event loop: a step at most
        every :data:`_PROGRESS_EVERY_S` seconds, and each phase's first and last (a first task over
        ``/usr/share/doc`` reads and embeds for minutes)."""
        tell = self._progress
        if tell is None:
            return None
        from ..config import ProgressEvent

        loop = asyncio.get_running_loop()
        last: list[tuple[str, float]] = [("", 0.0)]  # the phase told last, and when

        def progress(phase: str, done: int, total: int) -> None:
            now = time.monotonic()
            if phase == last[0][0] and done < total and now - last[0][1] < _PROGRESS_EVERY_S:
                return
            last[0] = (phase, now)
            what = _INDEXING_PHASES.get(phase, phase)
            event = ProgressEvent("evidence", f"indexing the documents: {what}", "document", done, total)
            loop.call_soon_threadsafe(tell, event)

        return progress

    def _snapshot(self, raw: bytes, digest: str, extracted: str | None = None) -> None:
        if digest not in self._saved:
            try:
                save_file_snapshot(self._save_snapshot, raw, extracted)
            except Exception:
                from ....retrieval import RetrievalError

                logger.exception("saving a document snapshot failed")
                raise RetrievalError("RETRIEVAL_BACKEND_ERROR", "a document snapshot could not be saved") from None
            self._saved.add(digest)

    def _file_candidate(self, hit: Any, stored: _StoredFile | None, target: str, score: float) -> Any:
        """A text file's passage hit as a candidate over the file's bytes as indexed (its snapshot; an HTML
        file's with its extracted text, which the passage's offsets point into)."""
        from ....retrieval import RetrievalCandidate, RetrievalCandidateSource

        if stored is None:  # not a text file the index keeps (it never is: records are handled apart)
            return None
        digest, raw, extracted = stored
        self._snapshot(raw, digest, extracted)
        meta = hit.metadata
        uri = Path(meta["path"]).as_uri()
        ref = f"{uri}#L{meta['lineStart']}-L{meta['lineEnd']}"
        locator = None if extracted is None else {"extractedSha256": extracted_sha256(extracted)}
        return RetrievalCandidate(
            id=f"{digest[:16]}:{meta['start']}", content=hit.content, score=score,
            source=RetrievalCandidateSource(target=target, ref=ref),
            metadata={"uri": uri, "snapshotSha256": digest, "start": meta["start"], "end": meta["end"],
                      "lineStart": meta["lineStart"], "lineEnd": meta["lineEnd"], "heading": meta.get("heading"),
                      "locator": locator})

    def _record_candidate(self, hit: Any, query: str, target: str, score: float) -> Any:
        """A JSONL/BEIR record hit as a candidate over the record's own snapshot, or ``None`` (blank record)."""
        from ....retrieval import RetrievalCandidate, RetrievalCandidateSource
        from ..verification import line_range

        text, record_id = hit.content, hit.id
        if not isinstance(text, str) or not isinstance(record_id, str):
            return None
        span = record_span(text, query)
        if span is None:
            return None
        start, end = span
        raw = text.encode("utf-8")
        digest = hashlib.sha256(raw).hexdigest()
        self._snapshot(raw, digest)
        meta = hit.metadata
        uri = record_uri(meta["path"], record_id)
        first, last = line_range(text, start, end)
        return RetrievalCandidate(
            id=f"{digest[:16]}:{start}", content=text[start:end], score=score,
            source=RetrievalCandidateSource(target=target, ref=uri),
            metadata={"uri": uri, "snapshotSha256": digest, "start": start, "end": end, "lineStart": first,
                      "lineEnd": last, "heading": None,
                      "locator": {"recordId": record_id, "recordLine": meta["lineStart"]}})

    async def sentence_vectors(self, texts: Sequence[str], model: str) -> dict[str, Any]:
        """The index's stored vectors of those of ``texts`` that are sentences of its passages, when they are
        ``model``'s (the built-in model reads with it); nothing before the first search or for another model."""
        index = self._state.index if self._state is not None else None
        info = getattr(index, "embedding", None)
        if index is None or info is None or info.model != model:
            return {}
        found: dict[str, Any] = await asyncio.to_thread(index.sentence_vectors, texts)
        return found

    async def search(self, input: Any, context: Any = None) -> Any:
        from ....retrieval import RetrievalSearchOutput
        from .documents import WALK_NOTES, document_query, load_documents

        request, text = document_query(input, context)
        async with self._lock:
            if self._state is None:
                self._state = await load_documents(self._open, "opening the documents index failed")
                if self._notes_key is not None:
                    WALK_NOTES[self._notes_key] = self._state.notes
        state = self._state
        defaults = getattr(context, "defaults", None)
        limit = request.limit or getattr(defaults, "search_limit", None) or 10
        if isinstance(state.index, _EmptyIndex):
            return RetrievalSearchOutput(candidates=(), strategy=request.strategy, target=request.target)
        asked: dict[str, Any] = {"query": {"content": text}, "target": {"name": request.target.name},
                                 "limit": limit * _POOL_FACTOR}
        if request.filter:
            asked["filter"] = request.filter  # the close reading's path filter (see .focus)
        if state.english_only and has_cjk(text):
            # An English model's vector of a Chinese question is noise, and the hybrid weighs it 0.75: on the
            # real-documents questions "cp 如何递归复制目录？" lost cp's -R line to it (BM25 finds it first).
            asked["strategy"] = "bm25"
        output = await state.provider.search(asked, context)
        candidates = []
        files: dict[str, _StoredFile | None] = {}
        shown: list[frozenset[str]] = []
        for score, hit in select_passages(output.candidates, records=state.records):
            words = passage_words(hit.content)
            if any(says_the_same(words, earlier) for earlier in shown):
                continue  # the same text in another file (a page and its source), or twice in one: shown once
            shown.append(words)
            path = hit.metadata["path"]
            if path in state.records:
                candidate = self._record_candidate(hit, text, request.target.name, score)
            else:
                if path not in files:
                    files[path] = await asyncio.to_thread(_stored_file, state.index, path)
                candidate = self._file_candidate(hit, files[path], request.target.name, score)
            if candidate is not None:
                candidates.append(candidate)
                if len(candidates) >= limit:
                    break
        return RetrievalSearchOutput(candidates=tuple(candidates), strategy=request.strategy, target=request.target)


def _reads_english_only(model: str) -> bool:
    """Whether ``model`` is a packaged model known to read English only (a model this library does not
    know is trusted with every query)."""
    from ....retrieval.providers.local_embedding import model_languages

    return model_languages(model) == ("en",)


def rank_documents(hits: Sequence[Any], *, rest_weight: float | None = None,
                   records: frozenset[str] = frozenset()) -> list[tuple[float, list[Any]]]:
    """The documents among ranked passage ``hits``, best first: ``(score, the document's hits best first)``.

    A research query retrieves *documents* (seed 004: at most 3 per query), and a document is a
    file, so passages are grouped by their ``metadata["path"]``; in a JSONL/BEIR file (a path in
    ``records``) each record is a document of its own (grouped by path and hit id). A file scores its best passage's
    score plus ``rest_weight`` times its next :data:`_REST_PASSAGES` best (negative ones count 0):
    a file that matches the query in several passages (an abstract's title and text) is more
    likely about it than one with a single matching passage, and the bound keeps a long file
    (a man page of dozens of matching passages) from winning on length. Ties keep the order of
    the files' best passages. Hits without a path are left out.
    """
    weight = _REST_WEIGHT if rest_weight is None else rest_weight
    groups: dict[str | tuple[str, str], list[Any]] = {}
    for hit in hits:
        path = (hit.metadata or {}).get("path")
        if isinstance(path, str):  # the document: the file, or in a JSONL/BEIR file the record itself
            groups.setdefault((path, str(hit.id)) if path in records else path, []).append(hit)
    scored = []
    for position, passages in enumerate(groups.values()):
        passages.sort(key=lambda hit: -hit.score)
        rest = sum(max(0.0, hit.score) for hit in passages[1:1 + _REST_PASSAGES])
        scored.append((passages[0].score + weight * rest, position, passages))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(score, passages) for score, _, passages in scored]


def select_passages(hits: Sequence[Any], *, repeat_weight: float | None = None,
                    rest_weight: float | None = None, records: frozenset[str] = frozenset()
                    ) -> list[tuple[float, Any]]:
    """Ranked passage ``hits`` reordered so that the slots of a query go to distinct files first.

    Each file's best passage scores as the file (:func:`rank_documents`); its ``k``-th further
    passage scores its own score times ``repeat_weight ** k``. ``repeat_weight`` 0 gives one
    passage per file (the documents of seed 004's "at most 3 documents per query"), 1 the plain
    passage order: an abstract is one passage's worth of answer, while a man page's answer is often
    its second or third passage. Returns ``(score, hit)`` best first (ties: the files' order).
    """
    repeat = _REPEAT_WEIGHT if repeat_weight is None else repeat_weight
    entries = []
    for rank, (score, passages) in enumerate(rank_documents(hits, rest_weight=rest_weight, records=records)):
        entries.append((score, rank, 0, passages[0]))
        entries.extend((hit.score * repeat ** k, rank, k, hit) for k, hit in enumerate(passages[1:], start=1)
                       if repeat > 0)
    entries.sort(key=lambda entry: (-entry[0], entry[1], entry[2]))
    return [(score, hit) for score, _, _, hit in entries]


class _EmptyIndex:
    """Stands for a folder cache with nothing to search (every file skipped): no hits."""
