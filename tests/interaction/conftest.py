"""Fixtures: the HTTPS site, the search servers and the web options that point at them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ditto.worker.interaction import WebOptions

from .servers import PageSite, SearchLog, Tls, brave_app, make_tls, mediawiki_app, page_app, serve

BRAVE_TOKEN = "brave-test-token"


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(Path(tmp_path_factory.mktemp("tls")))


@dataclass
class Site:
    origin: str        # https://127.0.0.1:PORT (allowed in web_options)
    other_origin: str  # https://localhost:PORT (same server, not allowed)
    state: PageSite
    tls: Tls

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"


@pytest.fixture
async def site(tls: Tls) -> AsyncIterator[Site]:
    state = PageSite()
    async with serve(page_app(state), tls=tls) as port:
        state.other_origin = f"https://localhost:{port}"
        try:
            yield Site(f"https://127.0.0.1:{port}", state.other_origin, state, tls)
        finally:
            state.release.set()


@dataclass
class SearchServers:
    wiki_url: str
    brave_url: str
    wiki_log: SearchLog
    brave_log: SearchLog


@pytest.fixture
async def search_servers() -> AsyncIterator[SearchServers]:
    wiki_log, brave_log = SearchLog(), SearchLog()
    async with serve(mediawiki_app(wiki_log)) as wiki_port, serve(brave_app(brave_log, BRAVE_TOKEN)) as brave_port:
        try:
            yield SearchServers(f"http://127.0.0.1:{wiki_port}", f"http://127.0.0.1:{brave_port}/res/v1/web/search",
                                wiki_log, brave_log)
        finally:
            for log in (wiki_log, brave_log):
                if log.hang is not None:
                    log.hang.set()


@pytest.fixture
def web_options(site: Site, search_servers: SearchServers) -> WebOptions:
    """Reads allowed from the test site only; searches go to the local engines; the test CA is trusted."""
    return WebOptions(allowed_origins=[site.origin], ssl_context=site.tls.client_context(),
                      wikipedia_url=search_servers.wiki_url, brave_url=search_servers.brave_url, timeout_s=5.0)
