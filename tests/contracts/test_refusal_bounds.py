"""Refusing a hostile JSON value costs linear memory and says a bounded amount (issue 19 finding 1)."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import pytest

from ditto import create_ditto, create_worker_http_app
from ditto.contracts import InvalidJson, check_json
from ditto.worker.context import create_context_worker
from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store


def _deep(key_length: int, depth: int) -> dict[str, Any]:
    """``depth`` objects inside each other, each with one key of ``key_length`` characters."""
    value: dict[str, Any] = {}
    for level in range(depth):
        value = {f"{level:04d}" + "k" * (key_length - 4): value}
    return value


def test_a_deep_value_with_long_keys_is_refused_in_linear_memory_and_time() -> None:
    """Issue 19 finding 1: a 50 kB key × 300 levels (15 MB of keys) is refused in well under a second, with a
    peak far below the quadratic 1.6 GB, and its message (the path) is at most a few hundred characters."""
    value = _deep(50_000, 300)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(InvalidJson) as refused:
            check_json(value)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2.0
    assert peak < 20_000_000, peak
    assert len(str(refused.value)) <= 400 and "nested deeper than 256" in refused.value.reason
    assert refused.value.path.startswith("0299k") and "…" in refused.value.path


def test_short_paths_are_quoted_whole() -> None:
    """Issue 19 finding 1: bounding the path changes nothing for ordinary keys."""
    with pytest.raises(InvalidJson) as refused:
        check_json({"a": {"b": [1, {"c": float("nan")}]}})
    assert refused.value.path == "a.b[1].c"


@pytest.mark.parametrize("node", ["MEMORY.WRITE", "CONTEXT.UPDATE"])
async def test_a_78mb_300_deep_request_is_refused_with_a_short_message(node: str, tmp_path: Path) -> None:
    """Issue 19 finding 1: a 7.8 MB, 300-deep request with 26 kB keys sent to MEMORY.WRITE or CONTEXT.UPDATE is
    refused with its worker's invalid-input code and a message under 1 kB (it was 6.6 MB), at a peak far
    below the 904–923 MB it took; over HTTP the transport refuses the body as too deep (INVALID_JSON), also
    with a short answer and a bounded peak (parsing included)."""
    value = _deep(26_000, 300)
    if node == "MEMORY.WRITE":
        worker = create_memory_worker(store=create_sqlite_memory_store(str(tmp_path / "m.sqlite")))
        request: dict[str, Any] = {"memories": [{"content": value}]}
        code = "MEMORY_INVALID_INPUT"
    else:
        worker = create_context_worker()
        request = {"contextId": "c1", "items": [{"id": "i1", "content": value}]}
        code = "INVALID_INPUT"
    server = create_ditto(workers=[worker])
    tracemalloc.start()
    try:
        result = await server.invoke(node, request)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "error" and result.error is not None and result.error.code == code
    assert len(result.error.message) < 1024, len(result.error.message)
    assert peak < 60_000_000, peak

    body = json.dumps({"node": node, "input": request}).encode()
    assert 7_500_000 < len(body) < 8 * 1024 * 1024
    app = create_worker_http_app(server, token="bounds-token-0123456789")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as client:
        tracemalloc.start()
        try:
            answer = await client.post("/v1/invoke", content=body,
                                       headers={"authorization": "Bearer bounds-token-0123456789"})
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "INVALID_JSON"
    assert len(answer.content) < 1024
    assert peak < 120_000_000, peak
    await server.close()
