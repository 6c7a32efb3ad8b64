"""A signal fired during each web operation: INTERACTION_CANCELLED at once, nothing left running (INT-4…INT-6)."""

from __future__ import annotations

import asyncio
import time

import pytest

from ditto import create_ditto
from ditto.signal import AbortController, CancelSignal
from ditto.worker.interaction import InteractionError, WebClient, WebOptions, create_interaction_worker

from .conftest import SearchServers, Site


async def test_signal_during_page_read_cancels(site: Site, web_options: WebOptions) -> None:
    """INT-5/INT-6: a read waiting on a hanging body stops when the signal fires."""
    async with WebClient(web_options) as client:
        controller = AbortController()
        pending = asyncio.create_task(client.read({"url": site.url("/hang")}, signal=controller.signal))
        await site.state.hang_started.wait()
        started = time.monotonic()
        controller.abort()
        with pytest.raises(InteractionError) as caught:
            await pending
        assert caught.value.code == "INTERACTION_CANCELLED"
        assert time.monotonic() - started < 2
        # The client is still usable after a cancelled read.
        assert (await client.read({"url": site.url("/page")})).status == 200


async def test_signal_deadline_during_read_is_timeout(site: Site, web_options: WebOptions) -> None:
    """INT-5/INT-6: a CancelSignal.timeout firing mid-read reports INTERACTION_TIMEOUT."""
    async with WebClient(web_options) as client:
        with pytest.raises(InteractionError) as caught:
            await client.read({"url": site.url("/hang")}, signal=CancelSignal.timeout(0.3))
        assert caught.value.code == "INTERACTION_TIMEOUT"


@pytest.mark.parametrize("path", ["/trickle", "/chunked", "/big", "/redirect-away", "/json"])
async def test_signal_fired_before_each_hostile_read_runs_nothing(path: str, site: Site,
                                                                  web_options: WebOptions) -> None:
    """INT-5/INT-6: an already-fired signal refuses the read before any request."""
    controller = AbortController()
    controller.abort()
    async with WebClient(web_options) as client:
        with pytest.raises(InteractionError) as caught:
            await client.read({"url": site.url(path)}, signal=controller.signal)
    assert caught.value.code == "INTERACTION_CANCELLED"
    assert site.state.paths == []


async def test_signal_during_trickled_body_cancels_before_deadline(site: Site, web_options: WebOptions) -> None:
    """INT-5/INT-6: the caller's signal wins over a slower per-request deadline."""
    async with WebClient(web_options) as client:
        started = time.monotonic()
        with pytest.raises(InteractionError) as caught:
            await client.read({"url": site.url("/trickle")}, signal=CancelSignal.timeout(0.2))
        assert caught.value.code == "INTERACTION_TIMEOUT"
        assert time.monotonic() - started < web_options.timeout_s


async def test_signal_during_search_cancels(search_servers: SearchServers) -> None:
    """INT-4/INT-6: a search waiting on a silent engine stops when the signal fires."""
    search_servers.wiki_log.hang = asyncio.Event()
    worker = create_interaction_worker(web=WebOptions(wikipedia_url=search_servers.wiki_url))
    runtime = create_ditto(workers=[worker])
    try:
        controller = AbortController()
        pending = asyncio.create_task(runtime.invoke("INTERACTION.WEB.SEARCH", {"query": "sqlite"},
                                                     signal=controller.signal))
        await search_servers.wiki_log.seen.wait()
        controller.abort()
        result = await pending
        assert result.status == "cancelled"
        direct = AbortController()
        search_servers.wiki_log.seen.clear()
        pending_direct = asyncio.create_task(worker.interaction.web_search({"query": "sqlite"},
                                                                          signal=direct.signal))
        await search_servers.wiki_log.seen.wait()
        direct.abort()
        with pytest.raises(InteractionError) as caught:
            await pending_direct
        assert caught.value.code == "INTERACTION_CANCELLED"
    finally:
        search_servers.wiki_log.hang.set()
        await runtime.close()
        await worker.aclose()


async def test_signal_through_the_runtime_reports_interaction_codes() -> None:
    """INT-1/INT-6: cancelled through runtime.invoke (a fired signal, an already-fired one, timeout=) the
    NodeResult carries INTERACTION_CANCELLED / INTERACTION_TIMEOUT, and OBSERVE passes the code on."""
    started = asyncio.Event()
    stopped = asyncio.Event()

    async def wait_forever(label: str) -> str:
        """Never answers."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return label

    worker = create_interaction_worker(tools=[wait_forever])
    runtime = create_ditto(workers=[worker])
    call = {"id": "c1", "name": "wait_forever", "arguments": {"label": "x"}}
    controller = AbortController()
    pending = asyncio.create_task(runtime.invoke("INTERACTION.ACT.TOOL", {"call": call}, signal=controller.signal))
    await started.wait()
    controller.abort()
    result = await pending
    assert (result.status, result.error and result.error.code) == ("cancelled", "INTERACTION_CANCELLED")
    assert stopped.is_set()
    observed = (await runtime.invoke("INTERACTION.OBSERVE", {"result": result, "call": call})).unwrap()
    assert observed.status == "cancelled" and observed.error is not None
    assert observed.error.code == "INTERACTION_CANCELLED"
    fired = AbortController()
    fired.abort()
    result = await runtime.invoke("INTERACTION.OBSERVE", {"result": {}}, signal=fired.signal)
    assert (result.status, result.error and result.error.code) == ("cancelled", "INTERACTION_CANCELLED")
    for deadline in ({"timeout": 0.05}, {"signal": CancelSignal.timeout(0.05)}):
        result = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": call}, **deadline)  # type: ignore[arg-type]
        assert (result.status, result.error and result.error.code) == ("timeout", "INTERACTION_TIMEOUT")
    await runtime.close()
    await worker.aclose()
