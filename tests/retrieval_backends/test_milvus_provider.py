"""``create_milvus_search_provider`` (RET-6) on Milvus Lite (a real local ``milvus.db`` file)."""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymilvus import DataType, MilvusClient

from ditto.retrieval import RetrievalError, RetrievalExecutionContext, RetrievalTargetRegistry, create_retrieval
from ditto.retrieval.providers.milvus import (
    MilvusSearchProvider,
    create_milvus_search_provider,
    milvus_filter_expression,
)

from .conftest import DOCS

DIM = 32


class HashingEmbedding:
    """A deterministic bag-of-words embedding (feature hashing): a real, local EmbeddingProvider."""

    def __init__(self) -> None:
        self.calls = 0

    async def embed(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None
                    ) -> list[list[float]]:
        self.calls += 1
        return [_embed(str(text)) for text in contents]


def _embed(text: str) -> list[float]:
    vector = [0.0] * DIM
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % DIM] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm if any(vector) else 1.0 / math.sqrt(DIM) for x in vector]


class BrokenEmbedding:
    """An embedding service answering with a wrong shape, to check RETRIEVAL_INVALID_EMBEDDING."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def embed(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None) -> Any:
        return self.answer


def _create(client: MilvusClient, name: str, metric: str = "COSINE") -> None:
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("text", DataType.VARCHAR, max_length=2000)
    schema.add_field("year", DataType.INT64)
    schema.add_field("lang", DataType.VARCHAR, max_length=200, nullable=True)
    index = client.prepare_index_params()
    index.add_index("vector", metric_type=metric, index_type="FLAT")
    client.create_collection(name, schema=schema, index_params=index)
    client.insert(name, [{"id": d["id"], "vector": _embed(d["content"]), "text": d["content"],
                          "year": d["metadata"]["year"], "lang": d["metadata"]["lang"]} for d in DOCS]
                  + [{"id": "d7", "vector": _embed("agent memory notes"), "text": "agent memory notes",
                      "year": 2024, "lang": None}])


@pytest.fixture(scope="module")
def milvus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusClient]:
    path: Path = tmp_path_factory.mktemp("milvus") / "milvus.db"
    client = MilvusClient(str(path))
    _create(client, "docs")
    _create(client, "docs_l2", metric="L2")
    yield client
    client.close()


OPTIONS = {"collection": "docs", "metadata_fields": ["year", "lang"], "filter_fields": ["year", "lang"],
           "dimensions": DIM}


@pytest.fixture
def provider(milvus: MilvusClient) -> MilvusSearchProvider:
    return create_milvus_search_provider(milvus, OPTIONS, embedding=HashingEmbedding())


def _request(content: object = "agent memory migration", **extra: object) -> dict[str, object]:
    return {"query": {"content": content}, "target": {"name": "kb"}, **extra}


async def test_ret6_milvus_text_query_is_embedded_and_searched(provider: MilvusSearchProvider) -> None:
    """RET-6: a text query goes through the external EmbeddingProvider, then Milvus (Lite)."""
    output = await provider.search(_request("agent memory notes", limit=3, strategy="vector"))
    assert output.strategy == "vector"
    first = output.candidates[0]
    assert first.id == "d7" and first.content == "agent memory notes"
    assert first.score == pytest.approx(1.0, abs=1e-5)
    assert first.source is not None and (first.source.target, first.source.ref) == ("kb", "docs:d7")
    assert first.metadata == {"year": 2024, "lang": None}
    scores = [c.score for c in output.candidates]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)  # type: ignore[type-var]


async def test_ret6_milvus_precomputed_vector_and_l2(milvus: MilvusClient) -> None:
    """RET-6: a vector in query.content is used as is (no embedding call); L2 scores are negated."""
    embedding = HashingEmbedding()
    provider = create_milvus_search_provider(milvus, {**OPTIONS, "collection": "docs_l2", "metric": "L2"},
                                             embedding=embedding)
    output = await provider.search(_request(_embed(DOCS[5]["content"]), limit=4))
    assert embedding.calls == 0
    assert output.candidates[0].id == "d6" and output.candidates[0].score == pytest.approx(0.0, abs=1e-5)
    scores = [c.score for c in output.candidates]
    assert scores == sorted(scores, reverse=True) and all(s <= 1e-6 for s in scores)  # type: ignore[operator]


async def test_ret6_milvus_filters(provider: MilvusSearchProvider) -> None:
    """RET-6: equality, in, ranges, ne, null become a Milvus expression; top-k among matching entities."""
    async def ids(filter: dict[str, Any], limit: int = 10) -> set[str]:
        return {c.id for c in (await provider.search(_request(filter=filter, limit=limit))).candidates}  # type: ignore[misc]

    assert await ids({"year": {"gte": 2024}}) == {"d1", "d3", "d4", "d7"}
    assert await ids({"year": {"gt": 2021, "lt": 2024}}) == {"d5"}
    assert await ids({"lang": "zh"}) == {"d4", "d5"}
    assert await ids({"lang": {"in": ["zh", "xx"]}, "year": {"lte": 2023}}) == {"d5"}
    assert await ids({"lang": None}) == {"d7"}
    assert await ids({"lang": {"ne": "en"}}) == {"d4", "d5", "d7"}
    assert await ids({"lang": {"nin": ["en", "zh"]}}) == {"d7"}
    assert await ids({"year": 2019}, limit=1) == {"d6"}


@pytest.mark.parametrize("filter", [
    {"text": "x"}, {"year": {"like": "20%"}}, {"year": [1]}, {"lang": "a\x00b"}, {"lang": "a\fb"},
    {"year": {"gte": "2020"}},
])
async def test_ret5_milvus_unsupported_filters_are_rejected(provider: MilvusSearchProvider,
                                                            filter: dict[str, Any]) -> None:
    """RET-5: undeclared fields, unknown operators and unencodable values → RETRIEVAL_INVALID_INPUT."""
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request(filter=filter))
    assert caught.value.code == "RETRIEVAL_INVALID_INPUT"


@settings(max_examples=25, deadline=None)
@given(value=st.text(alphabet=st.one_of(st.characters(blacklist_categories=("Cs", "Cc")),
                                        st.sampled_from("\n\r\t\"'\\[]()")), max_size=12))
def test_ret6_milvus_filter_values_never_change_the_expression(milvus: MilvusClient, value: str) -> None:
    """RET-6 (hypothesis): any string value is one literal: it matches only entities with exactly that value."""
    provider = create_milvus_search_provider(milvus, OPTIONS, embedding=HashingEmbedding())
    for hostile in (value, f'" or year > 0 or lang == "{value}', value + "\\"):
        output = asyncio.run(provider.search(_request(filter={"lang": hostile}, limit=10)))
        assert all(c.metadata["lang"] == hostile for c in output.candidates)  # type: ignore[index]
        assert output.candidates == () or hostile in {"en", "zh"}


def test_ret6_milvus_expression_shape() -> None:
    """RET-6: the expression builder quotes strings and joins conditions with ``and``."""
    expression = milvus_filter_expression({"year": {"gte": 2024, "lt": 2026}, "lang": {"in": ['a"b', "c"]}},
                                          {"year": "year", "lang": "lang"})
    assert expression == '(year >= 2024) and (year < 2026) and (lang in ["a\\"b", "c"])'


@pytest.mark.parametrize(("embedding", "content"), [
    (BrokenEmbedding([[math.nan] * DIM]), "text"),
    (BrokenEmbedding([[0.1] * (DIM - 1)]), "text"),
    (BrokenEmbedding([[0.1] * DIM, [0.2] * DIM]), "text"),
    (HashingEmbedding(), [0.1] * (DIM + 1)),
    (HashingEmbedding(), [0.1, math.inf] + [0.0] * (DIM - 2)),
])
async def test_ret5_milvus_invalid_embeddings(milvus: MilvusClient, embedding: Any, content: Any) -> None:
    """RET-5: wrong vector count, NaN/inf or wrong dimension → RETRIEVAL_INVALID_EMBEDDING, never truncated."""
    provider = create_milvus_search_provider(milvus, OPTIONS, embedding=embedding)
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request(content))
    assert caught.value.code == "RETRIEVAL_INVALID_EMBEDDING"


async def test_ret5_milvus_text_without_embedding_and_bad_content(milvus: MilvusClient) -> None:
    """RET-5: a text query without an EmbeddingProvider, or a non-vector content → RETRIEVAL_INVALID_INPUT."""
    provider = create_milvus_search_provider(milvus, OPTIONS)
    for content in ("text", {"vector": [1]}, 3):
        with pytest.raises(RetrievalError) as caught:
            await provider.search(_request(content))
        assert caught.value.code == "RETRIEVAL_INVALID_INPUT"


async def test_ret5_milvus_backend_errors_are_hidden(milvus: MilvusClient) -> None:
    """RET-5: a dropped collection → RETRIEVAL_BACKEND_ERROR with a fixed message."""
    _create(milvus, "doomed")
    provider = create_milvus_search_provider(milvus, {**OPTIONS, "collection": "doomed"})
    assert (await provider.search(_request(_embed("agent"), limit=1))).candidates
    milvus.drop_collection("doomed")
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request(_embed("agent")))
    assert caught.value.code == "RETRIEVAL_BACKEND_ERROR"
    assert "doomed" not in str(caught.value) and caught.value.message == "The search backend failed"


@pytest.mark.parametrize("options", [
    {"collection": "docs; drop"}, {"collection": "docs", "vector_field": "v ector"},
    {"collection": "docs", "filter_fields": {"year": "year) or (1"}}, {"collection": "docs", "metric": "HAMMING"},
])
def test_ret6_milvus_options_are_validated(milvus: MilvusClient, options: dict[str, Any]) -> None:
    """RET-6: collection/field names must be identifiers; bad options fail at construction."""
    with pytest.raises(ValueError):
        create_milvus_search_provider(milvus, options)


async def test_ret6_milvus_provider_behind_the_sdk(provider: MilvusSearchProvider) -> None:
    """RET-6: the Milvus provider serves RETRIEVAL.SEARCH through the registry and SDK."""
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "vector", "providers": {"vector": provider}}})
    result = await create_retrieval(providers=registry).search(_request(limit=2, filter={"lang": "en"}))
    assert result.status == "success", result.error
    # The expected answer, computed here: cosine of the same embeddings over the English documents, top 2.
    query = _embed("agent memory migration")
    cosine = {d["id"]: sum(a * b for a, b in zip(query, _embed(d["content"]), strict=True))
              for d in DOCS if d["metadata"]["lang"] == "en"}
    expected = sorted(cosine, key=lambda doc_id: -cosine[doc_id])[:2]
    assert [c.id for c in result.output.candidates] == expected and result.output.strategy == "vector"
    assert [c.score for c in result.output.candidates] == pytest.approx([cosine[i] for i in expected], abs=1e-5)
    bad = await create_retrieval(providers=registry).search(_request(filter={"lang": {"regex": "e.*"}}))
    assert (bad.status, bad.error.code) == ("error", "RETRIEVAL_INVALID_INPUT")
