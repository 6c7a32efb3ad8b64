"""The ONNX Runtime backend of the local embedding provider on the real all-MiniLM-L6-v2 weights (issue 18):
the same vectors as sentence-transformers, no torch in a process that embeds, the exported graph reused,
a damaged graph exported again (once, by one of several processes), the thread count, and the options."""

from __future__ import annotations

import json
import os
import re
import shutil
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
    pytest.importorskip("onnxruntime")

from ditto.retrieval import RetrievalError
from ditto.retrieval.providers import _onnx_export, _onnx_model, local_embedding
from ditto.retrieval.providers._onnx_model import OnnxUnsupported, read_recipe
from ditto.retrieval.providers.local_embedding import (
    DEFAULT_LOCAL_MODEL,
    LocalEmbeddingProvider,
    create_local_embedding_provider,
)

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "sentence_transformers")


def real_texts() -> list[str]:
    """A few hundred real paragraphs (the project's docs), every long one among them, and a few texts far
    past the model's 256 tokens, so truncation is compared too."""
    paragraphs = [part.strip() for file in sorted((ROOT / "docs").glob("*.md"))
                  for part in re.split(r"\n\s*\n", file.read_text(encoding="utf-8")) if len(part.strip()) > 40]
    chosen = [text for index, text in enumerate(paragraphs) if index % 3 == 0 or len(text) > 1200][:300]
    joined = [" ".join(paragraphs[start:start + 12]) for start in range(0, 60, 12)]
    return [*chosen, *joined, "  padded with spaces  ", "", "\x00 NUL and\tcontrol\x07 characters",
            "Ünïcödé, 中文句子,日本語の文, русский текст", "x" * 5000]


@pytest.fixture(scope="module")
def onnx_dir() -> Path:
    """The session's ONNX cache (conftest points $DITTO_ONNX_CACHE_DIR at it): exported once for the suite."""
    return Path(os.environ[_onnx_model.ONNX_CACHE_ENV])


@pytest.fixture(scope="module")
def onnx(onnx_dir: Path) -> Iterator[LocalEmbeddingProvider]:
    provider = create_local_embedding_provider(backend="onnx")
    yield provider
    provider.close()


@pytest.fixture(scope="module")
def torch_backend() -> Iterator[LocalEmbeddingProvider]:
    provider = create_local_embedding_provider(backend="torch")
    yield provider
    provider.close()


def graph_file(onnx_dir: Path) -> Path:
    [path] = onnx_dir.glob("*.onnx")
    return path


def run_child(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env})


def test_onnx_vectors_equal_sentence_transformers(onnx: LocalEmbeddingProvider,
                                                  torch_backend: LocalEmbeddingProvider) -> None:
    """Issue 18: on a few hundred real texts, long ones truncated at 256 tokens, ONNX Runtime gives
    sentence-transformers' vectors (allclose, atol 1e-4), under the same model id and cache key."""
    texts = real_texts()
    assert len(texts) >= 200
    assert (onnx.backend, torch_backend.backend) == ("onnx", "torch")
    assert (onnx.model_id, onnx.dimensions, onnx.max_seq_length) == (DEFAULT_LOCAL_MODEL, 384, 256)
    assert onnx._cache_key == torch_backend._cache_key
    ours, theirs = onnx.encode(texts), torch_backend.encode(texts)
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert np.allclose(ours, theirs, atol=1e-4), float(np.abs(ours - theirs).max())
    # Truncation matches: a text past 256 tokens embeds like its first 256 tokens, on both backends.
    tokenizer = onnx._loaded.model.tokenizer
    long = texts[-6]
    assert len(tokenizer.encode(long).ids) == 256
    raw = create_local_embedding_provider(backend="onnx", normalize=False)
    assert np.allclose(raw.encode(texts[:20]), ours[:20], atol=1e-6)  # MiniLM's pipeline ends in Normalize


def test_a_fresh_process_embeds_without_torch(onnx: LocalEmbeddingProvider, onnx_dir: Path) -> None:
    """Issue 18: once the graph is exported, a new process embeds a query through ONNX Runtime without
    importing torch, transformers or sentence-transformers, and without exporting again."""
    before = graph_file(onnx_dir).stat()
    done = run_child("""
        import asyncio, json, sys
        from ditto.retrieval.index.embedding import local_embedding
        provider = local_embedding()
        [vector] = asyncio.run(provider.embed(["how do tides work"]))
        print(json.dumps({"backend": provider.backend, "vector": vector,
                          "heavy": [name for name in ("torch", "transformers", "sentence_transformers")
                                    if name in sys.modules]}))
    """, DITTO_EMBEDDING_CACHE_DIR="off")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["backend"] == "onnx" and report["heavy"] == []
    assert np.allclose(report["vector"], onnx.encode(["how do tides work"])[0], atol=1e-6)
    after = graph_file(onnx_dir).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr


