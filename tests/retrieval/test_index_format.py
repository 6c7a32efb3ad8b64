"""The persistent index's directory format: manifest, version refusal, model and dimension checks (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.retrieval import RetrievalError
from ditto.retrieval.index import (
    FORMAT_VERSION,
    SearchIndexError,
    create_index_search_provider,
    open_index,
    update_index,
)
from tests.retrieval.index_support import WordHashEmbedder, write_docs


async def test_the_directory_holds_a_manifest_one_generation_and_the_passages_with_stable_ids(tmp_path: Path) -> None:
    """Issue 18: one directory: manifest.json (format_version, generation, analyzer), the generation it names
    (index.sqlite + BM25 arrays), passage ids ``path#ordinal`` with line ranges, the file bytes kept."""
    docs = write_docs(tmp_path / "docs")
    summary = await update_index(tmp_path / "idx", [docs])
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["format"] == "ditto-index" and manifest["format_version"] == FORMAT_VERSION
    assert manifest["generation"] == summary.generation
    assert (tmp_path / "idx" / summary.generation / "index.sqlite").is_file()
    assert [p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith("g-")] == [summary.generation]
    backups = str((docs / "ops/backups.md").resolve())
    with open_index(tmp_path / "idx") as index:
        rows = index.passages([f"{backups}#1", f"{backups}#2"])
        assert rows[f"{backups}#1"].text == "Backups are kept for 30 days.\nThey run nightly at 02:00."
        assert (rows[f"{backups}#1"].line_start, rows[f"{backups}#1"].line_end) == (3, 4)
        assert rows[f"{backups}#2"].heading == "Backups › Restore"
        stored = index.file_bytes(backups)
        assert stored is not None and stored[1] == (docs / "ops/backups.md").read_bytes()


async def _refused_with_format_version(tmp_path: Path, version: object) -> tuple[SearchIndexError, SearchIndexError]:
    """An index whose manifest says ``version``: the errors of opening and of updating it (both must refuse),
    after checking that neither changed the folder."""
    docs = write_docs(tmp_path / "docs")
    await update_index(tmp_path / "idx", [docs])
    path = tmp_path / "idx" / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "format_version": version}))
    before = sorted(p.name for p in (tmp_path / "idx").iterdir())
    with pytest.raises(SearchIndexError) as opened:
        open_index(tmp_path / "idx")
    with pytest.raises(SearchIndexError) as updated:
        await update_index(tmp_path / "idx", [docs])
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == before
    return opened.value, updated.value


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1, 10**6])
async def test_an_index_of_a_newer_format_version_is_refused_for_reading_and_writing(tmp_path: Path,
                                                                                    version: int) -> None:
    """Issue 18: an index from a newer format version: INDEX_NEWER_FORMAT naming both versions, on open and on
    update; the directory is left as it was."""
    opened, updated = await _refused_with_format_version(tmp_path, version)
    assert opened.code == "INDEX_NEWER_FORMAT" and str(version) in opened.message
    assert updated.code == "INDEX_NEWER_FORMAT"


@pytest.mark.parametrize("version", ["2", True, 0, -1, 1.5, None])
async def test_a_format_version_that_is_not_a_positive_integer_is_a_damaged_manifest(tmp_path: Path,
                                                                                     version: object) -> None:
    """Issue 18 (bad input): ``format_version`` "2" (a string), true, 0, -1, 1.5 or missing is no version this
    library wrote: INDEX_NOT_FOUND (damaged) on open and on update, never read as some version; nothing changes."""
    for refused in await _refused_with_format_version(tmp_path, version):
        assert refused.code == "INDEX_NOT_FOUND" and "format_version" in refused.message


def test_the_provider_wants_an_opened_index_not_a_path(tmp_path: Path) -> None:
    """Issue 18 (bad input): ``create_index_search_provider("idx")`` (a path where an opened index belongs) is
    RETRIEVAL_INVALID_INPUT saying to open it, not an AttributeError."""
    for wrong in ("idx", tmp_path, None, 3):
        with pytest.raises(RetrievalError) as refused:
            create_index_search_provider(wrong)  # type: ignore[arg-type]
        assert refused.value.code == "RETRIEVAL_INVALID_INPUT" and "open_index" in refused.value.message


@pytest.mark.parametrize("manifest", ["", "{", "[]", '{"format": "other"}', '{"format": "ditto-index"}'])
def test_a_missing_or_damaged_manifest_is_index_not_found(tmp_path: Path, manifest: str) -> None:
    """Issue 18: no manifest, or one that is not ours / is damaged: INDEX_NOT_FOUND, never a traceback."""
    (tmp_path / "idx").mkdir()
    if manifest:
        (tmp_path / "idx" / "manifest.json").write_text(manifest)
    with pytest.raises(SearchIndexError) as error:
        open_index(tmp_path / "idx")
    assert error.value.code == "INDEX_NOT_FOUND"


