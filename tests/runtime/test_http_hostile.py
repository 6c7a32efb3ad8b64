"""Hostile requests against a real uvicorn server on 127.0.0.1 (issue 19, reliability findings, server side).

Each answer is a documented JSON refusal, never a plain-text 500; the connection is either kept correctly
or closed with ``Connection: close``; nothing is logged at ERROR for a client's own mistake.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ditto import WorkerDefinition, create_ditto, create_worker_http_app
from ditto.runtime import Runtime

from ..support.uvicorn_thread import serve_app, serve_port
from .workers import echo, make

TOKEN = "hostile-token-0123456789"
AUTH = {"authorization": f"Bearer {TOKEN}"}


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


async def _raw(port: int, request: bytes, *, wait: float = 2.0) -> bytes:
    """Send ``request`` bytes on a fresh connection; everything the server answers until it closes or ``wait``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = bytearray()
    try:
        async with asyncio.timeout(wait):
            while chunk := await reader.read(65536):
                answer += chunk
    except TimeoutError:
        pass
    finally:
        writer.close()
    return bytes(answer)


@contextlib.contextmanager
def _errors_seen(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Capture WARNING and up from every logger, uvicorn's too (its own loggers do not propagate to the root)."""
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            yield
    finally:
        uvicorn_logger.removeHandler(caplog.handler)


def _post(body: bytes, *, headers: str = f"authorization: Bearer {TOKEN}\r\n") -> bytes:
    return (f"POST /v1/invoke HTTP/1.1\r\nhost: x\r\n{headers}content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode() + body


async def test_deep_request_json_is_invalid_json_not_a_500(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19 finding 2: a request nested 600 or 5,000 levels (RecursionError in json.loads) is a 400
    INVALID_JSON in JSON, on a connection that keeps serving; nothing is logged at ERROR."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        with _errors_seen(caplog):
            for depth in (600, 5_000, 100_000):
                body = f'{{"node":"TEST.ECHO","input":{_nested(depth)}}}'.encode()
                answer = await client.post("/v1/invoke", content=body)
                assert answer.status_code == 400, answer.text[:200]
                assert answer.json()["error"]["code"] == "INVALID_JSON"
            ok = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1})
            assert ok.json()["output"] == 1
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_non_standard_number_literals_are_refused() -> None:
    """Issue 19 finding 7: NaN, Infinity and -Infinity are not JSON; the handler never runs on them."""
    seen: list[Any] = []

    async def record(input: Any) -> Any:
        seen.append(input)
        return 1

    server = create_ditto(workers=[WorkerDefinition("R", {"R.REC": record})])
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        for literal in ("NaN", "Infinity", "-Infinity"):
            for body in (f'{{"node":"R.REC","input":{literal}}}',
                         f'{{"node":"R.REC","input":1,"timeoutMs":{literal}}}'):
                answer = await client.post("/v1/invoke", content=body.encode())
                assert answer.status_code == 400 and answer.json()["error"]["code"] == "INVALID_JSON", body
    assert seen == []


async def test_timeout_ms_must_be_a_bounded_finite_number() -> None:
    """Issue 19 findings 2 and 7: timeoutMs with 400 digits, 1e308 or over 24 hours is INVALID_REQUEST (not an
    OverflowError 500); the upper bound itself is accepted."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        for raw in ("1" + "0" * 400, "1e308", "86400001", "-1" + "0" * 400):
            body = f'{{"node":"TEST.ECHO","input":1,"timeoutMs":{raw}}}'.encode()
            answer = await client.post("/v1/invoke", content=body)
            assert answer.status_code == 400, (raw, answer.text[:200])
            assert answer.json()["error"]["code"] == "INVALID_REQUEST"
        edge = await client.post("/v1/invoke", content=b'{"node":"TEST.ECHO","input":1,"timeoutMs":86400000}')
        assert edge.status_code == 200 and edge.json()["output"] == 1


async def test_deep_output_is_output_not_serializable() -> None:
    """Issue 19 finding 2: a handler output nested 600 levels is OUTPUT_NOT_SERIALIZABLE, not a 500."""
    async def deep(_input: Any) -> Any:
        value: Any = []
        for _ in range(600):
            value = [value]
        return value

    server = create_ditto(workers=[WorkerDefinition("D", {"D.DEEP": deep, "D.ECHO": echo})])
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        answer = await client.post("/v1/invoke", json={"node": "D.DEEP", "input": None})
        assert answer.status_code == 200
        assert answer.json()["status"] == "error" and answer.json()["error"]["code"] == "OUTPUT_NOT_SERIALIZABLE"


class _BrokenRuntime(Runtime):
    """A runtime whose serving path has a bug: the app's last-resort answer is what is under test."""

    async def invoke_local(self, node: str, input: Any, **_: Any) -> Any:
        raise RuntimeError("internal bug with secret=hunter2")


async def test_an_internal_error_is_a_json_500_that_closes_the_connection(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19 findings 3, 4, 13: an unexpected server failure is a JSON 500 INTERNAL_ERROR carrying
    ``Connection: close`` (so a client never reuses a dropped socket); 20 of them log the traceback once."""
    server = _BrokenRuntime()
    for definition in make():
        server.register(definition)
    with _errors_seen(caplog):
        async with serve_port(create_worker_http_app(server, token=TOKEN)) as port:
            for _ in range(20):
                answer = await _raw(port, _post(b'{"node":"TEST.ECHO","input":1}'))
                head, _, body = answer.partition(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 500"), answer[:200]
                assert b"connection: close" in head.lower()
                assert json.loads(body)["error"]["code"] == "INTERNAL_ERROR"
                assert b"hunter2" not in answer
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=AUTH) as client:
                for _ in range(5):  # sequential calls on one pooled client: each gets the documented answer
                    assert (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1})).status_code == 500
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1, [r.getMessage() for r in caplog.records]
    logged = sum(len(r.getMessage()) + len(logging.Formatter().formatException(r.exc_info))  # type: ignore[arg-type]
                 for r in tracebacks)
    assert logged < 25 * 2048  # ≤ 2 kB per hostile request, amortised


async def test_two_authorization_headers_are_refused() -> None:
    """Issue 19 finding 12: a request carrying two Authorization headers is 401, even if one is right, and
    nothing runs."""
    seen: list[Any] = []

    async def record(input: Any) -> Any:
        seen.append(input)
        return 1

    server = create_ditto(workers=[WorkerDefinition("R", {"R.REC": record})])
    async with serve_port(create_worker_http_app(server, token=TOKEN)) as port:
        body = b'{"node":"R.REC","input":1}'
        for headers in (f"authorization: Bearer {TOKEN}\r\nauthorization: Bearer {TOKEN}\r\n",
                        f"authorization: Bearer {TOKEN}\r\nauthorization: Bearer wrong\r\n",
                        f"authorization: Bearer wrong\r\nauthorization: Bearer {TOKEN}\r\n"):
            answer = await _raw(port, _post(body, headers=headers), wait=1.0)
            assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
        assert seen == []
        assert (await _raw(port, _post(body), wait=0.5)).startswith(b"HTTP/1.1 200")


async def test_client_disconnecting_mid_body_logs_no_error(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19 finding 2: a client that hangs up half-way through its body leaves no ASGI error in the log."""
    server = create_ditto(workers=make())
    with _errors_seen(caplog):
        async with serve_port(create_worker_http_app(server, token=TOKEN)) as port:
            for _ in range(5):
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(_post(b'{"node":"TEST.ECHO","input":"' + b"x" * 100_000)[:50_000])
                await writer.drain()
                await asyncio.sleep(0.05)
                writer.close()
            await asyncio.sleep(0.3)
            assert (await _raw(port, _post(b'{"node":"TEST.ECHO","input":1}'), wait=0.5)).startswith(b"HTTP/1.1 200")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]


async def test_a_body_that_trickles_past_the_body_timeout_is_408_and_closed() -> None:
    """Issue 19 finding 9: a body still incomplete after ``body_timeout`` is answered 408 REQUEST_TIMEOUT with
    Connection: close, and the socket is closed; the server keeps serving others meanwhile."""
    server = create_ditto(workers=make())
    async with serve_port(create_worker_http_app(server, token=TOKEN, body_timeout=0.5)) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = _post(b'{"node":"TEST.ECHO","input":"' + b"x" * 1000 + b'"}')
        writer.write(request[:-500])
        await writer.drain()
        started = time.monotonic()
        answer = bytearray()
        async with asyncio.timeout(5):
            while chunk := await reader.read(65536):
                answer += chunk
                writer.write(b"x")  # keep trickling: the deadline is for the whole body
        writer.close()
        assert time.monotonic() - started < 2.5
        assert answer.startswith(b"HTTP/1.1 408") and b"connection: close" in answer.lower()
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == "REQUEST_TIMEOUT"


hostile_values = st.recursive(
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400, '"\\ud800"', "null", "0", '"x"'])
    | st.integers().map(str),
    lambda inner: st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
    | st.lists(inner, max_size=3).map(lambda items: "{" + ",".join(f'"k{i}":{v}' for i, v in enumerate(items)) + "}")
    | st.integers(min_value=200, max_value=2000).map(lambda depth: "[" * depth + "]" * depth),
    max_leaves=6)


async def test_hostile_bodies_get_documented_json_answers() -> None:
    """Issue 19 findings 2, 7: any mix of NaN/Infinity literals, 400-digit numbers, lone surrogates and deep
    nesting, as input or timeoutMs, gets a documented status and a JSON body; the server keeps serving."""
    documented = {200: {"success", "error"}, 400: {"INVALID_JSON", "INVALID_REQUEST"}}
    seen: list[bytes] = []

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(value=hostile_values, where=st.sampled_from(["input", "timeoutMs"]))
    def collect(value: str, where: str) -> None:
        body = f'{{"node":"TEST.ECHO","input":{value}}}' if where == "input" else \
            f'{{"node":"TEST.ECHO","input":1,"timeoutMs":{value}}}'
        seen.append(body.encode())

    collect()
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        for body in seen:
            answer = await client.post("/v1/invoke", content=body)
            assert answer.status_code in documented, (answer.status_code, body[:200])
            parsed = answer.json()
            label = parsed["status"] if answer.status_code == 200 else parsed["error"]["code"]
            assert label in documented[answer.status_code], (label, body[:200])
        assert (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1})).json()["output"] == 1
