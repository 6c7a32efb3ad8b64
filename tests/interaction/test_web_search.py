"""Web search against local MediaWiki and Brave-shaped servers (INT-4, INT-6)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import create_ditto
from ditto.errors import InvalidArgumentError
from ditto.worker.interaction import (
    InteractionError,
    WebClient,
    WebOptions,
    create_interaction_worker,
    web_options_from_env,
    web_search,
)

from .conftest import BRAVE_TOKEN, SearchServers


def local(search_servers: SearchServers, **changes: object) -> WebOptions:
    values: dict[str, object] = {"wikipedia_url": search_servers.wiki_url, "brave_url": search_servers.brave_url,
                                 "timeout_s": 5.0, **changes}
    return WebOptions(**values)  # type: ignore[arg-type]


async def test_wikipedia_is_the_default_and_speaks_mediawiki(search_servers: SearchServers) -> None:
    """INT-4: the default engine is MediaWiki full-text search, no key; candidates carry title, url, snippet."""
    result = await web_search("write-ahead logging", options=local(search_servers))
    assert result.engine == "wikipedia" and result.query == "write-ahead logging"
    titles = [candidate.title for candidate in result.candidates]
    assert titles == ["Write-ahead logging", "SQLite"]
    first = result.candidates[0]
    assert first.url == f"{search_servers.wiki_url}/wiki/Write-ahead_logging"
    assert "<span" not in first.snippet and "write-ahead logging (WAL)" in first.snippet
    sent = search_servers.wiki_log.requests[0]  # the full query first; per-word requests follow
    assert sent["action"] == "query" and sent["list"] == "search" and sent["format"] == "json"
    assert sent["srsearch"] == "write-ahead logging" and sent["srlimit"] == "5"
    assert "x-subscription-token" not in search_servers.wiki_log.headers[-1]
    assert search_servers.brave_log.requests == []


async def test_at_most_five_candidates_and_limit(search_servers: SearchServers) -> None:
    """INT-4: never more than five candidates; a smaller limit is sent to the engine."""
    result = await web_search("a", options=local(search_servers))
    assert 0 < len(result.candidates) <= 5
    two = await web_search("a", limit=2, options=local(search_servers))
    assert len(two.candidates) == 2 and search_servers.wiki_log.requests[-1]["srlimit"] == "2"
    with pytest.raises(InteractionError) as caught:
        await web_search("a", limit=6, options=local(search_servers))
    assert caught.value.code == "INTERACTION_INVALID_INPUT"


async def test_titles_with_special_characters_become_wiki_urls(search_servers: SearchServers) -> None:
    """INT-4: page URLs are built the way MediaWiki writes them (spaces as underscores, + escaped)."""
    result = await web_search("programming language", options=local(search_servers))
    urls = {candidate.title: candidate.url for candidate in result.candidates}
    assert urls["Rust (programming language)"].endswith("/wiki/Rust_(programming_language)")
    assert urls["C++"].endswith("/wiki/C%2B%2B")


async def test_no_hits_is_an_empty_answer_not_an_error(search_servers: SearchServers) -> None:
    """INT-4: an empty result is kept apart from a failure."""
    result = await web_search("zyxwvut", options=local(search_servers))
    assert result.candidates == ()


async def test_brave_with_key_sends_the_subscription_token(search_servers: SearchServers) -> None:
    """INT-4: Brave Search with its key; markup stripped; non-web URLs dropped; at most five."""
    options = local(search_servers, search_engine="brave", brave_api_key=BRAVE_TOKEN)
    result = await web_search("database", options=options)
    assert result.engine == "brave"
    assert search_servers.brave_log.headers[-1]["x-subscription-token"] == BRAVE_TOKEN
    assert search_servers.brave_log.requests[-1] == {"q": "database", "count": "5"}
    assert all(candidate.url.startswith("https://pages.example/") for candidate in result.candidates)
    assert result.candidates and all("<strong>" not in c.title + c.snippet for c in result.candidates)
    assert len(result.candidates) <= 5
    assert search_servers.wiki_log.requests == []


async def test_brave_without_key_fails_and_never_asks_wikipedia(search_servers: SearchServers,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """INT-4: asking for Brave without a key is a clear error, never a silent switch to Wikipedia."""
    monkeypatch.delenv("DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY", raising=False)
    with pytest.raises(InteractionError) as caught:
        await web_search("database", engine="brave", options=local(search_servers))
    assert caught.value.code == "INTERACTION_INVALID_INPUT"
    assert "DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY" in caught.value.message
    assert search_servers.wiki_log.requests == [] and search_servers.brave_log.requests == []
    with pytest.raises(InvalidArgumentError):
        WebOptions(search_engine="brave")


async def test_brave_key_from_the_environment_when_a_request_asks_for_brave(search_servers: SearchServers,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """INT-4: with DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY in the environment, a request choosing
    engine "brave" (and options choosing it) is served by Brave with that key; the default stays Wikipedia."""
    monkeypatch.setenv("DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY", BRAVE_TOKEN)
    worker = create_interaction_worker(web=local(search_servers))
    runtime = create_ditto(workers=[worker])
    found = (await runtime.invoke("INTERACTION.WEB.SEARCH", {"query": "database", "engine": "brave"})).unwrap()
    assert found.engine == "brave" and 1 <= len(found.candidates) <= 5
    default = (await runtime.invoke("INTERACTION.WEB.SEARCH", {"query": "database"})).unwrap()
    assert default.engine == "wikipedia"
    await runtime.close()
    await worker.aclose()
    assert search_servers.brave_log.headers[0]["x-subscription-token"] == BRAVE_TOKEN
    assert (await web_search("database", options=local(search_servers, search_engine="brave"))).engine == "brave"


async def test_brave_wrong_key_is_tool_failed_without_the_key(search_servers: SearchServers) -> None:
    """INT-4/INT-6: a refused key is INTERACTION_TOOL_FAILED; the message never carries the key; no fallback."""
    options = local(search_servers, search_engine="brave", brave_api_key="wrong-secret-key")
    with pytest.raises(InteractionError) as caught:
        await web_search("database", options=options)
    assert caught.value.code == "INTERACTION_TOOL_FAILED"
    assert "wrong-secret-key" not in caught.value.message and "wrong-secret-key" not in repr(options)
    assert search_servers.wiki_log.requests == []


async def test_request_engine_overrides_default_without_fallback(search_servers: SearchServers) -> None:
    """INT-4: with a key configured, a request may pick either engine explicitly."""
    options = local(search_servers, brave_api_key=BRAVE_TOKEN)
    assert (await web_search("database", options=options)).engine == "wikipedia"
    assert (await web_search("database", engine="brave", options=options)).engine == "brave"


async def test_engine_failures_are_tool_failed(search_servers: SearchServers) -> None:
    """INT-6: a 503 HTML page or an unreachable engine is INTERACTION_TOOL_FAILED."""
    broken = local(search_servers, wikipedia_url=f"{search_servers.wiki_url}/broken")
    with pytest.raises(InteractionError) as caught:
        await web_search("database", options=broken)
    assert caught.value.code == "INTERACTION_TOOL_FAILED"
    from tests.support.net import free_port

    nowhere = local(search_servers, wikipedia_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(InteractionError) as caught:
        await web_search("database", options=nowhere)
    assert caught.value.code == "INTERACTION_TOOL_FAILED"


async def test_env_helper_reads_the_brave_key_only_when_asked(search_servers: SearchServers) -> None:
    """INT-4: the key comes from DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY via the application helper."""
    options = web_options_from_env(env={"DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY": BRAVE_TOKEN},
                                   wikipedia_url=search_servers.wiki_url, brave_url=search_servers.brave_url)
    assert options.brave_api_key == BRAVE_TOKEN and options.search_engine == "wikipedia"
    assert web_options_from_env(env={}).brave_api_key is None
    assert (await web_search("database", engine="brave", options=options)).engine == "brave"


async def test_search_node_on_the_worker(search_servers: SearchServers) -> None:
    """INT-4: INTERACTION.WEB.SEARCH is a public node with the same answer."""
    worker = create_interaction_worker(web=local(search_servers))
    runtime = create_ditto(workers=[worker])
    try:
        result = await runtime.invoke("INTERACTION.WEB.SEARCH", {"query": "sqlite", "limit": 1})
        assert result.status == "success"
        assert [c.title for c in result.unwrap().candidates] == ["SQLite"]
        bad = await runtime.invoke("INTERACTION.WEB.SEARCH", {"query": ""})
        assert bad.error is not None and bad.error.code == "INTERACTION_INVALID_INPUT"
    finally:
        await runtime.close()
        await worker.aclose()


@given(query=st.one_of(st.just(""), st.just("   "), st.text(min_size=401, max_size=500),
                       st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=31), min_size=1, max_size=5),
                       st.just("a\x00b"), st.just("\ud800x")),
       limit=st.one_of(st.just(5), st.integers(min_value=-10, max_value=0), st.integers(min_value=6)))
async def test_bad_queries_are_invalid_input_before_any_request(query: str, limit: int) -> None:
    """INT-4/INT-6: blank, oversize, control-character or lone-surrogate queries and bad limits fail cleanly."""
    if query.strip() and len(query) <= 400 and not any(ord(ch) < 32 for ch in query) and "\ud800" not in query \
            and 1 <= limit <= 5:
        return
    async with WebClient(WebOptions(wikipedia_url="http://127.0.0.1:9")) as client:
        with pytest.raises(InteractionError) as caught:
            await client.search({"query": query, "limit": limit})
    assert caught.value.code == "INTERACTION_INVALID_INPUT"


def test_options_are_validated() -> None:
    """INT-4/INT-5: bad web options are construction errors."""
    for bad in [{"allowed_origins": ["http://a.example"]}, {"allowed_origins": "https://a.example"},
                {"allowed_origins": ["https://a.example/path"]}, {"timeout_s": 0}, {"timeout_s": float("nan")},
                {"max_response_bytes": 0}, {"search_engine": "google"}, {"wikipedia_url": "ftp://x"},
                {"user_agent": "a\nb"}]:
        with pytest.raises(InvalidArgumentError):
            WebOptions(**bad)  # type: ignore[arg-type]
    options = WebOptions(allowed_origins=["HTTPS://Docs.Example:443/", "https://docs.example"])
    assert options.allowed_origins == ("https://docs.example",)
    assert dataclasses.replace(options, timeout_s=1).timeout_s == 1.0


async def test_web_options_as_a_dict_in_either_spelling() -> None:
    """INT-1/INT-5: create_interaction_worker(web=...) takes the options as a dict too, camelCase or
    snake_case (the seed's allowedOrigins); an unknown or bad option is a construction error."""
    for web in ({"allowedOrigins": ["https://sqlite.org"], "timeoutS": 5},
                {"allowed_origins": ["https://sqlite.org"], "timeout_s": 5}):
        worker = create_interaction_worker(web=web)
        options = worker.interaction.web.options
        assert options.allowed_origins == ("https://sqlite.org",) and options.timeout_s == 5.0
        await worker.aclose()
    for bad in ({"allowedOrigins": ["http://sqlite.org"]}, {"origins": ["https://sqlite.org"]},
                {"allowedOrigins": [], "allowed_origins": []}, {"timeoutS": "soon"}, ["https://sqlite.org"]):
        with pytest.raises(InvalidArgumentError):
            create_interaction_worker(web=bad)  # type: ignore[arg-type]
