"""Every built-in research source runs ditto.testing's ResearchSourceContract; the workflow's own document
provider runs the RetrievalProviderContract (issue 15: one source port, a contract suite for it)."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ditto.retrieval import RetrievalCandidate
from ditto.runtime import Runtime, WorkerDefinition
from ditto.testing import ResearchSourceContract, RetrievalProviderContract
from ditto.workflows.research import ResearchRequest, create_task, open_research_runtime
from ditto.workflows.research.records import RequestRecord
from ditto.workflows.research.sources.base import ResearchSource, SourceSetup
from ditto.workflows.research.sources.documents import DocumentSearchProvider, DocumentsSource
from ditto.workflows.research.sources.knowledge import (
    ExternalKnowledgeSource,
    InternalKnowledgeSource,
    import_internal_knowledge,
)
from ditto.workflows.research.sources.web import WebSource
from tests.interaction.servers import make_tls, serve
from tests.research.helpers import write_knowledge_base

POLICY = ("# Backups\n\nEvery database backup is retained for 41 days.\nIncremental backups run every 6 hours.\n\n"
          "Restores are rehearsed every quarter.\n")


def _setup(task: Any) -> SourceSetup:
    return SourceSetup(task, RequestRecord(request_id=task.request_id))


@asynccontextmanager
async def _opened(request: ResearchRequest, directory: Path, make: Any, workers: tuple[WorkerDefinition, ...] = (),
                  web: dict[str, Any] | None = None, keys: tuple[str, ...] = ()
                  ) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
    task = create_task(request, directory=directory / "task")
    async with open_research_runtime(task, env={}, workers=workers, web=web) as runtime:
        setup = SourceSetup(task, RequestRecord(request_id=task.request_id, internal_keys=keys))
        yield runtime, make(setup), task.snapshots


class TestDocumentsSource(ResearchSourceContract):
    """WF-12, WF-6, WF-10: documents through RETRIEVAL.SEARCH on the task's document target."""

    @asynccontextmanager
    async def source(self, directory: Path) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        docs = directory / "docs"
        docs.mkdir()
        (docs / "policy.md").write_text(POLICY, encoding="utf-8")
        request = ResearchRequest(entry="document-search", question="q?", documents=(str(docs),))
        async with _opened(request, directory, DocumentsSource) as opened:
            yield opened

    @asynccontextmanager
    async def failing_source(self, directory: Path) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        request = ResearchRequest(entry="document-search", question="q?", documents=(str(directory / "gone"),))
        async with _opened(request, directory, DocumentsSource) as opened:
            yield opened


class TestExternalKnowledgeSource(ResearchSourceContract):
    """WF-4, WF-6: external knowledge through RETRIEVAL.SEARCH over an SQLite FTS5 file, locators kept."""

    @asynccontextmanager
    async def source(self, directory: Path) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        rows = [(f"Retention {n}", f"Backup retention: each backup is retained for {30 + n} days.") for n in range(5)]
        kb = write_knowledge_base(directory / "kb.sqlite", rows)
        request = ResearchRequest(entry="knowledge-base", question="q?", kb=str(kb))
        async with _opened(request, directory, ExternalKnowledgeSource) as opened:
            yield opened

    @asynccontextmanager
    async def failing_source(self, directory: Path) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        request = ResearchRequest(entry="knowledge-base", question="q?", kb=str(directory / "missing.sqlite"))
        async with _opened(request, directory, ExternalKnowledgeSource) as opened:
            yield opened


class TestInternalKnowledgeSource(ResearchSourceContract):
    """WF-4: internal knowledge through MEMORY.SEARCH on the allowed keys only."""

    @asynccontextmanager
    async def source(self, directory: Path) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        request = ResearchRequest(entry="knowledge-base", question="q?", knowledge="internal",
                                  internal_knowledge_keys=("retention",))
        task = create_task(request, directory=directory / "task")
        async with open_research_runtime(task, env={}) as runtime:
            await import_internal_knowledge(runtime, tenant="acme", records=[
                {"key": "retention", "text": "Backup retention: every backup is retained for 41 days."},
                {"key": "other", "text": "Backup retention days are also named here, but this key is not allowed."}])
            setup = SourceSetup(task, RequestRecord(request_id=task.request_id, internal_keys=("retention",)))
            yield runtime, InternalKnowledgeSource(setup), task.snapshots

    @asynccontextmanager
    async def failing_source(self, directory: Path) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        async def broken(_input: Any) -> Any:
            from ditto.worker.memory import DittoMemoryError

            raise DittoMemoryError("MEMORY_BACKEND_ERROR", "the store is gone")

        request = ResearchRequest(entry="knowledge-base", question="q?", knowledge="internal",
                                  internal_knowledge_keys=("retention",))
        workers = (WorkerDefinition("MEMORY", {"MEMORY.SEARCH": broken}),)
        async with _opened(request, directory, InternalKnowledgeSource, workers, keys=("retention",)) as opened:
            yield opened


def _site() -> Starlette:
    paragraphs = ["Write-ahead logging keeps backup retention days safe while readers continue.",
                  "Checkpoints move pages from the WAL back into the database file."]
    body = "".join(f"<p>{html.escape(text)}</p>" for text in paragraphs)
    page = (f"<!DOCTYPE html><html><head><title>WAL</title></head><body><article><h1>WAL</h1>{body}"
            "</article></body></html>")

    async def article(request: Request) -> Response:
        if request.path_params["name"] == "broken":
            return Response("boom", status_code=500)
        return HTMLResponse(page)

    return Starlette(routes=[Route("/doc/{name}", article)])


class TestWebSource(ResearchSourceContract):
    """WF-5, WF-6: pages read through INTERACTION.WEB.READ (direct mode), at most 2 passages per page."""

    @asynccontextmanager
    async def _web(self, directory: Path, page: str) -> AsyncIterator[tuple[Runtime, ResearchSource, Path]]:
        tls = make_tls(directory)
        async with serve(_site(), tls=tls) as port:
            url = f"https://127.0.0.1:{port}/doc/{page}"
            request = ResearchRequest(entry="web-read", question="q?", urls=(url,))
            web = {"ssl_context": tls.client_context(), "timeout_s": 5.0}
            async with _opened(request, directory, WebSource, web=web) as opened:
                yield opened

    def source(self, directory: Path) -> Any:
        return self._web(directory, "wal")

    def failing_source(self, directory: Path) -> Any:
        return self._web(directory, "broken")


class TestDocumentSearchProvider(RetrievalProviderContract):
    """RET-6, WF-12: the workflow's document provider keeps the RETRIEVAL provider contract."""

    refused_filter = {"lang": "en"}

    def _write(self, directory: Path) -> list[Path]:
        paths = []
        for document in self.documents:
            path = directory / f"{document['id']}.md"
            path.write_text(str(document["content"]) + "\n", encoding="utf-8")
            paths.append(path)
        return paths

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[Any]:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            paths = self._write(Path(folder))
            yield DocumentSearchProvider(paths, save_snapshot=lambda raw: "0" * 64)

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[Any]:
        import tempfile

        def save(raw: bytes) -> str:
            raise OSError(f"disk {secret} is full")

        with tempfile.TemporaryDirectory() as folder:
            yield DocumentSearchProvider(self._write(Path(folder)), save_snapshot=save)

    def candidate_document_id(self, candidate: RetrievalCandidate) -> str | None:
        uri = (candidate.metadata or {}).get("uri", "")
        return str(uri).rsplit("/", 1)[-1].removesuffix(".md") or None
