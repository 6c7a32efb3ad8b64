"""The documented calls of the typed factories pass ``mypy --strict``; a signature too narrow or loose fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

SRC = Path(__file__).resolve().parents[2] / "src"

USAGE = '''
import sqlite3
from typing import Any

import psycopg_pool
from openai import AsyncOpenAI
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from ditto.config import load_runtime_config
from ditto.retrieval.providers.sql import create_sql_search_provider
from ditto.worker.context import (
    context_options_from_config,
    create_context_operation_queue,
    create_in_memory_context_store,
    create_redis_context_store,
)
from ditto.worker.context import ContextServices
from ditto.worker.infer import create_openai_provider
from ditto.worker.interaction import WebOptions


class Adapter:
    async def get(self, name: str) -> bytes | None:
        return None

    async def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any:
        return None


config = load_runtime_config({"workers": {"context": {"cache": {"ttlMs": 1000}}}})
section = config.workers.context
assert section is not None
create_redis_context_store(Redis.from_url("redis://127.0.0.1:6379/0"), section.cache)
create_redis_context_store(RedisCluster.from_url("redis://127.0.0.1:7000"), {"ttlMs": 1000})
create_redis_context_store(Adapter(), {"keyPrefix": "app:"})
create_in_memory_context_store(section.local_cache)
create_in_memory_context_store({"ttlMs": 60_000, "maxEntries": 100})
create_context_operation_queue(section.queue)
create_context_operation_queue({"maxPending": 8})
context_options_from_config(config, redis_client=Redis.from_url("redis://127.0.0.1:6379/0"))
create_openai_provider(client=AsyncOpenAI(base_url="http://127.0.0.1:1/v1", api_key="x"))
ContextServices(token_estimator=lambda content: len(str(content)) // 4, compressor=lambda request: request.context)
WebOptions(allowed_origins=["https://sqlite.org"])
create_sql_search_provider(sqlite3.connect("kb.sqlite", check_same_thread=False),
                           {"dialect": "sqlite", "table": "docs", "content_column": "body"})
create_sql_search_provider(psycopg_pool.AsyncConnectionPool("postgresql://127.0.0.1/kb", open=False),
                           {"dialect": "postgres", "table": "docs", "content_column": "body", "id_column": "id"})
'''

MISUSE = '''
from ditto.retrieval.providers.sql import create_sql_search_provider
from ditto.worker.context import create_in_memory_context_store

create_in_memory_context_store("60s")
create_sql_search_provider("postgresql://127.0.0.1/kb", {"dialect": "postgres", "table": "docs"})
'''


def _mypy(code: str, tmp_path: Path) -> tuple[str, int]:
    module = tmp_path / "usage.py"
    module.write_text(code, encoding="utf-8")
    out, err, status = api.run(["--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"),
                                str(module)])
    return out + err, status


def test_documented_calls_type_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CX-1 CX-11 CX-13 INF-1 INT-4 RET-6: a redis-py client (plain or cluster), an adapter with get/eval, the YAML
    config sections or plain mappings as options, an injected AsyncOpenAI, plain functions as one-method CONTEXT
    services, a list of origins and a sqlite3 or psycopg client are all accepted by mypy --strict; a string
    as ttl_ms and a DSN string as a client are refused."""
    monkeypatch.setenv("MYPYPATH", str(SRC))  # this checkout's ditto, not an installed copy
    output, status = _mypy(USAGE, tmp_path)
    assert status == 0, output
    output, status = _mypy(MISUSE, tmp_path)
    assert status == 1 and "create_in_memory_context_store" in output, output
    assert "create_sql_search_provider" in output, output  # a DSN string is not a client
