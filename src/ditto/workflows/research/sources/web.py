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
kept in the evidence's ``locator.extractedSha256``. The 2 passages of a page
that best match the queries (BM25 with a coordination factor, so a passage
holding more of the queries' words beats a one-word table cell) are shown to
the model, one excerpt each, so a page never gives more than 2 (seed 004:
"正文每页最多选 2 段").
Page content is data: it never widens the allowed origins.

The graph of one task's web source: in search mode ``s<i>`` (search for
query *i*) → ``r<i>-<k>`` (read candidate *k* of that search), where
``r<i>-<k>`` runs only when every candidate before it was passed over (refused
for its origin, or already read for an earlier query: a page found twice is
read once, and the query reads its next candidate instead), and query *i*'s
reads wait for the earlier queries'. Nodes with nothing to do return :data:`~ditto.runtime.SKIP` and cost
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from ....runtime import SKIP, Graph, NodeResult, graph
from ....worker.interaction.worker import interaction_web_read_node, interaction_web_search_node
from ..config import MAX_PASSAGES_PER_PAGE, MAX_SEARCH_CANDIDATES, MAX_WEB_PAGES
from ..records import Passage
from ..types import QueryRecord, ResearchRequest
from .base import SourceHits, SourceLimits, SourceSetup, constant_input, extracted_sha256, failed_source
from .spans import ranked_spans

__all__ = ["DEFAULT_PAGES", "WebSource", "allowed_origins", "web_options", "wiki_api_url"]

#: web-read's default pages: SQLite's official documentation (seed 004).
DEFAULT_PAGES: Final = ("https://sqlite.org/wal.html", "https://sqlite.org/lockingv3.html")
_WIKIPEDIA: Final = "https://en.wikipedia.org"


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return None
    port = f":{parts.port}" if parts.port and parts.port != 443 else ""
    return f"https://{parts.hostname.lower()}{port}"


def wiki_api_url(request: ResearchRequest, env: Mapping[str, str], overrides: Mapping[str, Any]) -> str:
    """The MediaWiki API the search uses: the request's ``wiki_url``, an override, the environment's
    ``DITTO_WORKER_INTERACTION_WIKI_URL``, an old-style ``wikipedia_url`` base, or Wikipedia's."""
    from ....worker.interaction.config import DEFAULT_WIKI_URL, WIKI_URL_ENV

    if request.wiki_url is not None:
        return request.wiki_url
    if overrides.get("wiki_url"):
        return str(overrides["wiki_url"])
    if env.get(WIKI_URL_ENV):
        return env[WIKI_URL_ENV]
    if overrides.get("wikipedia_url"):
        return f"{str(overrides['wikipedia_url']).rstrip('/')}/w/api.php"
    return DEFAULT_WIKI_URL


def allowed_origins(request: ResearchRequest, wiki_url: str = _WIKIPEDIA) -> tuple[str, ...]:
    """The request's origins, else the read pages' own origins, else the wiki's own origin (wiki search)."""
    if request.allowed_origins is not None:
        return tuple(request.allowed_origins)
    if request.web_mode == "read":
        pages = request.urls or DEFAULT_PAGES
        return tuple(dict.fromkeys(origin for origin in map(_origin, pages) if origin))
    if request.search_engine == "wikipedia":
        origin = _origin(wiki_url)
        return (origin,) if origin else ()
    return ()


def web_options(request: ResearchRequest, env: Mapping[str, str] | None = None, **overrides: Any) -> Any:
    """``WebOptions`` for the request: its engine, wiki and origins, the Brave key from the environment.

    ``overrides`` are WebOptions fields the request does not decide (``ca_file``,
    ``ssl_context``, ``timeout_s`` …); the request's ``wiki_url`` wins over one given here.
    """
    import os

    from ....worker.interaction import BRAVE_API_KEY_ENV, web_options_from_env

    source = os.environ if env is None else env
    wiki = wiki_api_url(request, source, overrides)
    values: dict[str, Any] = {"allowed_origins": allowed_origins(request, wiki), "wiki_url": wiki}
    if request.search_engine == "wikipedia" or source.get(BRAVE_API_KEY_ENV):
        # Without a key Brave stays unconfigured: each search names its engine, so asking for Brave
        # fails there instead of being answered by Wikipedia.
        values["search_engine"] = request.search_engine
    rest = {key: value for key, value in overrides.items() if key not in ("wiki_url", "wikipedia_url")}
    return web_options_from_env(None, source, **{**values, **rest})


_REFUSED: Final = "INTERACTION_ORIGIN_NOT_ALLOWED"


def _read_input(url: Any) -> Any:
    return {"url": url} if isinstance(url, str) and _origin(url) is not None else SKIP


