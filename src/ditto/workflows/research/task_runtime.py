"""A runtime with the default workers for one task (public API).

* MEMORY on the task's ``memory.sqlite`` (or the caller's ``memory`` store: a
  SQLite file, or a PostgreSQL DSN that several controllers share);
* RETRIEVAL with the targets ``research-documents`` (the task's documents)
  and ``research-knowledge`` (the SQLite FTS5 file or PostgreSQL DSN given as
  ``kb``, else the task's ``knowledge.sqlite``), plus any ``targets`` the
  application passes (for ``kb="target:<name>"``);
* CONTEXT with Redis when ``DITTO_WORKER_CONTEXT_REDIS_URL`` is set, else the
  in-memory store;
* INFER with the built-in ``builtin:extractive`` model (or OpenAI-compatible
  settings from the environment), unless ``workers`` brings an INFER worker;
* INTERACTION for the web, only when the request reads the web: its engine,
  the allowed origins (the request's, else the read pages' or the wiki's own)
  and the Brave key from ``DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY``.

Any worker type in ``workers`` replaces the default of that type. Nothing is
opened until the first call; leaving the ``async with`` closes what was opened.

Example::

    task = create_task(ResearchRequest(entry="document-search", question="How long are backups kept?"))
    async with open_research_runtime(task) as runtime:
        result = await document_search.run(runtime, {"directory": str(task.directory)})
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._extras import require_extra
from ...errors import MissingExtraError
from ...redaction import printable
from ...runtime import Runtime, WorkerDefinition, create_ditto
from .config import ProgressEvent
from .sample import KB_CONTENT_COLUMN, KB_TABLE
from .sources.documents import DOCUMENTS_TARGET, DocumentSearchProvider
from .sources.knowledge import EXTERNAL_TARGET
from .taskdir import ResearchTask, is_sqlite_file
from .types import ModelRef, ResearchRequest

if TYPE_CHECKING:
    from ...worker.infer.providers.builtin import EmbedFunction

__all__ = ["open_research_runtime", "research_workers"]

logger = logging.getLogger(__name__)


class _LazySqlProvider:
    """Opens the knowledge base on the first search, so a missing or broken file is a source failure."""

    def __init__(self, kb: str) -> None:
        self._kb = kb
        self._provider: Any = None
        self._close: Callable[[], Awaitable[None]] | None = None
        self._lock = asyncio.Lock()

    async def _open(self) -> Any:
        from ...retrieval import RetrievalError
        from ...retrieval.providers.sql import create_sql_search_provider

        kb = self._kb
        try:
            if kb.startswith(("postgres://", "postgresql://")):
                require_extra("psycopg", "postgres", "a PostgreSQL knowledge base")
                import psycopg

                connection = await psycopg.AsyncConnection.connect(kb, autocommit=True)

                async def close_pg() -> None:
                    await connection.close()

                self._close = close_pg
                return create_sql_search_provider(connection, {
                    "dialect": "postgres", "table": KB_TABLE, "content_column": KB_CONTENT_COLUMN,
                    "id_column": "id"})
            connection_sqlite = await asyncio.to_thread(_open_sqlite, Path(kb))

            async def close_sqlite() -> None:
                connection_sqlite.close()

            self._close = close_sqlite
            return create_sql_search_provider(connection_sqlite, {
                "dialect": "sqlite", "table": KB_TABLE, "content_column": KB_CONTENT_COLUMN})
        except _KnowledgeBaseProblem as problem:  # an ordinary mistake: say what it is, no traceback
            logger.warning("knowledge base %r: %s", kb if "://" not in kb else "(a DSN)", problem.reason)
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", f"the knowledge base {problem.reason}") from None
        except MissingExtraError as missing:  # our own message, with the install command: shown as it is
            logger.warning("knowledge base: %s", missing.message)
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", missing.message) from None
        except Exception:
            logger.exception("opening the knowledge base failed")
            raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", "the knowledge base cannot be opened") from None

    async def search(self, input: Any, context: Any = None) -> Any:
        async with self._lock:
            if self._provider is None:
                self._provider = await self._open()
        return await self._provider.search(input, context)

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()
            self._close = None


class _KnowledgeBaseProblem(Exception):
    """A knowledge base file that is missing or has not the expected shape (the user's fact to fix)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _open_sqlite(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise _KnowledgeBaseProblem(f"file {str(path)!r} does not exist")
    if not path.is_file():
        raise _KnowledgeBaseProblem(f"{str(path)!r} is not a file")
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    try:
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
                                    (KB_TABLE,)).fetchall()  # also fails now on a file that is not SQLite
    except sqlite3.DatabaseError:
        connection.close()
        raise _KnowledgeBaseProblem(f"{str(path)!r} is not an SQLite database") from None
    if not tables:
        connection.close()
        raise _KnowledgeBaseProblem(f"{str(path)!r} has no table {KB_TABLE!r} (an FTS5 table "
                                    f"{KB_TABLE}(title, {KB_CONTENT_COLUMN}))")
    return connection


