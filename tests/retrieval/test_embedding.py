"""Embeddings (RET-6): embed_contents, validate_vector, the HTTP client against a real local server."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import AbortController
from ditto.retrieval import (
    RetrievalDefaults,
    RetrievalError,
    RetrievalExecutionContext,
    create_http_embedding_provider,
    embed_contents,
    embedding_config_from_env,
    validate_vector,
)
from tests.support.openai_embeddings_server import (
    SERVER_SECRET,
    EmbeddingServerState,
    hashed_bow,
    openai_embeddings_server,
)


class CountingEmbedding:
    """A local embedding model: hashed bag of words; records batch sizes."""

    def __init__(self, dimensions: int = 16, answer: Any = None) -> None:
        self.dimensions = dimensions
        self.batches: list[int] = []
        self.answer = answer
        self.in_flight = 0
        self.max_in_flight = 0

    async def embed(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None) -> Any:
        self.batches.append(len(contents))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0)  # a yield: batches started together would all be in flight here
        self.in_flight -= 1
        if self.answer is not None:
            return self.answer(contents)
        return [hashed_bow(str(c), self.dimensions) for c in contents]


def test_validate_vector() -> None:
    """RET-6: validate_vector checks numbers, finiteness and dimension; never truncates."""
    assert validate_vector([1, 2.5]) == (1.0, 2.5)
    assert validate_vector(np.array([0.5, 0.25])) == (0.5, 0.25)
    for bad in ([], "12", [1, "2"], [True, 1.0], [1.0, math.nan], [math.inf], {"a": 1}, None,
                np.array([[1.0]]), np.array(["a"])):
        with pytest.raises(RetrievalError) as info:
            validate_vector(bad)
        assert info.value.code == "RETRIEVAL_INVALID_EMBEDDING"
    with pytest.raises(RetrievalError) as info:
        validate_vector([1.0, 2.0, 3.0], dimensions=2)
    assert info.value.code == "RETRIEVAL_INVALID_EMBEDDING"


@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.booleans(),
                          st.text(max_size=2), st.none()), max_size=6))
def test_validate_vector_fuzz(value: list[Any]) -> None:
    """RET-6 (hypothesis): validate_vector either returns the same length of finite floats or raises
    RETRIEVAL_INVALID_EMBEDDING."""
    try:
        vector = validate_vector(value)
    except RetrievalError as error:
        assert error.code == "RETRIEVAL_INVALID_EMBEDDING"
    else:
        assert len(vector) == len(value) and all(math.isfinite(x) for x in vector)


async def test_embed_contents_batches_sequentially() -> None:
    """RET-6: batch size default 64, explicit → defaults → 64, range 1–2048; order kept; one batch at a time."""
    model = CountingEmbedding()
    texts = [f"text {i}" for i in range(150)]
    vectors = await embed_contents(model, texts)
    assert model.batches == [64, 64, 22] and len(vectors) == 150
    assert model.max_in_flight == 1  # sequential: a batch starts after the previous one answered
    assert vectors == [tuple(hashed_bow(text, 16)) for text in texts]
    model.batches.clear()
    context = RetrievalExecutionContext(defaults=RetrievalDefaults.model_validate({"embedding": {"batchSize": 100}}))
    await embed_contents(model, texts, context=context)
    assert model.batches == [100, 50]
    model.batches.clear()
    await embed_contents(model, texts, batch_size=2048, context=context)
    assert model.batches == [150]
    for bad in (0, 2049, True):
        with pytest.raises(RetrievalError) as info:
            await embed_contents(model, texts, batch_size=bad)
        assert info.value.code == "RETRIEVAL_INVALID_INPUT"


async def test_embed_contents_rejects_bad_answers() -> None:
    """RET-6: wrong count / non-finite / inconsistent or wrong dimension → RETRIEVAL_INVALID_EMBEDDING."""
    answers = [
        lambda cs: [[0.1, 0.2]] * (len(cs) - 1),
        lambda cs: [[0.1, math.nan]] * len(cs),
        lambda cs: [[0.1, 0.2]] + [[0.1, 0.2, 0.3]] * (len(cs) - 1),
        lambda cs: "vectors",
    ]
    for answer in answers:
        with pytest.raises(RetrievalError) as info:
            await embed_contents(CountingEmbedding(answer=answer), ["a", "b", "c"])
        assert info.value.code == "RETRIEVAL_INVALID_EMBEDDING"
    with pytest.raises(RetrievalError) as info:
        await embed_contents(CountingEmbedding(dimensions=16), ["a"], dimensions=8)
    assert info.value.code == "RETRIEVAL_INVALID_EMBEDDING"


async def test_embed_contents_cancelled_between_batches() -> None:
    """RET-5/RET-6: the signal is checked before every batch."""
    controller = AbortController()
    model = CountingEmbedding(answer=lambda cs: (controller.abort(), [[1.0]] * len(cs))[1])
    with pytest.raises(RetrievalError) as info:
        await embed_contents(model, ["a"] * 5, batch_size=2,
                             context=RetrievalExecutionContext(signal=controller.signal))
    assert info.value.code == "RETRIEVAL_CANCELLED" and model.batches == [2]


def test_embedding_config_from_env() -> None:
    """RET-6: the env group DITTO_WORKER_RETRIEVAL_EMBEDDING_* is read from the given mapping only."""
    env = {"DITTO_WORKER_RETRIEVAL_EMBEDDING_URL": "http://127.0.0.1:9/v1",
           "DITTO_WORKER_RETRIEVAL_EMBEDDING_MODEL": "m", "DITTO_WORKER_RETRIEVAL_EMBEDDING_API_KEY": "sk-secret",
           "DITTO_WORKER_RETRIEVAL_EMBEDDING_DIMENSIONS": "32", "DITTO_WORKER_RETRIEVAL_EMBEDDING_BATCH_SIZE": "8",
           "DITTO_WORKER_RETRIEVAL_EMBEDDING_TIMEOUT_MS": "1500"}
    config = embedding_config_from_env(env)
    assert (config.url, config.model, config.api_key, config.dimensions, config.batch_size, config.timeout_ms) == (
        "http://127.0.0.1:9/v1", "m", "sk-secret", 32, 8, 1500)
    assert "sk-secret" not in repr(config)
    assert "sk-secret" not in repr(create_http_embedding_provider(config))
    for missing in ("URL", "MODEL"):
        with pytest.raises(RetrievalError) as info:
            embedding_config_from_env({k: v for k, v in env.items() if not k.endswith(missing)})
        assert info.value.code == "RETRIEVAL_INVALID_INPUT"
    with pytest.raises(RetrievalError):
        embedding_config_from_env({**env, "DITTO_WORKER_RETRIEVAL_EMBEDDING_BATCH_SIZE": "4096"})


def test_embedding_base_url_stands_in_for_url() -> None:
    """RET-6: `_BASE_URL` (INFER's spelling, DITTO_WORKER_INFER_BASE_URL) configures the embedding server when
    `_URL` is unset; `_URL` wins when both are set."""
    group = "DITTO_WORKER_RETRIEVAL_EMBEDDING_"
    env = {group + "BASE_URL": "http://127.0.0.1:9/v1", group + "MODEL": "m"}
    assert embedding_config_from_env(env).url == "http://127.0.0.1:9/v1"
    assert embedding_config_from_env({**env, group + "URL": "http://127.0.0.1:8/v1"}).url == "http://127.0.0.1:8/v1"


def _env(url: str, model: str = "hash-bow", **extra: str) -> dict[str, str]:
    return {"DITTO_WORKER_RETRIEVAL_EMBEDDING_URL": url, "DITTO_WORKER_RETRIEVAL_EMBEDDING_MODEL": model,
            **{f"DITTO_WORKER_RETRIEVAL_EMBEDDING_{k}": v for k, v in extra.items()}}


async def test_http_embedding_happy_path_and_batches() -> None:
    """RET-6: OpenAI-compatible /v1/embeddings, bounded sequential batches, index order respected."""
    async with openai_embeddings_server(EmbeddingServerState(api_key="sk-test", latency_seconds=0.02)) as (url,
                                                                                                      state):
        async with create_http_embedding_provider(embedding_config_from_env(
                _env(url, API_KEY="sk-test", BATCH_SIZE="2", DIMENSIONS="32"))) as provider:
            vectors = await embed_contents(provider, ["alpha beta", "gamma", {"k": 1}], batch_size=3)
            assert vectors == [tuple(hashed_bow(text, 32)) for text in ("alpha beta", "gamma", '{"k":1}')]
            assert [r["input"] for r in state.requests] == [["alpha beta", "gamma"], ['{"k":1}']]
            assert state.max_in_flight == 1  # the second request was sent after the first answered
            assert all("dimensions" not in r for r in state.requests)
        async with create_http_embedding_provider(url=url + "/v1", model="shuffled", api_key="sk-test") as provider:
            assert await provider.embed(["one", "two words"]) == [tuple(hashed_bow("one", 32)),
                                                                  tuple(hashed_bow("two words", 32))]
        async with create_http_embedding_provider(url=url, model="m", api_key="wrong") as provider:
            with pytest.raises(RetrievalError) as info:
                await provider.embed(["x"])
            assert info.value.code == "RETRIEVAL_PERMISSION_DENIED"
            assert SERVER_SECRET not in info.value.message and "wrong" not in info.value.message


@pytest.mark.parametrize("model", ["wrong-count", "nan", "wrong-dim", "bad-index"])
async def test_http_embedding_bad_vectors(model: str) -> None:
    """RET-6: wrong counts, bad index, NaN, wrong dimension from the server → RETRIEVAL_INVALID_EMBEDDING."""
    async with openai_embeddings_server() as (url, _state), \
            create_http_embedding_provider(url=url, model=model) as provider:
        with pytest.raises(RetrievalError) as info:
            await embed_contents(provider, ["a b", "c d", "e"])
        assert info.value.code == "RETRIEVAL_INVALID_EMBEDDING"


async def test_http_embedding_deadline_and_5xx() -> None:
    """RET-5/RET-6: slow past the deadline → RETRIEVAL_TIMEOUT; 5xx → RETRIEVAL_BACKEND_ERROR without the
    server's text; a fired signal → RETRIEVAL_CANCELLED."""
    async with openai_embeddings_server(EmbeddingServerState(slow_seconds=3.0)) as (url, _state):
        async with create_http_embedding_provider(url=url, model="slow", timeout_ms=200) as provider:
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(RetrievalError) as info:
                await provider.embed(["x"])
            assert info.value.code == "RETRIEVAL_TIMEOUT" and info.value.status == "timeout"
            assert loop.time() - started < 1.5
            controller = AbortController()
            loop.call_later(0.1, controller.abort)
            with pytest.raises(RetrievalError) as info:
                await provider.embed(["x"], RetrievalExecutionContext(signal=controller.signal))
            assert info.value.code == "RETRIEVAL_CANCELLED"
        async with create_http_embedding_provider(url=url, model="error-500") as provider:
            with pytest.raises(RetrievalError) as info:
                await provider.embed(["x"])
            assert info.value.code == "RETRIEVAL_BACKEND_ERROR"
            assert SERVER_SECRET not in info.value.message and "hunter2" not in str(info.value)
    async with create_http_embedding_provider(url=url, model="m") as provider:  # server gone now
        with pytest.raises(RetrievalError) as info:
            await provider.embed(["x"])
        assert info.value.code == "RETRIEVAL_BACKEND_ERROR"
