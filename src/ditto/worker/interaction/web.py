"""The web tools: search (any MediaWiki, Wikipedia by default, or Brave) and a guarded page reader (INT-4, INT-5).

One :class:`WebClient` owns one aiohttp ``ClientSession`` (connection pooling),
created on first use and closed by :meth:`WebClient.aclose`. aiohttp was picked on
measured speed (issue 11: 4,097–4,251 calls/s against httpx's 519–615 on the same box).

Reading is deliberately narrow: https only, an origin the application allowed,
no redirects followed, one deadline from connect to the last byte of extracted text, a
byte cap checked while streaming, HTML only, no JavaScript. Text extraction runs in a child
process (:mod:`.extractor`), never on a thread of this one. What a page says is data: nothing here
looks at the text except the extractor, and no option can change after construction.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

from ...contracts import InvalidJson, check_json
from ...signal import CancelSignal, await_with_signal
from . import mediawiki
from .config import WebOptions, _origin_text, _web_module, brave_key_from_environment
from .extract import text_lines
from .extractor import shared_extractor
from .types import (
    InteractionError,
    SearchCandidate,
    SearchEngine,
    WebPage,
    WebReadInput,
    WebSearchInput,
    WebSearchResult,
    parse_interaction_input,
)

if TYPE_CHECKING:  # aiohttp and yarl (extra ``ditto-agents[web]``) load on first use, not on import
    import aiohttp
    import yarl

__all__ = ["WebClient", "web_read", "web_search"]

_log = logging.getLogger("ditto.interaction.web")

T = TypeVar("T")

_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
_CHUNK: Final = 64 * 1024
_MAX_TITLE: Final = 500
_MAX_SNIPPET: Final = 1000
_TAG = re.compile(r"<[^>]{0,2000}>")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACE = re.compile(r"\s+")
_API_CODE = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def _sentence(text: str) -> str:
    """``text`` with a capital first letter, to start a message ("the wiki at …" → "The wiki at …")."""
    return text[:1].upper() + text[1:]


def _invalid(message: str) -> InteractionError:
    return InteractionError("INTERACTION_INVALID_INPUT", message)



def _check_text(value: str, what: str) -> None:
    try:
        check_json(value)
    except InvalidJson:
        raise _invalid(f"{what} must be valid Unicode") from None
    if _CONTROL.search(value):
        raise _invalid(f"{what} must not contain control characters")


def _plain(text: Any, limit: int) -> str:
    """Engine markup (``<span class="searchmatch">``, ``<strong>``) and entities out, whitespace folded."""
    if not isinstance(text, str):
        return ""
    cleaned = _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip()
    cleaned = _CONTROL.sub("", cleaned)
    cleaned = cleaned.encode("utf-8", "replace").decode("utf-8")
    return cleaned[:limit]


def _signal_error(signal: CancelSignal) -> InteractionError:
    return InteractionError.from_signal(signal.reason)


class WebClient:
    """Search and read through one pooled HTTP session.

    ::

        client = WebClient(WebOptions(allowed_origins=["https://sqlite.org"]))
        try:
            found = await client.search({"query": "write-ahead logging"})
            page = await client.read({"url": "https://sqlite.org/wal.html"})
        finally:
            await client.aclose()

    The session belongs to the event loop that first used it; used from another
    loop, the client opens a new session there (the old one cannot be closed from
    a loop it does not belong to).
    """

    __slots__ = ("_loop", "_options", "_session")

    def __init__(self, options: WebOptions | None = None) -> None:
        if options is not None and not isinstance(options, WebOptions):
            from ...errors import InvalidArgumentError

            raise InvalidArgumentError("web options must be a WebOptions")
        self._options = options or WebOptions()
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def options(self) -> WebOptions:
        return self._options

    def _client(self) -> aiohttp.ClientSession:
        _web_module("trafilatura")  # a clear error when the extra is missing (aiohttp is a base dependency)
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(ssl=self._options.make_ssl_context(),
                                             limit=self._options.connection_limit)
            # trust_env=False: proxies and .netrc from the environment are never used implicitly.
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                                  headers={"User-Agent": self._options.user_agent},
                                                  timeout=aiohttp.ClientTimeout(total=None))
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        """Close the pooled session (idempotent)."""
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()

    async def __aenter__(self) -> WebClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    # -- shared plumbing ----------------------------------------------------------------------
    async def _guarded(self, operation: Callable[[], Awaitable[T]], signal: CancelSignal | None) -> T:
        """Run ``operation`` under the per-request deadline and the caller's signal."""
        if signal is not None and not isinstance(signal, CancelSignal):
            raise _invalid("signal must be a CancelSignal")

        async def bounded() -> T:
            try:
                async with asyncio.timeout(self._options.timeout_s):
                    return await operation()
            except TimeoutError:
                raise InteractionError("INTERACTION_TIMEOUT",
                                       f"The request took longer than {self._options.timeout_s:g} s") from None

        return await await_with_signal(bounded(), signal, error=_signal_error)

    async def _read_body(self, response: aiohttp.ClientResponse) -> bytes:
        """The body, refusing it once it passes the cap (declared or streamed); never reads past it."""
        limit = self._options.max_response_bytes
        declared = response.content_length
        if declared is not None and declared > limit:
            response.close()
            raise InteractionError("INTERACTION_RESPONSE_TOO_LARGE",
                                   f"The response is larger than {limit} bytes")
        parts: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > limit:
                response.close()  # drop the connection: the rest is never read
                raise InteractionError("INTERACTION_RESPONSE_TOO_LARGE",
                                       f"The response is larger than {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    # -- search -------------------------------------------------------------------------------
    async def search(self, input: WebSearchInput | Mapping[str, Any], *,
                     signal: CancelSignal | None = None) -> WebSearchResult:
        """INTERACTION.WEB.SEARCH: at most five ``{title, url, snippet}`` candidates from one engine.

        The engine is the request's ``engine`` or the configured default; Brave
        without a key fails with ``INTERACTION_INVALID_INPUT`` instead of
        quietly asking Wikipedia. Snippets only help pick a page to read.
        """
        request = parse_interaction_input(WebSearchInput, input)
        _check_text(request.query, "query")
        if not request.query.strip():
            raise _invalid("query must not be blank")
        engine: SearchEngine = request.engine or self._options.search_engine  # type: ignore[assignment]
        brave_key = self._options.brave_api_key or (brave_key_from_environment() if engine == "brave" else None)
        if engine == "brave" and brave_key is None:
            raise _invalid("Brave Search is not configured: set DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY")
        if engine == "wikipedia":
            candidates = await self._guarded(lambda: self._wikipedia(request.query, request.limit), signal)
        else:
            candidates = await self._guarded(lambda: self._brave(request.query, request.limit, brave_key or ""),
                                             signal)
        return WebSearchResult(engine=engine, query=request.query, candidates=tuple(candidates[:request.limit]))

    async def _get_json(self, url: str, params: Mapping[str, str], headers: Mapping[str, str], engine: str) -> Any:
        _web_module("trafilatura")  # a clear error when the extra is missing (aiohttp is a base dependency)
        import aiohttp

        try:
            async with self._client().get(url, params=params, headers=headers, allow_redirects=False) as response:
                if response.status in (401, 403):
                    raise InteractionError("INTERACTION_TOOL_FAILED", f"{_sentence(engine)} refused the request (HTTP "
                                           f"{response.status}): check the API key")
                if response.status == 429:
                    raise InteractionError("INTERACTION_TOOL_FAILED",
                                           f"{_sentence(engine)} is rate limiting this client")
                if 300 <= response.status < 400:
                    raise InteractionError("INTERACTION_REDIRECT_REFUSED",
                                           f"{_sentence(engine)} answered with a redirect, which is not followed")
                if response.status != 200:
                    raise InteractionError("INTERACTION_TOOL_FAILED",
                                           f"{_sentence(engine)} answered HTTP {response.status}")
                body = await self._read_body(response)
        except aiohttp.ClientError:
            _log.warning("%s search request failed", engine, exc_info=True)
            raise InteractionError("INTERACTION_TOOL_FAILED", f"{_sentence(engine)} could not be reached") from None
        try:
            return json.loads(body)
        except ValueError:
            _log.warning("%s answered a body that is not JSON", engine)
            raise InteractionError("INTERACTION_TOOL_FAILED",
                                   f"{_sentence(engine)} answered something that is not JSON") from None

    async def _wikipedia(self, query: str, limit: int) -> list[SearchCandidate]:
        """Full-text search on the configured MediaWiki; fewer hits than wanted → one more round per word."""
        api_url = self._options.wiki_url
        name = self._options.wiki_name
        payload = await self._get_json(api_url, mediawiki.search_params(query, limit, site_info=True),
                                       {"Accept": "application/json"}, name)
        first = self._wiki_hits(payload, name)
        query_info = payload.get("query") if isinstance(payload, dict) else None
        general = query_info.get("general") if isinstance(query_info, dict) else None
        statistics = query_info.get("statistics") if isinstance(query_info, dict) else None
        hits = list(first[0])
        terms = mediawiki.content_terms(query)
        ranked = mediawiki.ranks_by_relevance(general if isinstance(general, dict) else None)
        if terms and (not ranked or (len(hits) < limit and len(terms) > 1)):
            answers = [self._wiki_hits(answer, name) for answer in await asyncio.gather(*(
                self._get_json(api_url, mediawiki.search_params(mediawiki.term_query(term), mediawiki.RELAXED_LIMIT,
                                                                site_info=False),
                               {"Accept": "application/json"}, name) for term in terms))]
            pages = statistics.get("articles") if isinstance(statistics, dict) else None
            articles = pages if isinstance(pages, int) and not isinstance(pages, bool) else None
            if ranked:
                known = {hit.title for hit in hits}
                hits.extend(hit for hit in mediawiki.rank_relaxed(answers, articles) if hit.title not in known)
            else:
                hits = mediawiki.rank_unranked(hits, terms, answers, articles)
        candidates: list[SearchCandidate] = []
        for hit in hits:
            title = _plain(hit.title, _MAX_TITLE)
            if not title:
                continue
            url = mediawiki.page_url(api_url, general if isinstance(general, dict) else None, hit.title)
            candidates.append(SearchCandidate(title=title, url=url, snippet=_plain(hit.snippet, _MAX_SNIPPET)))
            if len(candidates) >= limit:
                break
        return candidates

    @staticmethod
    def _wiki_hits(payload: Any, name: str) -> tuple[list[mediawiki.WikiHit], int]:
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict):
            code = error.get("code")
            shown = f" ({code})" if isinstance(code, str) and _API_CODE.fullmatch(code) else ""
            _log.warning("%s answered an API error: %.300r", name, error)
            raise InteractionError("INTERACTION_TOOL_FAILED", f"{_sentence(name)} refused the search{shown}")
        parsed = mediawiki.parse_hits(payload)
        if parsed is None:
            _log.warning("%s answered JSON without query.search", name)
            raise InteractionError("INTERACTION_TOOL_FAILED", f"{_sentence(name)} answered an unexpected shape")
        return parsed

    async def _brave(self, query: str, limit: int, key: str) -> list[SearchCandidate]:
        import yarl

        payload = await self._get_json(self._options.brave_url, {"q": query, "count": str(limit)},
                                       {"Accept": "application/json", "X-Subscription-Token": key}, "Brave Search")
        web = payload.get("web") if isinstance(payload, dict) else None
        results = web.get("results", []) if isinstance(web, dict) else ([] if isinstance(payload, dict) else None)
        if not isinstance(results, list):
            _log.warning("Brave Search answered JSON without web.results")
            raise InteractionError("INTERACTION_TOOL_FAILED", "Brave Search answered an unexpected shape")
        candidates: list[SearchCandidate] = []
        for hit in results:
            if not isinstance(hit, dict) or not isinstance(hit.get("url"), str):
                continue
            url = hit["url"].strip()
            try:
                parsed = yarl.URL(url)
            except (ValueError, TypeError, IndexError):  # an engine's URL is data: a bad one is skipped
                continue
            if parsed.scheme not in ("http", "https") or not parsed.host or len(url) > 4096 or _CONTROL.search(url):
                continue
            candidates.append(SearchCandidate(title=_plain(hit.get("title"), _MAX_TITLE) or url, url=url,
                                              snippet=_plain(hit.get("description"), _MAX_SNIPPET)))
            if len(candidates) >= limit:
                break
        return candidates

    # -- read ---------------------------------------------------------------------------------
    def check_url(self, url: str) -> yarl.URL:
        """The URL a read would fetch, or the InteractionError that refuses it (no I/O)."""
        import yarl

        _check_text(url, "url")
        if url != url.strip() or any(ch.isspace() for ch in url):
            raise _invalid("url must not contain whitespace")
        try:
            parsed = yarl.URL(url)
        except (ValueError, TypeError, IndexError):  # yarl: IndexError for "https://[::1]@" (empty host after @)
            raise _invalid("url is not a valid URL") from None
        if parsed.scheme != "https":
            raise InteractionError("INTERACTION_ORIGIN_NOT_ALLOWED", "Only https:// pages can be read")
        if not parsed.host:
            raise _invalid("url has no host")
        if parsed.user is not None or parsed.password is not None or "@" in urlsplit(url).netloc:
            raise _invalid("url must not carry credentials")  # an empty userinfo ('https://@host') too
        if not self._options.allows(_origin_text(parsed)):
            raise InteractionError("INTERACTION_ORIGIN_NOT_ALLOWED", "The page's origin is not in allowed_origins")
        return parsed.with_fragment(None)

    async def read(self, input: WebReadInput | Mapping[str, Any], *, signal: CancelSignal | None = None) -> WebPage:
        """INTERACTION.WEB.READ: fetch one allowed https page and extract its main text.

        Refusals (each its own code, nothing fetched or followed): not https or
        origin not allowed → ``INTERACTION_ORIGIN_NOT_ALLOWED``; a 3xx answer →
        ``INTERACTION_REDIRECT_REFUSED``; more than ``max_response_bytes`` →
        ``INTERACTION_RESPONSE_TOO_LARGE``; not HTML → ``INTERACTION_UNSUPPORTED_CONTENT``;
        past ``timeout_s``, text extraction included → ``INTERACTION_TIMEOUT``; extraction
        needing more than ``extract_memory_bytes`` → ``INTERACTION_RESPONSE_TOO_LARGE``; TLS,
        connection and non-2xx failures, or an extractor that fails → ``INTERACTION_TOOL_FAILED``.
        Extraction runs in a child process, one page at a time (see :mod:`.extractor`).
        """
        request = parse_interaction_input(WebReadInput, input)
        target = self.check_url(request.url)

        deadline = asyncio.get_running_loop().time() + self._options.timeout_s

        async def fetch_and_extract() -> tuple[int, str, bytes, str]:
            status, content_type, raw = await self._fetch(target)
            return status, content_type, raw, await self._extract(raw, deadline)

        status, content_type, raw, text = await self._guarded(fetch_and_extract, signal)
        return WebPage(url=request.url, final_url=str(target), status=status, content_type=content_type, raw=raw,
                       sha256=hashlib.sha256(raw).hexdigest(), text=text, lines=text_lines(text))

    async def _extract(self, raw: bytes, deadline: float) -> str:
        """The main text, in the extraction child, inside what is left of the read's deadline.

        ``deadline`` is in event-loop time. Cancelling this (the deadline passed, or the
        caller's signal) sets the event the extracting thread watches, which kills the
        child instead of letting it run on; the thread's own limit is the same deadline.
        """
        remaining = max(0.001, deadline - asyncio.get_running_loop().time())
        cancel = threading.Event()
        extractor = shared_extractor(self._options.extract_memory_bytes)
        try:
            return await asyncio.to_thread(extractor.extract, raw, timeout_s=remaining,
                                           max_text_chars=self._options.max_text_chars, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise

    async def _fetch(self, target: yarl.URL) -> tuple[int, str, bytes]:
        _web_module("trafilatura")  # a clear error when the extra is missing (aiohttp is a base dependency)
        import aiohttp

        headers = {"Accept": "text/html,application/xhtml+xml;q=0.9"}
        try:
            async with self._client().get(target, headers=headers, allow_redirects=False) as response:
                if 300 <= response.status < 400:
                    raise InteractionError("INTERACTION_REDIRECT_REFUSED",
                                           f"The page answered HTTP {response.status} (a redirect); "
                                           "redirects are not followed")
                if not 200 <= response.status < 300:
                    raise InteractionError("INTERACTION_TOOL_FAILED", f"The page answered HTTP {response.status}")
                content_type = response.content_type.lower()
                if content_type not in _HTML_TYPES:
                    raise InteractionError("INTERACTION_UNSUPPORTED_CONTENT",
                                           "Only HTML pages can be read (text/html or application/xhtml+xml)")
                raw = await self._read_body(response)
                return response.status, response.headers.get("Content-Type", content_type), raw
        except aiohttp.ClientSSLError:
            _log.warning("TLS failed for %s", target.host, exc_info=True)
            raise InteractionError("INTERACTION_TOOL_FAILED",
                                   "The page's TLS certificate could not be verified") from None
        except aiohttp.ClientError:
            _log.warning("reading a page from %s failed", target.host, exc_info=True)
            raise InteractionError("INTERACTION_TOOL_FAILED", "The page could not be fetched") from None


async def web_search(query: str, *, engine: SearchEngine | None = None, limit: int = 5,
                     options: WebOptions | None = None, signal: CancelSignal | None = None) -> WebSearchResult:
    """One search without a worker: ``await web_search("sqlite wal")`` (opens and closes its own session)."""
    async with WebClient(options) as client:
        return await client.search({"query": query, "engine": engine, "limit": limit}, signal=signal)


async def web_read(url: str, *, options: WebOptions, signal: CancelSignal | None = None) -> WebPage:
    """One page read without a worker: ``await web_read(url, options=WebOptions(allowed_origins=[...]))``."""
    async with WebClient(options) as client:
        return await client.read({"url": url}, signal=signal)
