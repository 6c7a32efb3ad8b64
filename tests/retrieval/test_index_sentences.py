"""Sentence vectors in the index: what research reads a passage by is embedded once, when the index is built
(issue 18: a research task over a prepared index costs at most 0.3 s of CPU after the first).

The mechanics use ``WordHashEmbedder`` (a real, deterministic function, not a model); the research test uses
the real packaged weights, since it claims the brief is the one the model gives.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval.index import open_index, update_index_sync
from ditto.retrieval.index.store import sentence_key, sentence_texts
from ditto.text.sentences import split_sentences
from tests.retrieval.index_support import WordHashEmbedder, apply_changes, write_docs

DOCS = {
    "ops/backups.md": "# Backups\n\nBackups are kept for 30 days. They run nightly\nat 02:00.\n\n"
                      "## Restore\n\nUse `ditto restore` to bring a backup back.\n",
    "ops/alerts.txt": "Alerts page the on-call engineer.\nEscalation happens after 15 minutes.\n",
    "zh/备份.md": "备份保留三十天。每天凌晨两点运行。\n",
}


def _sentences(directory: Path) -> set[tuple[str, bytes]]:
    """(passage id, sentence key) of every stored sentence vector."""
    with open_index(directory) as index:
        generation = index.generation
    with sqlite3.connect(directory / generation / "index.sqlite") as connection:
        return {(passage_id, bytes(key)) for passage_id, key in connection.execute(
            "SELECT p.id, s.sha256 FROM sentences s JOIN passages p ON p.rowid = s.passage")}


def _expected(directory: Path) -> set[tuple[str, bytes]]:
    """What a build should hold: each distinct sentence of each passage, by the passage's own text."""
    with open_index(directory) as index:
        ids = [document.id for document in index.bm25.documents()]
        rows = index.passages(ids)
    return {(passage_id, sentence_key(text)) for passage_id, row in rows.items() for text in sentence_texts(row.text)}


def test_each_sentence_of_each_passage_is_stored_with_its_own_vector(tmp_path: Path) -> None:
    """Issue 18: an index built with a model holds a vector for each distinct sentence of each passage (cut as
    the built-in model cuts them, across the hard line break too), equal to embedding that sentence alone; a
    text that is no sentence of it is not found; a passage in Chinese script has none (research reads it by its
    words); the manifest and the run's summary say so."""
    import asyncio

    docs = write_docs(tmp_path / "docs", DOCS)
    embedder = WordHashEmbedder(16)
    summary = update_index_sync(tmp_path / "idx", [docs], embedding=embedder)
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["sentences"] is True
    assert _sentences(tmp_path / "idx") == _expected(tmp_path / "idx") != set()
    wrapped = "Backups are kept for 30 days."
    across = "They run nightly\nat 02:00."
    assert summary.sentences == len({key for _, key in _sentences(tmp_path / "idx")})
    with open_index(tmp_path / "idx") as index:
        found = index.sentence_vectors([wrapped, across, "Backups are kept", "备份保留三十天。"])
    assert set(found) == {wrapped, across}
    alone = asyncio.run(embedder.embed([wrapped, across]))
    for text, vector in zip([wrapped, across], alone, strict=True):
        assert found[text].dtype == np.float32
        assert np.array_equal(found[text], np.asarray(vector, dtype=np.float32))
    assert sentence_texts("备份保留三十天。每天凌晨两点运行。") == []
    assert sentence_texts("One. One. Two.") == ["One.", "Two."]


def test_a_changed_file_replaces_its_sentences_and_a_removed_one_takes_them_away(tmp_path: Path) -> None:
    """Issue 18 (incremental indexing): sentence vectors follow their passages through modify and remove."""
    docs = write_docs(tmp_path / "docs", DOCS)
    embedder = WordHashEmbedder(16)
    update_index_sync(tmp_path / "idx", [docs], embedding=embedder)
    (docs / "ops/alerts.txt").write_text("Alerts page the duty manager.\n", encoding="utf-8")
    update_index_sync(tmp_path / "idx", [docs], embedding=embedder)
    assert _sentences(tmp_path / "idx") == _expected(tmp_path / "idx")
    with open_index(tmp_path / "idx") as index:
        assert set(index.sentence_vectors(["Alerts page the on-call engineer.", "Alerts page the duty manager."])) \
            == {"Alerts page the duty manager."}
    update_index_sync(tmp_path / "idx", remove=[docs / "ops"], embedding=embedder)
    with open_index(tmp_path / "idx") as index:
        assert index.sentence_vectors(["Alerts page the duty manager.", "Backups are kept for 30 days."]) == {}
    assert _sentences(tmp_path / "idx") == _expected(tmp_path / "idx")


