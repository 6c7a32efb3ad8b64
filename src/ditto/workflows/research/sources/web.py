"""The web as a source, through ``INTERACTION.WEB.SEARCH`` and ``INTERACTION.WEB.READ`` (seed 004).

*Search mode* (web-search, multi-source): each query goes to the configured
engine (Wikipedia full text by default; Brave only when asked, never as a
silent fallback), at most 5 candidates; the first candidate whose origin is
allowed is read. Snippets only discover pages: evidence always comes from the
page itself. *Read mode* (web-read, or when URLs are given): at most 2 pages,
SQLite's documentation by default.

A page's raw bytes and its extracted text are saved as a snapshot
(``snapshots/<sha256>/raw`` and ``extracted.txt``); quotes point into the
extracted text, whose line numbers are the reader's, and whose own SHA-256 is
kept in the evidence's ``locator.extractedSha256``. At most 4 paragraphs per
page are shown to the model and at most 2 excerpts per page are accepted.
Page content is data: it never widens the allowed origins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from ....runtime import graph
from ....text import TextAnalyzer, score_documents
from ..config import MAX_SEARCH_CANDIDATES, MAX_WEB_PAGES
from ..types import FailedSource, QueryRecord, ResearchRequest
from ..verification import Passage
from .documents import split_passages

__all__ = ["DEFAULT_PAGES", "web_group", "web_options"]

#: web-read's default pages: SQLite's official documentation (seed 004).
DEFAULT_PAGES: Final = ("https://sqlite.org/wal.html", "https://sqlite.org/lockingv3.html")
_WIKIPEDIA: Final = "https://en.wikipedia.org"
_PARAGRAPHS_PER_PAGE: Final = 4
_ANALYZER = TextAnalyzer(cjk="unigram")


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return None
    port = f":{parts.port}" if parts.port and parts.port != 443 else ""
    return f"https://{parts.hostname.lower()}{port}"


def allowed_origins(request: ResearchRequest, wikipedia_url: str = _WIKIPEDIA) -> tuple[str, ...]:
    """The request's origins, else the read pages' own origins, else the wiki's origin (Wikipedia search)."""
    if request.allowed_origins is not None:
        return tuple(request.allowed_origins)
    if request.web_mode == "read":
        pages = request.urls or DEFAULT_PAGES
        return tuple(dict.fromkeys(origin for origin in map(_origin, pages) if origin))
    if request.search_engine == "wikipedia":
        origin = _origin(wikipedia_url)
        return (origin,) if origin else ()
    return ()


def web_options(request: ResearchRequest, env: Mapping[str, str] | None = None, **overrides: Any) -> Any:
    """``WebOptions`` for the request: its engine and origins, the Brave key from the environment."""
    import os

    from ....worker.interaction import BRAVE_API_KEY_ENV, web_options_from_env

    source = os.environ if env is None else env
    wikipedia_url = overrides.get("wikipedia_url", _WIKIPEDIA)
    values: dict[str, Any] = {"allowed_origins": allowed_origins(request, wikipedia_url)}
    if request.search_engine == "wikipedia" or source.get(BRAVE_API_KEY_ENV):
        # Without a key Brave stays unconfigured: each search names its engine, so asking for Brave
        # fails there instead of being answered by Wikipedia.
        values["search_engine"] = request.search_engine
    return web_options_from_env(None, source, **{**values, **overrides})


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def _failure(result: Any) -> FailedSource:
    error = result.error
    return FailedSource(source="web", code=error.code if error else "UNKNOWN",
                        message=error.message if error else "the web source failed")


