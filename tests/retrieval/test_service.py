"""Standalone RETRIEVAL service (RET-8): two ``ditto serve`` processes, one caller runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from ditto import create_ditto, create_http_transport
from ditto.retrieval.adapters.memory import RemoteRetrievalSearchProvider
from ditto.worker.memory import MemorySearchInput
from tests.support.ditto_serve import ditto_serve

TOKEN = "retrieval-service-token"
FACTORY = "tests.retrieval.service_factory:retrieval_service"
PLAIN_FACTORY = "tests.retrieval.service_factory:retrieval_service_plain"
YAML = """
workers:
  retrieval:
    searchLimit: 3
    embedding:
      batchSize: 16
    hybrid:
      candidateLimit: 7
      rrfK: 30
    rerank:
      candidateLimit: 50
"""


@pytest.mark.slow
async def test_two_replicas_round_robin_and_yaml(tmp_path: Path) -> None:
    """RET-8: a runtime with only the RETRIEVAL worker served over HTTP in two processes; the caller's
    runtime reaches both with register_remote (round-robin); YAML workers.retrieval keys are honoured both by
    a factory given the config and by one that is not (``ditto serve --config`` is the runtime's YAML layer)."""
    config = tmp_path / "ditto.yaml"
    config.write_text(YAML)
    with ditto_serve([FACTORY], TOKEN, config=config) as (url_a, proc_a), \
            ditto_serve([PLAIN_FACTORY], TOKEN, config=config) as (url_b, proc_b):
        transports = [create_http_transport(id="retrieval-a", url=url_a, token=TOKEN),
                      create_http_transport(id="retrieval-b", url=url_b, token=TOKEN)]
        runtime = create_ditto(transports=transports)
        for transport in transports:
            [worker] = await transport.workers()
            assert worker["capabilities"] == ["RETRIEVAL.SEARCH"] and worker["type"] == "RETRIEVAL"
            runtime.register_remote(address=worker["address"], transport_id=transport.id,
                                    capabilities=["RETRIEVAL.SEARCH"])
        pids = []
        for _ in range(4):
            result = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "agent memory migration"},
                                                               "target": {"name": "kb"}})
            assert result.status == "success", result.error
            output = result.output
            assert output["strategy"] == "hybrid" and output["target"] == {"name": "kb"}
            assert len(output["candidates"]) == 3  # YAML searchLimit
            assert output["candidates"][0]["id"] == "d1"
            report = output["metadata"]
            assert report["defaults"] == {"searchLimit": 3, "embedding": {"batchSize": 16},
                                          "hybrid": {"candidateLimit": 7, "rrfK": 30},
                                          "rerank": {"candidateLimit": 50}}
            assert output["candidates"][0]["score"] == pytest.approx(2 / 31)  # rank 1 in both branches, rrfK 30
            pids.append(report["pid"])
        assert set(pids) == {proc_a.pid, proc_b.pid}
        assert pids[0] != pids[1] and pids[0] == pids[2]
        explicit = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "pasta"}, "target": {"name": "kb"},
                                                             "strategy": "vector", "limit": 1})
        assert explicit.output["candidates"][0]["id"] == "d4" and explicit.output["metadata"]["limit"] == 1
        failed = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "x"}, "target": {"name": "nope"}})
        assert failed.status == "error" and failed.error is not None
        assert failed.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
        memory_search = RemoteRetrievalSearchProvider(
            target={"name": "kb"}, runtime=runtime,
            map_output=lambda out: [{"memory": {"id": c.id, "content": c.content}, "score": c.score}
                                    for c in out.candidates])
        hits = await memory_search.search(MemorySearchInput(query="vector database", limit=2))
        assert hits[0].memory.id == "d2"
        await runtime.close()
        for transport in transports:
            await transport.aclose()
