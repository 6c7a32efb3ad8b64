"""Malformed requests against a real uvicorn server never crash it (RT-6)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ditto import create_ditto, create_worker_http_app

from ..support.uvicorn_thread import serve_app
from .workers import make

TOKEN = "fuzz-token-0123456789"
DOCUMENTED = {200: {"success", "error", "rejected"}, 400: {"INVALID_JSON", "INVALID_REQUEST"},
              401: {"UNAUTHORIZED"}, 404: {"UNKNOWN_NODE"}, 413: {"PAYLOAD_TOO_LARGE"}}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12)
bodies = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"node": st.sampled_from(["TEST.ECHO", "TEST.FAIL", "NOPE", ""]) | st.text(max_size=5),
                           "input": json_values},
                          optional={"address": json_values, "executionId": json_values, "timeoutMs": json_values})
    .map(lambda v: json.dumps(v).encode()),
)


async def test_random_bodies_get_documented_answers() -> None:
    """RT-6: any body (bytes, JSON, near-valid requests) gets a documented status and code; the server
    keeps serving afterwards."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN, max_body_bytes=512)) as url, \
            httpx.AsyncClient(base_url=url) as client:
        seen: list[tuple[int, Any]] = []

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(body=bodies, authorised=st.booleans())
        def check(body: bytes, authorised: bool) -> None:
            seen.append((int(authorised), body))

        check()
        for authorised, body in seen:
            headers = {"authorization": f"Bearer {TOKEN}"} if authorised else {}
            response = await client.post("/v1/invoke", content=body, headers=headers)
            assert response.status_code in DOCUMENTED, (response.status_code, body)
            answer = response.json()
            label = answer.get("status") if response.status_code == 200 else answer["error"]["code"]
            assert label in DOCUMENTED[response.status_code], (response.status_code, label, body)
            if not authorised:
                assert response.status_code == 401  # nothing is read or run without a token
        ok = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1},
                               headers={"authorization": f"Bearer {TOKEN}"})
        assert ok.json()["output"] == 1