async def web_group(controller: Any, queries: list[QueryRecord]) -> tuple[list[Passage], FailedSource | None]:
    """Read the pages for ``queries`` and cut them into passages (or report the failure)."""
    request: ResearchRequest = controller.request
    texts = [query.text for query in queries]
    pages: dict[str, Any] = {}  # url -> the page read
    found_by: dict[str, str] = {}  # url -> the query that found it
    if request.web_mode == "read":
        urls = list(dict.fromkeys((request.urls or DEFAULT_PAGES)[:MAX_WEB_PAGES]))
        plan = graph("research-web-read")
        for index, url in enumerate(urls):
            plan = plan.node(f"read{index}", "INTERACTION.WEB.READ", (), _constant({"url": url}))
        read = await controller._run("evidence", plan)
        for index, url in enumerate(urls):
            result = read[f"read{index}"]
            if result.status != "success":
                return [], _failure(result)
            pages[url], found_by[url] = result.output, texts[0]
    else:
        plan = graph("research-web-search")
        for index, text in enumerate(texts):
            plan = plan.node(f"search{index}", "INTERACTION.WEB.SEARCH", (), _constant(
                {"query": text[:400], "engine": request.search_engine, "limit": MAX_SEARCH_CANDIDATES}))
        found = await controller._run("evidence", plan)
        for index, text in enumerate(texts):
            result = found[f"search{index}"]
            if result.status != "success":
                return [], _failure(result)
            candidates = (_field(result.output, "candidates") or ())[:MAX_SEARCH_CANDIDATES]
            failure = await _read_first_allowed(controller, candidates, text, pages, found_by)
            if failure is not None:
                return [], failure
    passages: list[Passage] = []
    for url, page in pages.items():
        passages.extend(_page_passages(controller, page, found_by[url], texts, len(passages)))
    return passages, None


async def _read_first_allowed(controller: Any, candidates: Any, query: str, pages: dict[str, Any],
                              found_by: dict[str, str]) -> FailedSource | None:
    """Read the first candidate INTERACTION allows (its origin list is the only authority)."""
    for attempt, candidate in enumerate(candidates):
        url = _field(candidate, "url")
        if not isinstance(url, str) or _origin(url) is None:
            continue
        if url in pages:
            return None
        plan = graph("research-web-read").node(f"read{attempt}", "INTERACTION.WEB.READ", (), _constant({"url": url}))
        result = (await controller._run("evidence", plan))[f"read{attempt}"]
        if result.status == "success":
            pages[url], found_by[url] = result.output, query
            return None
        if result.error is None or result.error.code != "INTERACTION_ORIGIN_NOT_ALLOWED":
            return _failure(result)
    return None


def _page_passages(controller: Any, page: Any, found_by: str, queries: list[str], offset: int) -> list[Passage]:
    raw = _field(page, "raw")
    text = _field(page, "text") or ""
    if isinstance(raw, str):
        import base64

        raw = base64.b64decode(raw)
    digest = controller.task.save_snapshot(bytes(raw), extracted=text)
    # The folder is named by the raw bytes; the extracted text quotes point into gets its own digest so that
    # `ditto verify` notices a changed extracted.txt anywhere, not only inside a quote.
    extracted_sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    spans = split_passages(text)
    terms = [_ANALYZER.analyze(text[start:end]) for start, end, _, _ in spans]
    wanted = [term for query in queries for term in _ANALYZER.analyze(query)]
    scores = score_documents(wanted, terms)
    ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
    url = _field(page, "final_url") or _field(page, "finalUrl") or _field(page, "url")
    chosen = sorted(ranked[:_PARAGRAPHS_PER_PAGE])
    result = []
    for number, index in enumerate(chosen, start=1):
        start, end, _, _ = spans[index]
        best = max(queries, key=lambda q: score_documents(_ANALYZER.analyze(q), [terms[index]])[0])
        result.append(Passage(id=f"web-{offset + number}", source_type="web", uri=str(url), snapshot_sha256=digest,
                              text=text[start:end], start=start, end=end, query=best or found_by,
                              found_by=(best or found_by,), page=str(url),
                              locator={"url": str(url), "extractedSha256": extracted_sha256}))
    return result


def _constant(value: Any) -> Any:
    def input_fn(_input: Any, _deps: Any) -> Any:
        return value

    return input_fn