class WebSource:
    """``web``: pages read through ``INTERACTION.WEB.READ``, found by ``INTERACTION.WEB.SEARCH`` or given."""

    source_type = "web"
    # Two excerpts a passage, as elsewhere; a page still gives at most MAX_PASSAGES_PER_PAGE in all (the
    # verification counts them per page), so both may come from the passage that answers.
    limits = SourceLimits(passages_per_page=MAX_PASSAGES_PER_PAGE, pages=MAX_WEB_PAGES,
                          candidates=MAX_SEARCH_CANDIDATES)

    def __init__(self, setup: SourceSetup) -> None:
        self.setup = setup
        self.request = setup.request

    # -- the graph ----------------------------------------------------------------
    def plan(self, queries: Sequence[QueryRecord]) -> Graph | None:
        if self.request.web_mode == "read":
            plan = graph("research-web-read")
            for index, url in enumerate(self._urls()):
                plan = plan.node(f"read{index}", interaction_web_read_node.type, (), constant_input({"url": url}))
            return plan
        plan = graph("research-web-search")
        candidates = self.limits.candidates or MAX_SEARCH_CANDIDATES
        earlier: list[str] = []
        for index, query in enumerate(queries):
            plan = plan.node(f"s{index}", interaction_web_search_node.type, (), constant_input(
                {"query": query.text[:400], "engine": self.request.search_engine, "limit": candidates}))
            for attempt in range(candidates):
                deps = [f"s{index}", *earlier, *(f"r{index}-{before}" for before in range(attempt))]
                plan = plan.node(f"r{index}-{attempt}", interaction_web_read_node.type, deps,
                                 self._choose(index, attempt))
            earlier.extend(f"r{index}-{attempt}" for attempt in range(candidates))
        return plan

    def _urls(self) -> list[str]:
        return list(dict.fromkeys((self.request.urls or DEFAULT_PAGES)[:self.limits.pages or MAX_WEB_PAGES]))

    def _choose(self, index: int, attempt: int) -> Any:
        """The read of candidate ``attempt`` of search ``index``: only when every candidate before it was passed
        over (refused for its origin, not an HTTPS link, or already read for an earlier query), never a page
        already read for an earlier query."""
        def input_fn(_input: Any, deps: Mapping[str, NodeResult[Any]]) -> Any:
            search = deps.get(f"s{index}")
            if search is None or search.status != "success":
                return SKIP
            found = interaction_web_search_node.output_of(search).candidates
            if attempt >= len(found):
                return SKIP
            read_before = {interaction_web_read_node.output_of(result).url for key, result in deps.items()
                           if key.startswith("r") and not key.startswith(f"r{index}-") and result.status == "success"}
            for before in range(attempt):
                url = found[before].url
                if url in read_before or _origin(url) is None:
                    continue
                previous = deps.get(f"r{index}-{before}")
                if previous is None or previous.status == "success" or previous.error is None or \
                        previous.error.code != _REFUSED:
                    return SKIP
            url = found[attempt].url
            return SKIP if url in read_before else _read_input(url)

        return input_fn

    # -- the passages -------------------------------------------------------------
    def collect(self, queries: Sequence[QueryRecord], results: Mapping[str, NodeResult[Any]]) -> SourceHits:
        texts = [query.text for query in queries]
        pages: dict[str, tuple[Any, str]] = {}  # url -> (page, the query that found it)
        if self.request.web_mode == "read":
            for index, url in enumerate(self._urls()):
                result = results[f"read{index}"]
                if result.status != "success":
                    return SourceHits(failure=failed_source(self.source_type, result))
                pages[url] = (interaction_web_read_node.output_of(result), texts[0])
        else:
            for index, text in enumerate(texts):
                search = results[f"s{index}"]
                if search.status != "success":
                    return SourceHits(failure=failed_source(self.source_type, search))
                for attempt in range(self.limits.candidates or MAX_SEARCH_CANDIDATES):
                    read = results.get(f"r{index}-{attempt}")
                    if read is None:
                        continue
                    if read.status == "success":
                        page = interaction_web_read_node.output_of(read)
                        pages.setdefault(page.url, (page, text))
                    elif read.error is None or read.error.code != _REFUSED:
                        return SourceHits(failure=failed_source(self.source_type, read))
        passages: list[Passage] = []
        for page, found_by in pages.values():
            passages.extend(self._page_passages(page, found_by, texts))
        return SourceHits(passages=passages, hits=len(pages))

    def _page_passages(self, page: Any, found_by: str, queries: list[str]) -> list[Passage]:
        text = page.text or ""
        digest = self.setup.save_snapshot(bytes(page.raw), extracted=text)
        text_sha256 = extracted_sha256(text)
        url = page.final_url or page.url
        result = []
        # The extracted text writes one paragraph a line; its title lines head the paragraphs under them.
        for span, best in ranked_spans(text, queries or [found_by], self.limits.passages_per_page
                                       or MAX_PASSAGES_PER_PAGE, coordinate=True, layout="lines"):
            query = best or found_by
            result.append(Passage(id="", source_type=self.source_type, uri=str(url), snapshot_sha256=digest,
                                  text=text[span.start:span.end], start=span.start, end=span.end, query=query,
                                  found_by=(query,), page=str(url), context=span.heading,
                                  locator={"url": str(url), "extractedSha256": text_sha256}))
        return result
