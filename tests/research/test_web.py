"""The web entries against real local servers: a MediaWiki search API and HTTPS pages (trustme CA)."""

from __future__ import annotations

import html
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ditto.workflows.research import ResearchError, ResearchOptions, verify_task
from tests.interaction.servers import Tls, make_tls, serve
from tests.research.helpers import brief, trace
from tests.research.scripted import ScriptedModel


@dataclass
class Wiki:
    origin: str
    days: int
    hours: int
    tls: Tls
    searches: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)

    def options(self) -> dict[str, Any]:
        return {"wikipedia_url": self.origin, "ssl_context": self.tls.client_context(), "timeout_s": 5.0}


def _page(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{html.escape(text)}</p>" for text in paragraphs)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body><nav>Menu</nav><article><h1>{html.escape(title)}</h1>{body}</article></body></html>")


def wiki_app(wiki: Wiki) -> Starlette:
    pages = {
        "Backup_policy": _page("Backup policy", [
            f"Under the backup policy every database backup is retained for {wiki.days} days before deletion.",
            f"Incremental database backups run every {wiki.hours} hours across all regions.",
            "Restores are rehearsed quarterly by the operations group."]),
        "Write-ahead_logging": _page("Write-ahead logging", [
            "Write-ahead logging writes changes to a log before they reach the database file.",
            "Readers keep reading the original database while a writer appends to the WAL file."]),
    }

    async def api(request: Request) -> Response:
        params = dict(request.query_params)
        query = params.get("srsearch", "")
        wiki.searches.append(query)
        terms = set(re.findall(r"\w+", query.lower()))
        hits = [{"ns": 0, "title": name.replace("_", " "), "pageid": index, "snippet": "..."}
                for index, (name, text) in enumerate(pages.items())
                if terms & set(re.findall(r"\w+", text.lower()))]
        return JSONResponse({"batchcomplete": True, "query": {"search": hits[:int(params.get("srlimit", "10"))]}})

    async def article(request: Request) -> Response:
        name = request.path_params["name"]
        wiki.reads.append(name)
        return HTMLResponse(pages[name]) if name in pages else Response("missing", status_code=404)

    async def moved(request: Request) -> Response:
        wiki.reads.append("moved")
        return RedirectResponse("/wiki/Backup_policy", status_code=302)

    return Starlette(routes=[Route("/w/api.php", api), Route("/wiki/{name}", article), Route("/moved", moved)])


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(Path(tmp_path_factory.mktemp("tls")))


@pytest.fixture
async def wiki(tls: Tls) -> AsyncIterator[Wiki]:
    generator = random.Random()
    state = Wiki("", generator.randint(14, 120), generator.randint(2, 12), tls)
    async with serve(wiki_app(state), tls=tls) as port:
        state.origin = f"https://127.0.0.1:{port}"
        yield state


def _quotes(data: dict[str, Any]) -> str:
    return " ".join(item["quote"] for item in data["evidence"])


