"""The web tools' bounds, each tested so that breaking it fails a test (issue 15 list, issue 16/17).

Search never follows a redirect (the Brave key must not travel to another host); the
allowed-origin check is exact; a body of exactly ``max_response_bytes`` is read and one
byte more is refused, streamed or declared; a declared ``Content-Length`` over the cap
is refused before any body byte is read; the default deadline is 20 s. The servers are
real sockets on 127.0.0.1 that write HTTP by hand, so each test controls every byte.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ditto.worker.interaction import InteractionError, WebClient, WebOptions, web_read, web_search
from ditto.worker.interaction.config import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_WEB_TIMEOUT_S, web_options_from_env

from .servers import Tls

MIB = 1024 * 1024
KEY = "brave-secret-key"


@dataclass
class Seen:
    """What a hand-written server received: request heads (method, path, headers) and how many arrived."""

    heads: list[bytes] = field(default_factory=list)


Handler = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def raw_server(handler: Handler, *, tls: Tls | None = None) -> AsyncIterator[tuple[int, Seen]]:
    """A socket server on 127.0.0.1 that reads one request head and lets ``handler`` write the answer."""
    seen = Seen()
    context: ssl.SSLContext | None = None
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls.cert_file))

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        seen.heads.append(head)
        try:
            await handler(head, writer)
            await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_client, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, seen
    finally:
        server.close()


def answer(status: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def html_of_size(size: int) -> bytes:
    """A page of exactly ``size`` bytes whose bulk is a comment (cheap to extract)."""
    start = b"<html><body><article><p>Exactly sized page for the byte cap.</p></article><!--"
    end = b"--></body></html>"
    return start + b"x" * (size - len(start) - len(end)) + end


# -- search never follows a redirect -----------------------------------------------------------
@pytest.mark.parametrize("engine", ["brave", "wikipedia"])
async def test_search_never_follows_a_redirect_to_another_host(engine: str) -> None:
    """INT-4/INT-6, issue 15: a search API answering 302 to another host gets INTERACTION_REDIRECT_REFUSED;
    the other host receives nothing, so the Brave key never travels there."""
    async def thief(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(answer("200 OK", b'{"web": {"results": []}, "query": {"search": []}}',
                            {"Content-Type": "application/json"}))

    async with raw_server(thief) as (other_port, stolen):
        async def redirect(head: bytes, writer: asyncio.StreamWriter) -> None:
            writer.write(answer("302 Found", b"", {"Location": f"http://localhost:{other_port}/steal",
                                                   "Content-Length": "0"}))

        async with raw_server(redirect) as (port, seen):
            options = WebOptions(brave_api_key=KEY, brave_url=f"http://127.0.0.1:{port}/res/v1/web/search",
                                 wiki_url=f"http://127.0.0.1:{port}/w/api.php", timeout_s=5)
            with pytest.raises(InteractionError) as caught:
                await web_search("write-ahead logging", engine=engine, options=options)  # type: ignore[arg-type]
            await asyncio.sleep(0.2)
    assert caught.value.code == "INTERACTION_REDIRECT_REFUSED"
    assert len(seen.heads) == 1 and stolen.heads == []
    if engine == "brave":
        assert KEY.encode() in seen.heads[0]  # sent to the configured endpoint only


# -- the allowed-origin check is exact -----------------------------------------------------------
ALLOWED = "https://docs.example"


def oracle_origin(url: str) -> str | None:
    """The origin by the standard library's parser: https, no userinfo, default port folded."""
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.username is not None or parts.password is not None or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return f"https://{parts.hostname}" + ("" if port in (None, 443) else f":{port}")


@given(url=st.builds(lambda scheme, userinfo, host, port, tail: f"{scheme}{userinfo}{host}{port}{tail}",
                     st.sampled_from(["https://", "http://", "HTTPS://", "https:/", "https:///"]),
                     st.sampled_from(["", "user@", "docs.example@", "user:pw@", "@"]),
                     st.sampled_from(["docs.example", "DOCS.example", "docs.example.evil", "evil-docs.example",
                                      "docs.example.", "docs-example", "xdocs.example", "sub.docs.example"]),
                     st.sampled_from(["", ":443", ":444", ":8443", ":0443", ":"]),
                     st.sampled_from(["", "/", "/wal.html", "?q=1", "#top", "@evil.example/", "\\@evil.example/"])))
@example(url="https://@docs.example")
@example(url="https://docs.example.evil/wal.html")
@example(url="https://docs.example:444/wal.html")
@example(url="https://docs.example:8443/")
@example(url="https://docs.example@evil.example/")
@example(url="https://evil.example@docs.example/")
@example(url="https://user:pw@docs.example/")
@example(url="https://evil.example#@docs.example/")
@example(url="https://evil.example?@docs.example/")
@example(url="https://docs.example./")
@example(url="https://docs.example%2eevil/")
@example(url="http://docs.example/")
@example(url="https://docs.example\\@evil.example/")
def test_origin_check_is_exact(url: str) -> None:
    """INT-5, issue 15: a URL passes only when its origin is exactly the allowed one (host, port, https, no
    userinfo): a longer host, another port, userinfo tricks and look-alikes are all refused."""
    client = WebClient(WebOptions(allowed_origins=[ALLOWED]))
    try:
        client.check_url(url)
    except InteractionError as error:
        assert error.code in ("INTERACTION_ORIGIN_NOT_ALLOWED", "INTERACTION_INVALID_INPUT")
        return
    assert oracle_origin(url) == ALLOWED, url
    host = urlsplit(url).hostname or ""
    assert host == "docs.example"


