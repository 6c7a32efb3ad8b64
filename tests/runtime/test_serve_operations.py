"""`ditto serve` as an operator runs it (issue 19): drain on SIGTERM, readiness, /metrics, access log,
uvloop, TLS and slow-client timeouts, each against a real `ditto serve` process on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ..support.ditto_serve import ditto_serve
from ..support.loopback_tls import make_test_ca

TOKEN = "ops-token-0123456789"
AUTH = {"authorization": f"Bearer {TOKEN}"}
WORKERS = ["tests.runtime.service_workers:make"]


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def test_sigterm_drains_every_accepted_call_then_exits_zero() -> None:
    """Issue 19 (graceful drain): SIGTERM while 200 calls are in flight → /readyz turns 503 while /healthz stays
    200, a new call is 503 SERVICE_DRAINING, every one of the 200 accepted calls completes with its own answer,
    and the process exits 0."""
    with ditto_serve(WORKERS, TOKEN, args=["--grace-period", "20"]) as (url, process):
        limits = httpx.Limits(max_connections=400, max_keepalive_connections=400)
        async with httpx.AsyncClient(base_url=url, headers=AUTH, limits=limits, timeout=30) as client:
            assert (await client.get("/readyz")).status_code == 200
            calls = [asyncio.create_task(client.post("/v1/invoke", json={"node": "OPS.HOLD",
                                                                         "input": {"ms": 5000, "n": n}}))
                     for n in range(200)]
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # the server's own gauge says when all 200 are in
                metrics = _samples((await client.get("/metrics")).text)
                if metrics.get(("ditto_http_inflight_calls", ())) == 200:
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError("the 200 calls never were in flight together")
            os.kill(process.pid, signal.SIGTERM)
            await asyncio.sleep(0.2)
            async with httpx.AsyncClient(base_url=url, headers=AUTH) as fresh:
                ready = await fresh.get("/readyz")
                assert ready.status_code == 503 and ready.json()["status"] == "draining"
                assert (await fresh.get("/healthz")).status_code == 200
                refused = await fresh.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": -1}})
                assert refused.status_code == 503 and refused.json()["error"]["code"] == "SERVICE_DRAINING"
            answers = await asyncio.gather(*calls)
        assert [a.status_code for a in answers] == [200] * 200
        assert sorted(a.json()["output"]["n"] for a in answers) == list(range(200))
        assert process.wait(timeout=15) == 0


async def test_grace_period_bounds_the_drain() -> None:
    """Issue 19 (graceful drain): a call longer than --grace-period does not hold the process: it exits 0 soon
    after the grace period."""
    with ditto_serve(WORKERS, TOKEN, args=["--grace-period", "1"]) as (url, process):
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as client:
            call = asyncio.create_task(client.post("/v1/invoke", json={"node": "OPS.HOLD",
                                                                       "input": {"ms": 20_000, "n": 1}}))
            await asyncio.sleep(0.5)
            started = time.monotonic()
            os.kill(process.pid, signal.SIGTERM)
            assert await asyncio.to_thread(process.wait, 10) == 0
            assert time.monotonic() - started < 5
            call.cancel()


async def test_metrics_count_calls_errors_and_latency_behind_a_token() -> None:
    """Issue 19 (observability): /metrics is Prometheus text behind DITTO_TRANSPORT_HTTP_METRICS_TOKEN (the worker
    token is not enough when a separate one is set): calls by node and status, errors by code, a latency histogram per
    node, refusals."""
    env = {"DITTO_TRANSPORT_HTTP_METRICS_TOKEN": "metrics-secret-123"}
    with ditto_serve(WORKERS, TOKEN, env=env) as (url, _process):
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
            for n in range(3):
                await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": n}})
            await client.post("/v1/invoke", json={"node": "OPS.BOOM", "input": None})
            await client.post("/v1/invoke", content=b"{nope")
            await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": 1}, headers={"authorization": "x"})
            assert (await client.get("/metrics")).status_code == 401
            assert (await client.get("/metrics", headers={"authorization": "Bearer wrong"})).status_code == 401
            scraped = await client.get("/metrics", headers={"authorization": "Bearer metrics-secret-123"})
        assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
        samples = _samples(scraped.text)
        assert samples[("ditto_http_calls_total", (("node", "OPS.HOLD"), ("status", "success")))] == 3
        assert samples[("ditto_http_calls_total", (("node", "OPS.BOOM"), ("status", "error")))] == 1
        assert samples[("ditto_http_errors_total", (("code", "HANDLER_ERROR"),))] == 1
        assert samples[("ditto_http_refused_total", (("code", "INVALID_JSON"),))] == 1
        assert samples[("ditto_http_refused_total", (("code", "UNAUTHORIZED"),))] >= 1
        assert samples[("ditto_http_call_seconds_count", (("node", "OPS.HOLD"),))] == 3
        assert samples[("ditto_http_call_seconds_bucket", (("le", "+Inf"), ("node", "OPS.HOLD")))] == 3
        assert samples[("ditto_http_inflight_calls", ())] == 0


async def test_access_log_is_one_json_line_per_call_and_serve_runs_on_uvloop() -> None:
    """Issue 19 (observability, finding 8): with --log-level info every call writes one JSON access line (node,
    HTTP status, code, milliseconds) and `ditto serve` reports that it runs on uvloop; --no-metrics removes
    /metrics."""
    with ditto_serve(WORKERS, TOKEN, args=["--log-level", "info", "--no-metrics"]) as (url, process):
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
            assert (await client.get("/metrics")).status_code == 404  # --no-metrics: no endpoint at all
            await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": 1}})
            await client.post("/v1/invoke", json={"node": "OPS.BOOM", "input": None})
            await client.post("/v1/invoke", json={"node": "NOPE.X", "input": None})
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=15)
    started = json.loads(out.decode().splitlines()[0])
    assert started["loop"] == "uvloop" and started["url"] == url
    lines = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    access = [line for line in lines if line.get("event") == "call"]
    assert [(a["node"], a["http"], a["status"], a.get("code")) for a in access] == [
        ("OPS.HOLD", 200, "success", None), ("OPS.BOOM", 200, "error", "HANDLER_ERROR"),
        ("NOPE.X", 404, "refused", "UNKNOWN_NODE")]
    assert all(isinstance(a["ms"], float) and a["ms"] >= 0 for a in access)


async def test_tls_with_certfile_and_keyfile(tmp_path: Path) -> None:
    """Issue 19 (TLS): --certfile/--keyfile serve HTTPS; a client trusting the test CA is served, one that does
    not trust it is refused at the handshake, and plain HTTP gets no answer."""
    ca = make_test_ca(tmp_path)
    cert = tmp_path / "cert.pem"
    key = tmp_path / "key.pem"
    issued = ca.ca.issue_cert("127.0.0.1", "localhost")
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    with ditto_serve(WORKERS, TOKEN, args=["--certfile", str(cert), "--keyfile", str(key)], ca_file=ca.ca_file) \
            as (url, _process):
        assert url.startswith("https://")
        trusted = ssl.create_default_context(cafile=str(ca.ca_file))
        async with httpx.AsyncClient(base_url=url, headers=AUTH, verify=trusted) as client:
            answer = await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": 7}})
            assert answer.status_code == 200 and answer.json()["output"] == {"n": 7}
        async with httpx.AsyncClient(base_url=url) as untrusting:
            try:
                await untrusting.get("/healthz")
                raise AssertionError("a client without the CA was served")
            except httpx.ConnectError as refused:
                assert "CERTIFICATE_VERIFY_FAILED" in str(refused)
        async with httpx.AsyncClient(base_url=url.replace("https://", "http://"), timeout=3) as plain:
            try:
                response = await plain.get("/healthz")
                assert response.status_code == 400  # never the service's answer
            except httpx.HTTPError:
                pass


async def test_fifty_trickling_connections_are_closed_within_the_timeouts() -> None:
    """Issue 19 finding 9 (slowloris): 25 connections trickling headers and 25 trickling a body, one byte every
    0.2 s, are all closed by the server within --header-timeout/--body-timeout (1 s) plus slack, while a
    normal call is still served at once."""
    with ditto_serve(WORKERS, TOKEN, args=["--header-timeout", "1", "--body-timeout", "1"]) as (url, _process):
        port = int(url.rsplit(":", 1)[1])
        head = (f"POST /v1/invoke HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\n"
                "content-type: application/json\r\ncontent-length: 100\r\n").encode()

        async def trickle(body: bool) -> float:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = time.monotonic()
            payload = head + b"\r\n" + b"x" * 99 if body else head + b"x-pad: " + b"y" * 400
            sent = len(head) + 2 if body else 0
            try:
                writer.write(payload[:sent])
                while sent < len(payload):
                    writer.write(payload[sent:sent + 1])
                    sent += 1
                    await writer.drain()
                    try:
                        if await asyncio.wait_for(reader.read(65536), 0.2) == b"":
                            break
                    except TimeoutError:
                        continue
                    # an answer (408) arrived: wait for the close that follows it
                    await asyncio.wait_for(reader.read(), 2)
                    break
            except (ConnectionError, TimeoutError):
                pass
            finally:
                writer.close()
            return time.monotonic() - started

        tasks = [asyncio.create_task(trickle(n % 2 == 0)) for n in range(50)]
        await asyncio.sleep(0.3)
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
            started = time.monotonic()
            ok = await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": 1}})
            assert ok.status_code == 200 and time.monotonic() - started < 1
        durations = await asyncio.wait_for(asyncio.gather(*tasks), 20)
        assert max(durations) < 4, sorted(durations)[-5:]


def test_serve_refuses_a_keyfile_without_certfile(tmp_path: Path) -> None:
    """Issue 19 (TLS): --keyfile alone is a usage error (exit 2), not a plain-HTTP server."""
    key = tmp_path / "key.pem"
    key.write_text("x")
    env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": TOKEN}
    done = subprocess.run([sys.executable, "-m", "ditto", "serve", "--worker", WORKERS[0], "--keyfile", str(key),
                           "--port", "1"], env=env, capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2 and "--certfile" in done.stderr


async def test_readyz_is_503_as_soon_as_the_runtime_begins_closing() -> None:
    """Issue 19 (readiness): /readyz turns 503 the moment the app's runtime begins closing, while a call is still
    in flight and without any drain (no SIGTERM, no grace period): a load balancer must not keep routing to a
    replica that refuses every new call with RUNTIME_CLOSED. /healthz stays 200 (the process is alive)."""
    from ditto import create_ditto, create_worker_http_app

    from ..support.uvicorn_thread import serve_app
    from .service_workers import make

    runtime = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(runtime, token=TOKEN)) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as client:
        assert (await client.get("/readyz")).status_code == 200
        held = asyncio.create_task(client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 600, "n": 7}}))
        await asyncio.sleep(0.2)
        closing = asyncio.create_task(runtime.close())  # waits for the held call
        await asyncio.sleep(0.05)
        assert not closing.done()
        ready = await client.get("/readyz")
        assert ready.status_code == 503 and ready.json() == {"status": "closed"}
        assert (await client.get("/healthz")).status_code == 200
        refused = await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": 8}})
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "RUNTIME_CLOSED"
        assert (await held).json()["output"] == {"n": 7}
        await closing


async def test_readyz_is_503_from_the_first_signal_with_no_grace_period() -> None:
    """Issue 19 (readiness): `--grace-period 0` still turns /readyz 503 at once on SIGTERM, before the server
    stops listening (a probe on a kept-alive connection sees 503, then the connection is refused), and the
    process exits 0."""
    with ditto_serve(WORKERS, TOKEN, args=["--grace-period", "0"]) as (url, process):
        async with httpx.AsyncClient(base_url=url, timeout=5) as probe:
            assert (await probe.get("/readyz")).status_code == 200
            os.kill(process.pid, signal.SIGTERM)
            answers: list[int | str] = []
            for _ in range(200):
                try:
                    answers.append((await probe.get("/readyz")).status_code)
                except httpx.HTTPError:
                    answers.append("refused")
                    break
                await asyncio.sleep(0.002)
        assert 200 not in answers, answers
        assert process.wait(timeout=10) == 0