async def test_web_search_reads_the_page_and_quotes_it(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-5, WF-6, WF-10, WF-13: Wikipedia-style search discovers pages; the first allowed page is read and quoted;
    verify notices a changed extracted.txt."""
    task, result = await run_web("web-search", {"question": "How long is each database backup retained?"},
                                 base, model, wiki)
    assert result.status == "completed", result
    data = brief(task)
    assert f"{wiki.days} days" in _quotes(data)
    assert wiki.searches and wiki.reads == ["Backup_policy"]
    for item in data["evidence"]:
        assert item["sourceType"] == "web" and item["uri"] == f"{wiki.origin}/wiki/Backup_policy"
        folder = task.directory / "snapshots" / item["snapshotSha256"]
        extracted = (folder / "extracted.txt").read_text(encoding="utf-8")
        assert b"<article>" in (folder / "raw").read_bytes()
        assert extracted[item["start"]:item["end"]] == item["quote"]
        assert item["quote"] in extracted.split("\n")[item["lineStart"] - 1]
    assert verify_task(task.directory) == []
    # WF-13: a byte changed anywhere in extracted.txt (here its last character, outside every quote) is found.
    extracted_path = task.directory / "snapshots" / data["evidence"][0]["snapshotSha256"] / "extracted.txt"
    content = extracted_path.read_text(encoding="utf-8")
    extracted_path.write_text(content[:-1] + ("x" if content[-1:] != "x" else "y"), encoding="utf-8")
    assert any("extractedSha256" in problem for problem in verify_task(task.directory))


async def test_web_read_reads_at_most_two_pages(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-5, WF-6: direct reading of the given HTTPS pages (origins allowed from the request)."""
    urls = [f"{wiki.origin}/wiki/Backup_policy", f"{wiki.origin}/wiki/Write-ahead_logging"]
    task, result = await run_web("web-read", {"urls": urls, "question": "How often do database backups run?"},
                                 base, model, wiki)
    assert result.status == "completed"
    data = brief(task)
    assert f"{wiki.hours} hours" in _quotes(data)
    assert sorted(wiki.reads) == ["Backup_policy", "Write-ahead_logging"]
    assert wiki.searches == []
    with pytest.raises(ResearchError) as caught:
        await run_web("web-read", {"urls": [*urls, f"{wiki.origin}/wiki/x"]}, base, model, wiki)
    assert caught.value.code == "RESEARCH_INVALID_INPUT"


async def test_redirect_is_a_source_failure(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-5, WF-7: a redirect is refused, never followed: the web source fails and blocks the brief."""
    task, result = await run_web("web-read", {"urls": [f"{wiki.origin}/moved"],
                                              "question": "How long are backups retained?"}, base, model, wiki)
    assert result.status == "blocked"
    assert [(s.source, s.code) for s in result.failed_sources] == [("web", "INTERACTION_REDIRECT_REFUSED")]
    assert wiki.reads == ["moved"]
    assert not (task.directory / "artifacts" / "brief.json").exists()


async def test_multi_source_keeps_working_sources_with_allow_partial(wiki: Wiki, base: Path,
                                                                    model: ScriptedModel) -> None:
    """WF-7: a failed web source with allow_partial: partial, documents and knowledge kept, web listed."""
    task, result = await run_web("multi-source", {"urls": [f"{wiki.origin}/moved"], "allowPartial": True,
                                                    "sources": ["documents", "knowledge", "web"],
                                                    "question": "How long are database backups retained?"},
                                 base, model, wiki)
    assert result.status == "partial"
    data = brief(task)
    assert [s["source"] for s in data["failedSources"]] == ["web"]
    assert {item["sourceType"] for item in data["evidence"]} >= {"document", "knowledge-external"}


async def test_multi_source_reads_all_three_kinds(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-1, WF-5: multi-source reads documents, knowledge and the web by default, in that order."""
    task, result = await run_web("multi-source", {}, base, model, wiki)
    assert result.status == "completed"
    data = brief(task)
    assert data["sources"] == ["documents", "knowledge", "web"]
    assert {item["sourceType"] for item in data["evidence"]} == {"document", "knowledge-external", "web"}
    order = [r.get("graph") for r in trace(task) if r["stage"] == "evidence" and r.get("graph", "").startswith(
        "research-") and r["node"] != "INFER.SAMPLE"]
    assert order.index("research-document") < order.index("research-knowledge-external") < order.index(
        "research-web-search")


async def test_brave_without_key_fails_and_never_falls_back(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-5: Brave is asked for but not configured → the web source fails; Wikipedia is not used instead."""
    _task, result = await run_web("web-search", {"searchEngine": "brave", "allowedOrigins": [wiki.origin]},
                                 base, model, wiki)
    assert result.status == "blocked"
    assert result.failed_sources[0].source == "web"
    assert wiki.searches == [] and wiki.reads == []


async def test_a_page_found_again_gives_the_next_candidate_its_read(wiki: Wiki, base: Path) -> None:
    """WF-5, WF-6, issue 17: a page two queries find is read once; the later query reads its next allowed
    candidate instead of nothing, so two queries read two pages."""
    model = ScriptedModel({"choose_queries": {"queries": ["database backup retained", "database backup"]}})
    task, result = await run_web("web-search", {"question": "How long is each database backup retained?"},
                                 base, model, wiki)
    assert result.status == "completed", result
    assert len(wiki.searches) >= 2 and wiki.reads == ["Backup_policy", "Write-ahead_logging"]
    assert verify_task(task.directory) == []


async def test_resume_does_not_read_pages_again(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-8: archived web evidence is reused on resume: no search, no read."""
    task, result = await run_web("web-search", {"question": "How long is each database backup retained?"}, base,
                                 model, wiki, options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    searches, reads = list(wiki.searches), list(wiki.reads)
    task, result = await run_web("web-search", None, base, model, wiki, directory=task.directory)
    assert result.status == "completed"
    assert (wiki.searches, wiki.reads) == (searches, reads)


async def run_web(entry: str, request: dict[str, Any] | None, base: Path, model: ScriptedModel, wiki: Wiki,
                  **kwargs: Any) -> Any:
    from ditto.workflows.research import run_research

    return await run_research(entry, request, base_dir=base, env={}, workers=[model.worker()],  # type: ignore[arg-type]
                              web=wiki.options(), options=kwargs.pop("options", ResearchOptions()),
                              **kwargs)


async def test_candidates_outside_the_allowed_origins_are_never_read(wiki: Wiki, base: Path,
                                                                    model: ScriptedModel) -> None:
    """WF-5, WF-6, WF-7: search results from origins that are not allowed are not read; that is no evidence,
    not a source failure."""
    other = wiki.origin.replace("127.0.0.1", "localhost")
    task, result = await run_web("web-search", {"question": "How long is each database backup retained?",
                                                "allowedOrigins": [other]}, base, model, wiki)
    assert result.status == "no-evidence"
    assert wiki.searches and wiki.reads == []
    data = brief(task)
    assert data["failedSources"] == [] and data["coverage"] == [
        {"source": "web", "status": "no-hits", "hits": 0, "evidence": 0, "notes": [], "searched": []}]
    refused = [r for r in trace(task) if r["node"] == "INTERACTION.WEB.READ"]
    assert refused and all(r.get("code") == "INTERACTION_ORIGIN_NOT_ALLOWED" for r in refused)


def test_web_read_defaults_to_sqlite_documentation() -> None:
    """WF-5: without --url, web-read reads SQLite's official documentation, allowed for https://sqlite.org only;
    web-search allows only Wikipedia's origin."""
    from ditto.workflows.research import ResearchRequest
    from ditto.workflows.research.sources.web import DEFAULT_PAGES, allowed_origins

    request = ResearchRequest(entry="web-read", question="What is write-ahead logging?")
    assert request.urls is None and request.web_mode == "read"
    assert 1 <= len(DEFAULT_PAGES) <= 2 and all(page.startswith("https://sqlite.org/") for page in DEFAULT_PAGES)
    assert allowed_origins(request) == ("https://sqlite.org",)
    search = ResearchRequest(entry="web-search", question="What is write-ahead logging?")
    assert search.search_engine == "wikipedia" and allowed_origins(search) == ("https://en.wikipedia.org",)