@pytest.mark.parametrize("url", ["https://docs.example/wal.html", "https://DOCS.EXAMPLE/", "https://docs.example:443/x"])
def test_the_allowed_origin_itself_passes(url: str) -> None:
    """INT-5: the exact origin (any case, default port spelled or not) is readable."""
    assert WebClient(WebOptions(allowed_origins=[ALLOWED])).check_url(url).host == "docs.example"


# -- the byte cap: exactly 4 MiB in, one more byte out -------------------------------------------
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_a_body_of_exactly_the_cap_is_read_and_one_byte_more_is_refused(tls: Tls, declared: bool) -> None:
    """INT-5, issue 15: 4 MiB exactly is accepted, 4 MiB + 1 refused (INTERACTION_RESPONSE_TOO_LARGE), both with
    a Content-Length and streamed in chunks without one."""
    bodies = {"/exact": html_of_size(DEFAULT_MAX_RESPONSE_BYTES), "/over": html_of_size(DEFAULT_MAX_RESPONSE_BYTES + 1)}

    async def page(head: bytes, writer: asyncio.StreamWriter) -> None:
        body = bodies[head.split(b" ")[1].decode()]
        if declared:
            writer.write(answer("200 OK", body, {"Content-Type": "text/html", "Content-Length": str(len(body))}))
            return
        writer.write(answer("200 OK", b"", {"Content-Type": "text/html", "Transfer-Encoding": "chunked"}))
        for start in range(0, len(body), 100_000):
            chunk = body[start:start + 100_000]
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")

    async with raw_server(page, tls=tls) as (port, _):
        origin = f"https://127.0.0.1:{port}"
        options = WebOptions(allowed_origins=[origin], ssl_context=tls.client_context(), timeout_s=15)
        assert options.max_response_bytes == 4 * MIB
        exact = await web_read(f"{origin}/exact", options=options)
        assert len(exact.raw) == 4 * MIB and "Exactly sized page" in exact.text
        with pytest.raises(InteractionError) as caught:
            await web_read(f"{origin}/over", options=options)
    assert caught.value.code == "INTERACTION_RESPONSE_TOO_LARGE"


async def test_a_declared_length_over_the_cap_is_refused_before_the_body(tls: Tls) -> None:
    """INT-5, issue 15: Content-Length over the cap is refused at the headers: the server sends no body byte and
    never closes, yet the read fails at once with INTERACTION_RESPONSE_TOO_LARGE (not a timeout)."""
    release = asyncio.Event()

    async def headers_only(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(answer("200 OK", b"", {"Content-Type": "text/html",
                                            "Content-Length": str(DEFAULT_MAX_RESPONSE_BYTES + 1)}))
        await writer.drain()
        await release.wait()

    async with raw_server(headers_only, tls=tls) as (port, _):
        origin = f"https://127.0.0.1:{port}"
        options = WebOptions(allowed_origins=[origin], ssl_context=tls.client_context(), timeout_s=10)
        started = time.monotonic()
        try:
            with pytest.raises(InteractionError) as caught:
                await web_read(f"{origin}/page", options=options)
        finally:
            release.set()
    assert caught.value.code == "INTERACTION_RESPONSE_TOO_LARGE"
    assert time.monotonic() - started < 3.0


# -- the deadline ----------------------------------------------------------------------------------
async def test_the_default_deadline_is_20_seconds_and_applies_to_a_hanging_server(tls: Tls) -> None:
    """INT-5, issue 15 (seed: 20 s per request): the default is 20 s everywhere options are built, and the
    configured deadline is what stops a server that never answers (INTERACTION_TIMEOUT)."""
    assert DEFAULT_WEB_TIMEOUT_S == 20.0
    assert WebOptions().timeout_s == 20.0 and web_options_from_env(None, {}).timeout_s == 20.0
    release = asyncio.Event()

    async def hang(head: bytes, writer: asyncio.StreamWriter) -> None:
        await release.wait()

    async with raw_server(hang, tls=tls) as (port, _):
        origin = f"https://127.0.0.1:{port}"
        started = time.monotonic()
        try:
            with pytest.raises(InteractionError) as caught:
                await web_read(f"{origin}/page", options=WebOptions(allowed_origins=[origin], timeout_s=0.5,
                                                                     ssl_context=tls.client_context()))
        finally:
            release.set()
    assert caught.value.code == "INTERACTION_TIMEOUT" and "0.5 s" in caught.value.message
    assert 0.4 < time.monotonic() - started < 2.5
