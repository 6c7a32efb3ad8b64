"""Incremental indexing: touched, modified, deleted and removed files; the result equals a fresh build (issue 18)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval.index import open_index, update_index_sync
from tests.retrieval.index_support import WordHashEmbedder, apply_changes, write_docs


def _contents(directory: Path) -> dict[str, tuple[str, int, int]]:
    with open_index(directory) as index:
        ids = [document.id for document in index.bm25.documents()]
        return {i: (row.text, row.line_start, row.line_end) for i, row in index.passages(ids).items()}


def _age(path: Path, seconds: float = 60.0) -> None:
    """Date a file back, as if written long before the last run (outside the racy window)."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def test_touch_modify_delete_and_remove(tmp_path: Path) -> None:
    """Issue 18: an unchanged file is skipped; a touched file with the same bytes is read again but keeps its
    passages; a modified file's passages are replaced; a deleted file's are dropped; --remove drops a folder."""
    docs = write_docs(tmp_path / "docs")
    for path in docs.rglob("*.*"):
        _age(path)
    first = update_index_sync(tmp_path / "idx", [docs])
    assert (first.added, first.updated, first.unchanged, first.removed) == (3, 0, 0, 0)
    again = update_index_sync(tmp_path / "idx", [docs])
    assert (again.added, again.updated, again.unchanged, again.generation) == (0, 0, 3, first.generation)
    alerts = docs / "ops/alerts.txt"
    os.utime(alerts)  # touched: newer time stamp, same bytes
    touched = update_index_sync(tmp_path / "idx", [docs])
    assert (touched.updated, touched.unchanged) == (0, 3)
    before = _contents(tmp_path / "idx")
    alerts.write_text("Alerts page the on-call engineer.\n\nEscalation happens after 5 minutes.\n")
    modified = update_index_sync(tmp_path / "idx", [docs])
    assert (modified.added, modified.updated, modified.unchanged) == (0, 1, 2)
    after = _contents(tmp_path / "idx")
    prefix = str(alerts.resolve())
    assert after[f"{prefix}#2"] == ("Escalation happens after 5 minutes.", 3, 3)
    assert {k: v for k, v in after.items() if not k.startswith(prefix)} == \
        {k: v for k, v in before.items() if not k.startswith(prefix)}
    (docs / "guide/memory.md").unlink()
    deleted = update_index_sync(tmp_path / "idx", [docs])
    assert deleted.removed == 1 and not any("memory.md" in key for key in _contents(tmp_path / "idx"))
    removed = update_index_sync(tmp_path / "idx", remove=[docs / "ops"])
    assert removed.removed == 2 and _contents(tmp_path / "idx") == {}


def test_a_second_source_keeps_the_first_and_vectors_are_added_to_an_index_that_had_none(tmp_path: Path) -> None:
    """Issue 18: files from a source not named in this run stay; --embed on an index without vectors embeds
    the passages it already holds too."""
    write_docs(tmp_path / "a", {"one.md": "Alpha text.\n"})
    write_docs(tmp_path / "b", {"two.md": "Beta text.\n"})
    update_index_sync(tmp_path / "idx", [tmp_path / "a"])
    update_index_sync(tmp_path / "idx", [tmp_path / "b"])
    assert len(_contents(tmp_path / "idx")) == 2
    embedder = WordHashEmbedder(8)
    summary = update_index_sync(tmp_path / "idx", [tmp_path / "b"], embedding=embedder)
    assert summary.embedded == 2
    with open_index(tmp_path / "idx") as index:
        assert len(index.search_vectors([1.0] * 8, limit=10)) == 2


_NAMES = st.sampled_from(["a.md", "b.txt", "sub/c.md", "sub/deep/d.md"])
_TEXTS = st.lists(st.sampled_from(["Backups run nightly.", "# Title", "- item one", "Restore with care.", ""]),
                  min_size=1, max_size=4).map("\n\n".join)
_OPS = st.lists(st.tuples(st.sampled_from(["write", "delete"]), _NAMES, _TEXTS), min_size=1, max_size=6)


@settings(max_examples=15)
@given(operations=_OPS)
def test_any_sequence_of_changes_indexes_like_a_fresh_build(tmp_path_factory: object, operations: list) -> None:
    """Issue 18 (invariant): after any sequence of writes and deletes, each followed by an incremental run,
    the index holds exactly the passages a fresh build of the folder holds."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        docs = root / "docs"
        (docs / "sub" / "deep").mkdir(parents=True)
        (docs / "keep.md").write_text("Always here.\n")
        apply_changes(docs, operations, lambda: update_index_sync(root / "incremental", [docs]))
        update_index_sync(root / "fresh", [docs])
        assert _contents(root / "incremental") == _contents(root / "fresh")


def test_an_index_cut_by_another_cutter_is_cut_again(tmp_path: Path) -> None:
    """Issue 18 (incremental indexing): the manifest records the passage cutter's version; a run over an index
    whose passages another version cut (or that did not record it) reads and cuts every file again, says so,
    and leaves what a fresh build gives; the run after that skips them again."""
    import json

    from ditto.text.passages import PASSAGES_VERSION

    docs = write_docs(tmp_path / "docs")
    for path in docs.rglob("*.*"):
        _age(path)
    first = update_index_sync(tmp_path / "idx", [docs])
    manifest_path = tmp_path / "idx" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert manifest["cutter"] == PASSAGES_VERSION
    fresh = _contents(tmp_path / "idx")
    del manifest["cutter"]  # an index written before the version was recorded
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    again = update_index_sync(tmp_path / "idx", [docs])
    assert (again.added, again.updated, again.unchanged) == (0, first.added, 0)
    assert any("cut again" in note for note in again.notes)
    assert _contents(tmp_path / "idx") == fresh
    assert json.loads(manifest_path.read_text(encoding="utf-8"))["cutter"] == PASSAGES_VERSION
    later = update_index_sync(tmp_path / "idx", [docs])
    assert (later.updated, later.unchanged, later.generation) == (0, first.added, again.generation)