def research_workers(task: ResearchTask, *, env: Mapping[str, str] | None = None,
                     targets: Mapping[str, Any] | None = None, skip: frozenset[str] = frozenset(),
                     web: Mapping[str, Any] | None = None, progress: Callable[[ProgressEvent], None] | None = None
                     ) -> tuple[list[WorkerDefinition], list[Callable[[], Awaitable[None]]]]:
    """The default worker definitions for ``task`` (except the types in ``skip``) and their close functions;
    ``progress`` hears how the indexing of a ``--documents`` folder goes (a first task over a big folder)."""
    from ...worker.context import REDIS_URL_ENV, create_context_redis_client, create_context_worker
    from ...worker.memory import create_memory_worker

    source = os.environ if env is None else env
    request = task.request
    closers: list[Callable[[], Awaitable[None]]] = []
    workers: list[WorkerDefinition] = []
    if "MEMORY" not in skip:
        store = _memory_store(task)
        closers.append(store.close)
        workers.append(create_memory_worker(store=store))
    if "CONTEXT" not in skip:
        if source.get(REDIS_URL_ENV):
            client = create_context_redis_client(source)
            closers.append(client.aclose)
            workers.append(create_context_worker(redis={"client": client}))
        else:
            from ...worker.context import create_in_memory_context_store

            workers.append(create_context_worker(services={"state_store": create_in_memory_context_store()}))
    documents: Any = None  # the documents' search provider: the built-in model reads its stored sentence vectors
    needs_retrieval = "documents" in request.sources or (
        "knowledge" in request.sources and request.knowledge in ("external", "both"))
    if (needs_retrieval or targets) and "RETRIEVAL" not in skip:
        documents = _documents_provider(task, source, progress)
        bindings: dict[str, Any] = {DOCUMENTS_TARGET: {"default_strategy": "keyword",
                                                       "providers": {"keyword": documents}}}
        kb = request.kb
        if kb is None or not kb.startswith("target:"):
            provider = _LazySqlProvider(kb if kb is not None else str(task.knowledge_path))
            closers.append(provider.aclose)
            bindings[EXTERNAL_TARGET] = {"default_strategy": "fts", "providers": {"fts": provider}}
        bindings.update(targets or {})
        workers.append(_lazy_retrieval_worker(bindings))
    if "INFER" not in skip:
        semantic = _reads_semantically(request, source)
        workers.append(_infer_worker(source, request.model, embed=_reading_embed(documents) if semantic else None))
    if "web" in request.sources and "INTERACTION" not in skip:
        interaction = _interaction_worker(task, source, web or {})
        workers.append(interaction)
        closers.append(interaction.aclose)
    return workers, closers


def _documents_provider(task: ResearchTask, env: Mapping[str, str],
                        progress: Callable[[ProgressEvent], None] | None = None) -> Any:
    """The task's documents: a prepared index, its folders through the folder cache, or the sample policy.md."""
    request = task.request
    if request.index is None and request.documents is None:
        return DocumentSearchProvider([task.policy_path], ignore=request.ignore, save_snapshot=task.save_snapshot,
                                      notes_key=task.directory)
    from .sources.indexed_documents import IndexedDocumentSearchProvider

    return IndexedDocumentSearchProvider(
        index=Path(request.index) if request.index is not None else None,
        documents=[Path(path) for path in request.documents or ()], ignore=request.ignore,
        save_snapshot=task.save_snapshot, notes_key=task.directory, env=env, progress=progress)


def _memory_store(task: ResearchTask) -> Any:
    """The task's MEMORY store: PostgreSQL for a DSN, else the SQLite file (which must exist when the caller named it).

    The PostgreSQL store connects on its first call, so a server that is down fails the task's first stage
    (``RESEARCH_STORE_UNAVAILABLE``), as a broken SQLite file does.
    """
    from ...worker.memory import create_postgres_memory_store, create_sqlite_memory_store

    if task.memory_dsn is not None:
        return create_postgres_memory_store(task.memory_dsn)
    if task.request.memory is not None and not task.memory_path.is_file():  # never start an empty store silently
        from .errors import ResearchError

        raise ResearchError("RESEARCH_INVALID_INPUT", f"the MEMORY store {printable(task.memory_path)} does "
                                                      "not exist (or is not a file)")
    if task.request.memory is not None and not is_sqlite_file(task.memory_path):
        from .errors import ResearchError

        raise ResearchError("RESEARCH_INVALID_INPUT", f"the MEMORY store {printable(task.memory_path)} is not a "
                                                      "SQLite database")
    if task.request.memory is None and not os.path.lexists(task.memory_path) and _has_run(task):
        from .errors import ResearchError

        raise ResearchError("RESEARCH_STORE_UNAVAILABLE", f"the task's MEMORY store {printable(task.memory_path)} "
                                                          "is missing, and with it the task's checkpoints: it cannot "
                                                          "resume (start a new task)")
    return create_sqlite_memory_store(str(task.memory_path))