def test_a_second_provider_reuses_the_export(onnx: LocalEmbeddingProvider, onnx_dir: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: a provider built after the export (the loaded-model memo cleared, as in a new process)
    loads the cached graph and never calls the exporter; other threads are another session."""
    monkeypatch.setattr(local_embedding, "_MODELS", {})

    def no_export(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(_onnx_export, "export_graph", no_export)
    again = create_local_embedding_provider(backend="onnx", threads=1)
    assert again._loaded is not onnx._loaded and again._loaded.model.path == graph_file(onnx_dir)
    assert np.allclose(again.encode(["reused"]), onnx.encode(["reused"]), atol=1e-6)
    weights = again._loaded.model.recipe.weights  # their SHA-256 names the graph, and is remembered
    with weights.open("rb") as file:
        digest = __import__("hashlib").file_digest(file, "sha256").hexdigest()
    assert _onnx_model.file_digest(weights, onnx_dir) == digest and digest[:32] in graph_file(onnx_dir).name


def test_thread_count_is_honoured(onnx: LocalEmbeddingProvider) -> None:
    """Issue 18: ``threads`` is ONNX Runtime's intra-op thread count for that model (one session per count),
    and changes no vector; torch is not imported to set it."""
    one = create_local_embedding_provider(backend="onnx", threads=1)
    two = create_local_embedding_provider(backend="onnx", threads=2)
    assert (one._loaded.model.intra_op_threads, two._loaded.model.intra_op_threads) == (1, 2)
    assert create_local_embedding_provider(backend="onnx", threads=1)._loaded is one._loaded
    texts = ["threads change speed", "not the vectors"]
    assert np.allclose(one.encode(texts), two.encode(texts), atol=1e-6)


def test_a_damaged_graph_is_exported_again_by_one_process(onnx: LocalEmbeddingProvider, onnx_dir: Path,
                                                          tmp_path: Path) -> None:
    """Issue 18: a truncated graph file (a partial copy) is detected; two processes starting together on it
    both embed correctly, one exports again (atomically, under a lock), the other waits and loads its file;
    no temporary file is left."""
    shutil.copytree(onnx_dir, tmp_path / "onnx", ignore=shutil.ignore_patterns("*.lock"))
    damaged = graph_file(tmp_path / "onnx")
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])
    script = """
        import json, logging, sys
        logging.basicConfig(level=logging.INFO, stream=sys.stderr)
        from ditto.retrieval.providers.local_embedding import create_local_embedding_provider
        provider = create_local_embedding_provider(backend="onnx", threads=1)
        print(json.dumps(provider.encode(["after the damage"]).tolist()[0]))
    """
    env = {_onnx_model.ONNX_CACHE_ENV: str(tmp_path / "onnx"), "DITTO_EMBEDDING_CACHE_DIR": "off"}
    children = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src"),
                                                                         **env}) for _ in range(2)]
    outputs = [child.communicate(timeout=600) for child in children]
    assert [child.returncode for child in children] == [0, 0], [err[-3000:] for _, err in outputs]
    expected = onnx.encode(["after the damage"])[0]
    for out, _ in outputs:
        assert np.allclose(json.loads(out.strip().splitlines()[-1]), expected, atol=1e-6)
    assert sum("is damaged" in err for _, err in outputs) >= 1
    assert sum("exporting sentence-transformers/all-MiniLM-L6-v2 to ONNX" in err for _, err in outputs) == 1
    assert all("Loading weights" not in err for _, err in outputs)
    assert graph_file(tmp_path / "onnx").stat().st_size == graph_file(onnx_dir).stat().st_size
    assert not list((tmp_path / "onnx").glob(".*.tmp"))


def test_patched_bytes_are_detected(onnx: LocalEmbeddingProvider, onnx_dir: Path, tmp_path: Path) -> None:
    """Issue 18: a graph that still parses but whose bytes were overwritten (same size; here in rows of the
    token table no probe reads, so only the file's SHA-256 can tell) is not trusted; the intact one is,
    from its remembered digest."""
    shutil.copytree(onnx_dir, tmp_path / "onnx", ignore=shutil.ignore_patterns("*.lock"))
    cache = tmp_path / "onnx"
    patched = graph_file(cache)
    assert _onnx_model._intact(patched, cache)
    data = bytearray(patched.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = bytes(4096)
    patched.write_bytes(bytes(data))
    assert not _onnx_model._intact(patched, cache)
    assert _onnx_model._intact(graph_file(onnx_dir), onnx_dir)
    # The seal missing (a crash between writing the graph and its digest) is not trusted either.
    _onnx_model._seal(graph_file(onnx_dir)).rename(tmp_path / "seal")
    try:
        assert not _onnx_model._intact(graph_file(onnx_dir), onnx_dir)
    finally:
        (tmp_path / "seal").rename(_onnx_model._seal(graph_file(onnx_dir)))


def test_backends_are_chosen_and_checked(tmp_path: Path) -> None:
    """Issue 18: ``auto`` runs the packaged model on ONNX Runtime; a bad backend name is
    RETRIEVAL_INVALID_INPUT; ONNX asked for what it cannot run (a GPU, a hub id, a folder without a model)
    is RETRIEVAL_PROVIDER_UNAVAILABLE."""
    assert create_local_embedding_provider().backend == "onnx"
    for bad in ("", "ONNX", "tensorflow", None, 1):
        with pytest.raises(RetrievalError) as raised:
            create_local_embedding_provider(backend=bad)  # type: ignore[arg-type]
        assert raised.value.code == "RETRIEVAL_INVALID_INPUT"
    for options in ({"device": "cuda:0"}, {"model": "some-org/not-a-packaged-model"}, {"model": str(tmp_path)}):
        with pytest.raises(RetrievalError) as raised:
            create_local_embedding_provider(backend="onnx", **options)
        assert raised.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE", options
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider(backend="onnx", onnx_dir="")
    assert raised.value.code == "RETRIEVAL_INVALID_INPUT"


def test_auto_falls_back_to_torch_when_onnx_cannot_load(torch_backend: LocalEmbeddingProvider, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 18: when the graph cannot be had (here its cache folder is a file), ``auto`` logs why once and
    embeds with sentence-transformers; ``onnx`` is RETRIEVAL_PROVIDER_UNAVAILABLE, the cause kept in the log."""
    kept = {key: loaded for key, loaded in local_embedding._MODELS.items() if key[2] == "torch"}  # no reload
    monkeypatch.setattr(local_embedding, "_MODELS", kept)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file")
    fallback = create_local_embedding_provider(onnx_dir=blocked)
    assert fallback.backend == "torch"
    assert np.allclose(fallback.encode(["still embedded"]), torch_backend.encode(["still embedded"]), atol=1e-6)
    assert "using sentence-transformers" in caplog.text and "Traceback" not in str(fallback)
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider(backend="onnx", onnx_dir=blocked)
    assert raised.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE" and str(blocked) not in raised.value.message


def test_torch_loading_prints_no_progress_bars() -> None:
    """Issue 18: loading the model with sentence-transformers prints none of transformers' "Loading weights"
    bars on stderr (they appeared on every CLI run)."""
    done = run_child("""
        from ditto.retrieval.providers.local_embedding import create_local_embedding_provider
        print(create_local_embedding_provider(backend="torch").backend)
    """)
    assert done.returncode == 0 and done.stdout.strip() == "torch", done.stderr[-3000:]
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr


_FOLDER_FILES = ("modules.json", "1_Pooling/config.json", "sentence_bert_config.json", "config.json",
                 "tokenizer.json", "model.safetensors")

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=30),
                                                                                       inner, max_size=5),
                           max_leaves=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_FOLDER_FILES[:4]), value=json_values | st.binary(max_size=50).map(bytes.hex))
def test_a_bad_model_folder_is_refused_cleanly(onnx: LocalEmbeddingProvider, tmp_path: Path, name: str,
                                               value: Any) -> None:
    """Issue 18: a model folder with any of its config files replaced by other JSON (or not JSON) is either
    still a valid recipe or OnnxUnsupported — never another exception."""
    folder = tmp_path / "model"
    shutil.rmtree(folder, ignore_errors=True)
    source = onnx._loaded.model.recipe.folder
    for file in _FOLDER_FILES:
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        if file == "model.safetensors":
            (folder / file).write_bytes(b"")  # only its presence is read here
        else:
            shutil.copy(source / file, folder / file)
    (folder / name).write_text(json.dumps(value) if not isinstance(value, str) else value, encoding="utf-8")
    try:
        recipe = read_recipe(folder)
    except OnnxUnsupported:
        return
    assert recipe.pooling in ("cls", "mean", "max", "mean_sqrt_len")
    assert recipe.dimensions >= 1 and recipe.max_seq_length >= 1