def test_an_index_without_sentence_vectors_gains_them_on_its_next_run(tmp_path: Path) -> None:
    """Issue 18: ``sentences=False`` (``--no-sentence-vectors``) embeds passages only; the next run with the
    model embeds the sentences of the passages it already holds, even when no file changed, and the run
    after that publishes nothing new."""
    docs = write_docs(tmp_path / "docs", DOCS)
    embedder = WordHashEmbedder(16)
    first = update_index_sync(tmp_path / "idx", [docs], embedding=embedder, sentences=False)
    assert first.sentences == 0 and first.embedded > 0
    with open_index(tmp_path / "idx") as index:
        assert index.sentence_vectors(["Backups are kept for 30 days."]) == {}
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text(encoding="utf-8"))["sentences"] is False
    second = update_index_sync(tmp_path / "idx", [docs], embedding=embedder)
    assert second.generation != first.generation and second.sentences > 0 and second.embedded == 0
    assert _sentences(tmp_path / "idx") == _expected(tmp_path / "idx")
    third = update_index_sync(tmp_path / "idx", [docs], embedding=embedder)
    assert third.generation == second.generation and third.sentences == 0


def test_an_index_without_a_model_has_no_sentence_vectors(tmp_path: Path) -> None:
    """Issue 18: a BM25-only index holds no vectors, of passages or sentences, and says so by finding none."""
    docs = write_docs(tmp_path / "docs", DOCS)
    summary = update_index_sync(tmp_path / "idx", [docs])
    assert summary.sentences == 0
    with open_index(tmp_path / "idx") as index:
        assert index.sentence_vectors(["Backups are kept for 30 days."]) == {}


_NAMES = st.sampled_from(["a.md", "b.txt", "sub/c.md"])
_TEXTS = st.lists(st.sampled_from(["Backups run nightly. Keep two.", "# Title", "- item one", "Restore with care.",
                                   "", "Backups run nightly.\nKeep two.", "备份每天运行。"]),
                  min_size=1, max_size=4).map("\n\n".join)


@settings(max_examples=15, deadline=None)
@given(operations=st.lists(st.tuples(st.sampled_from(["write", "delete"]), _NAMES, _TEXTS), min_size=1, max_size=5))
def test_any_sequence_of_changes_keeps_exactly_the_sentences_of_the_passages_held(operations: list) -> None:
    """Issue 18 (invariant): after any writes and deletes, each followed by an incremental run with the model,
    the index holds exactly the sentence vectors of the passages it holds, as a fresh build does."""
    embedder = WordHashEmbedder(8)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        docs = root / "docs"
        (docs / "sub").mkdir(parents=True)
        (docs / "keep.md").write_text("Always here. Really.\n")
        apply_changes(docs, operations, lambda: update_index_sync(root / "incremental", [docs], embedding=embedder))
        update_index_sync(root / "fresh", [docs], embedding=embedder)
        assert _sentences(root / "incremental") == _expected(root / "incremental")
        assert {key for _, key in _sentences(root / "incremental")} == {key for _, key in _sentences(root / "fresh")}


@pytest.mark.parametrize("text", ["No full stop here", "a\u00a0b. c", "\ud800 lone. Surrogate.", "x" * 3000])
def test_sentence_texts_are_the_reading_s_sentences(text: str) -> None:
    """Issue 18: the index stores the sentences the built-in model reads (``split_sentences``), keyed by the
    SHA-256 of their UTF-8 (a lone surrogate kept, never an exception)."""
    expected = list(dict.fromkeys(text[span.start:span.end] for span in split_sentences(text)))
    assert sentence_texts(text) == expected
    assert all(len(sentence_key(sentence)) == 32 for sentence in expected)


def test_a_stored_vector_of_the_wrong_size_is_left_out_not_trusted(tmp_path: Path) -> None:
    """Issue 18 (bad input): a damaged sentence vector (a blob of another length) is not returned, so research
    embeds that sentence again instead of reading garbage; the others are still found."""
    docs = write_docs(tmp_path / "docs", DOCS)
    update_index_sync(tmp_path / "idx", [docs], embedding=WordHashEmbedder(16))
    with open_index(tmp_path / "idx") as index:
        generation = index.generation
    damaged = "Backups are kept for 30 days."
    with sqlite3.connect(tmp_path / "idx" / generation / "index.sqlite") as connection:
        changed = connection.execute("UPDATE sentences SET embedding = ? WHERE sha256 = ?",
                                     (b"\x00\x01\x02", sentence_key(damaged))).rowcount
    assert changed == 1
    with open_index(tmp_path / "idx") as index:
        found = index.sentence_vectors([damaged, "Alerts page the on-call engineer."])
    assert set(found) == {"Alerts page the on-call engineer."}
