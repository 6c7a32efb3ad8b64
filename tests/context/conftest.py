"""Fixtures for the CONTEXT tests: a real redis-server per module and a fresh client per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis

from tests.support.redis_server import RedisServer, redis_server


@pytest.fixture(scope="module")
def redis_proc() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture
async def redis_client(redis_proc: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_proc.url)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()