def _has_run(task: ResearchTask) -> bool:
    """Whether the task got past its request stage, whose checkpoint is the first write to its own MEMORY store:
    it saved a snapshot or an artifact. A task killed before that has no store yet, and starts afresh."""
    return any(any(folder.iterdir()) for folder in (task.snapshots, task.artifacts) if folder.is_dir())


def _lazy_retrieval_worker(bindings: Mapping[str, Any]) -> WorkerDefinition:
    """RETRIEVAL.SEARCH whose real worker (and the optional retrieval package) loads on the first search.

    A task resumed after its evidence stage never searches, so it never pays for the import.
    """
    state: dict[str, Any] = {}

    async def search(input: Any, context: Any) -> Any:
        handler = state.get("handler")
        if handler is None:
            from ...retrieval import RetrievalTargetRegistry, create_retrieval_worker

            handler = create_retrieval_worker(RetrievalTargetRegistry(bindings)).nodes["RETRIEVAL.SEARCH"]
            state["handler"] = handler
        return await handler(input, context)

    return WorkerDefinition("RETRIEVAL", {"RETRIEVAL.SEARCH": search})


def _reads_semantically(request: ResearchRequest, env: Mapping[str, str]) -> bool:
    """Whether the built-in model reads with embeddings too: when the task searches the user's documents
    through an index with embeddings on (the same local model ranks them), never for the sample."""
    from .sources.indexed_documents import embeddings_enabled

    return (request.model.provider == "builtin:extractive" and "documents" in request.sources
            and (request.index is not None or request.documents is not None) and embeddings_enabled(env))


def _reading_embed(documents: Any) -> EmbedFunction:
    """The built-in model's embedding hook: the research's local embedding model (loaded once per process,
    off the event loop), asked only for the texts the documents' index has not embedded already (an index
    made with that model holds its passages' sentences: what the model reads)."""
    lookup = getattr(documents, "sentence_vectors", None)

    async def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        from ...retrieval.index.embedding import local_embedding

        provider = await asyncio.to_thread(local_embedding)
        model = getattr(provider, "model_id", None)
        known = await lookup(texts, model) if lookup is not None and isinstance(model, str) else {}
        missing = [text for text in texts if text not in known]
        computed = iter(await provider.embed(missing) if missing else ())
        return [tuple(known[text].tolist()) if text in known else next(computed) for text in texts]

    return embed


def _infer_worker(env: Mapping[str, str], model: ModelRef, *, embed: EmbedFunction | None = None) -> WorkerDefinition:
    """The built-in model, plus the ``openai`` provider when ``DITTO_WORKER_INFER_*`` configures one.

    A request for ``openai/NAME`` names the model itself: the server's address is then all the
    environment must give (``DITTO_WORKER_INFER_MODEL`` may stay unset). ``embed`` gives the
    built-in model the local embedding model (see :func:`_reads_semantically`, :func:`_reading_embed`).
    """
    from ...worker.infer import (
        BUILTIN_PROVIDER,
        InferProvider,
        create_extractive_provider,
        create_infer_worker,
        create_openai_provider,
        infer_config_from_env,
    )

    config = infer_config_from_env(env, model=model.model if model.provider == "openai" else None)
    providers: dict[str, InferProvider] = {}
    if config is not None:
        providers["openai"] = create_openai_provider(config)
    if embed is not None:
        providers[BUILTIN_PROVIDER] = create_extractive_provider(embed=embed)
    return create_infer_worker(providers or None)


def _interaction_worker(task: ResearchTask, env: Mapping[str, str], web: Mapping[str, Any]) -> Any:
    from ...worker.interaction import create_interaction_worker
    from .sources.web import web_options

    return create_interaction_worker(web=web_options(task.request, env, **web))


@contextlib.asynccontextmanager
async def open_research_runtime(task: ResearchTask, *, env: Mapping[str, str] | None = None,
                                workers: Sequence[WorkerDefinition] = (),
                                targets: Mapping[str, Any] | None = None, web: Mapping[str, Any] | None = None,
                                progress: Callable[[ProgressEvent], None] | None = None
                                ) -> AsyncIterator[Runtime]:
    """A runtime with ``task``'s default workers; ``workers`` replace defaults of the same type.

    ``web`` overrides the INTERACTION ``WebOptions`` fields (``wikipedia_url``,
    ``ca_file``, ``timeout_s`` …) that the request does not decide; ``progress`` is the task's
    (:class:`ResearchOptions`), told how indexing a documents folder goes.
    """
    replaced = frozenset(worker.type for worker in workers)
    defaults, closers = research_workers(task, env=env, targets=targets, skip=replaced, web=web, progress=progress)
    chosen = [*defaults, *workers]
    runtime = create_ditto(workers=chosen)
    try:
        yield runtime
    finally:
        await runtime.close()
        for close in reversed(closers):
            with contextlib.suppress(Exception):
                await close()