async def test_a_model_of_another_dimension_or_id_is_refused_never_truncated(tmp_path: Path) -> None:
    """Issue 18: the index records its embedding model and dimension; updating or searching with a model whose
    dimension (or id) differs is INDEX_MODEL_MISMATCH, and an index with vectors refuses an update without one."""
    docs = write_docs(tmp_path / "docs")
    await update_index(tmp_path / "idx", [docs], embedding=WordHashEmbedder(16))
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["embedding"] == {"model": "word-hash", "dimensions": 16}
    (docs / "ops/new.md").write_text("A new runbook.\n")
    for embedding in (WordHashEmbedder(32), WordHashEmbedder(16, model_id="other-model"), None):
        with pytest.raises(SearchIndexError) as error:
            await update_index(tmp_path / "idx", [docs], embedding=embedding)
        assert error.value.code == "INDEX_MODEL_MISMATCH"
    with open_index(tmp_path / "idx") as index:
        assert index.embedding is not None and index.embedding.dimensions == 16
        assert len(index) == 5  # the refused runs added nothing
        with pytest.raises(SearchIndexError) as error:
            create_index_search_provider(index, embedding=WordHashEmbedder(32))
        assert error.value.code == "INDEX_MODEL_MISMATCH"


async def test_an_embedder_returning_vectors_of_the_wrong_length_fails_and_changes_nothing(tmp_path: Path) -> None:
    """Issue 18: a model that claims 16 dimensions but returns 8 is RETRIEVAL_INVALID_EMBEDDING (never cut or
    padded), and the published index is untouched."""

    class Liar(WordHashEmbedder):
        async def embed(self, contents, context=None):  # type: ignore[no-untyped-def]
            return [vector[:8] for vector in await super().embed(contents, context)]

    docs = write_docs(tmp_path / "docs")
    first = await update_index(tmp_path / "idx", [docs], embedding=WordHashEmbedder(16))
    (docs / "ops/new.md").write_text("A new runbook.\n")
    with pytest.raises(RetrievalError) as error:
        await update_index(tmp_path / "idx", [docs], embedding=Liar(16))
    assert error.value.code == "RETRIEVAL_INVALID_EMBEDDING"
    with open_index(tmp_path / "idx") as index:
        assert index.generation == first.generation and len(index) == first.passages


def test_the_option_terms_analysis_round_trips_with_a_saved_index() -> None:
    """Issue 18: the folder cache's analysis (CJK one character a term, command-line options kept as terms, case
    kept) is saved with the index and rebuilt identically; without the flag the saved config is as before."""
    from ditto.text.analysis import TextAnalyzer

    analyzer = TextAnalyzer(cjk="unigram", options=True)
    assert analyzer.analyze("use mkdir -p, not -P") == ["use", "mkdir", "-p", "-P"]
    again = TextAnalyzer.from_config(analyzer.config())
    assert again.config() == analyzer.config() and again.analyze("mkdir -p") == ["mkdir", "-p"]
    assert "options" not in TextAnalyzer().config() and TextAnalyzer().analyze("mkdir -p") == ["mkdir"]


def test_the_digit_analysis_keeps_a_lone_digit_and_round_trips() -> None:
    """Issue 17 (the documentation search): a digit standing alone ("exit code 9") is a term with ``digits=True``,
    a digit of a decimal is not; the flag is saved with the index; without it the saved config is as before."""
    from ditto.text.analysis import TextAnalyzer

    analyzer = TextAnalyzer(cjk="unigram", digits=True)
    assert analyzer.analyze("useradd exited with code 9, ratio 0.5 or 1,5") == ["useradd", "exit", "code", "9",
                                                                                 "ratio"]
    again = TextAnalyzer.from_config(analyzer.config())
    assert again.config() == analyzer.config() and again.analyze("level 6") == ["level", "6"]
    assert "digits" not in TextAnalyzer().config() and TextAnalyzer().analyze("level 6") == ["level"]


@given(st.text(alphabet=st.sampled_from(list("ab9 0.,-\n\u4e2d")), max_size=60))
def test_the_digit_analysis_only_adds_lone_digits(text: str) -> None:
    """Issue 17: with ``digits=True`` the terms are those without it plus lone digits, in text order."""
    from ditto.text.analysis import TextAnalyzer

    plain = TextAnalyzer(cjk="unigram").analyze(text)
    with_digits = TextAnalyzer(cjk="unigram", digits=True).analyze(text)
    assert [term for term in with_digits if not (len(term) == 1 and term.isdigit())] == plain
