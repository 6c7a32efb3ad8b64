"""URLs yarl cannot parse are refused with INTERACTION's codes, never a raw ``IndexError`` (INT-4, INT-5, INT-6).

Issue 15, "Tests that catch the bug": the origin property under the ``security`` profile found that
``yarl.URL("https://[::1]@")`` raises ``IndexError`` (not ``ValueError``), which escaped ``check_url`` as a
raw exception (a ``HANDLER_ERROR`` through the runtime). The same parse guarded the configured origins and
endpoints and the URLs a search engine answers; each is checked here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ditto import create_ditto
from ditto.errors import InvalidArgumentError
from ditto.worker.interaction import InteractionError, WebOptions, create_interaction_worker
from ditto.worker.interaction.web import WebClient
from tests.support.uvicorn_thread import serve_app

#: URLs yarl refuses with IndexError instead of ValueError.
UNPARSABLE = ["https://[::1]@", "https://[::1]@/page", "https://[@"]
TOKEN = "brave-url-test"


@pytest.mark.parametrize("url", UNPARSABLE)
async def test_an_unparsable_url_is_invalid_input_not_a_raw_error(url: str) -> None:
    """INT-5, INT-6 (issue 15): check_url refuses the URL with INTERACTION_INVALID_INPUT; through the runtime
    WEB.READ fails with that code, not HANDLER_ERROR."""
    client = WebClient(WebOptions(allowed_origins=["https://docs.example"]))
    with pytest.raises(InteractionError) as caught:
        client.check_url(url)
    assert (caught.value.code, caught.value.message) == ("INTERACTION_INVALID_INPUT", "url is not a valid URL")
    worker = create_interaction_worker(web=WebOptions(allowed_origins=["https://docs.example"]))
    runtime = create_ditto(workers=[worker])
    try:
        result = await runtime.invoke("INTERACTION.WEB.READ", {"url": url})
    finally:
        await runtime.close()
        await worker.aclose()
    assert result.status == "error" and result.error is not None
    assert result.error.code == "INTERACTION_INVALID_INPUT"


@pytest.mark.parametrize("url", UNPARSABLE)
def test_an_unparsable_origin_or_endpoint_is_an_invalid_argument(url: str) -> None:
    """INT-5 (issue 15): the application's own configuration is refused with InvalidArgumentError."""
    with pytest.raises(InvalidArgumentError) as origin:
        WebOptions(allowed_origins=[url])
    assert origin.value.message == "an allowed origin is not a valid URL"
    with pytest.raises(InvalidArgumentError) as endpoint:
        WebOptions(allowed_origins=["https://docs.example"], wikipedia_url=url)
    assert endpoint.value.message == "wikipedia_url is not a valid URL"


@asynccontextmanager
async def brave_answering(urls: list[str]) -> AsyncIterator[str]:
    async def search(request: Request) -> Response:
        if request.headers.get("x-subscription-token") != TOKEN:
            return JSONResponse({"type": "ErrorResponse"}, status_code=401)
        results = [{"title": f"hit {index}", "url": url, "description": "backups"} for index, url in enumerate(urls)]
        return JSONResponse({"type": "search", "web": {"type": "search", "results": results}})

    async with serve_app(Starlette(routes=[Route("/res/v1/web/search", search)])) as base:
        yield f"{base}/res/v1/web/search"


async def test_an_unparsable_url_from_the_search_engine_is_skipped() -> None:
    """INT-4 (issue 15): a search result's URL is data; one yarl cannot parse is skipped like any unusable
    hit, and the good candidates around it are returned."""
    async with brave_answering([UNPARSABLE[0], "https://docs.example/backups", UNPARSABLE[2]]) as url:
        client = WebClient(WebOptions(allowed_origins=["https://docs.example"], search_engine="brave",
                                      brave_api_key=TOKEN, brave_url=url))
        try:
            found = await client.search({"query": "backups"})
        finally:
            await client.aclose()
    assert [candidate.url for candidate in found.candidates] == ["https://docs.example/backups"]
