"""Bad input to ``update_index``: skipped with a warning naming the file, or refused with nothing written (issue 18).

Text files that cannot be used (unreadable, binary, not UTF-8, over the size limit) are skipped and named;
a source with nothing to index, a JSONL line that is not an object and a duplicate id are refused, and the
index is left exactly as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval.index import SearchIndexError, open_index, update_index_sync
from tests.retrieval.index_support import write_docs


def _state(directory: Path) -> tuple[str, int]:
    with open_index(directory) as index:
        return index.generation, len(index)


def test_unusable_text_files_are_skipped_with_a_warning_naming_each(tmp_path: Path) -> None:
    """Issue 18: a binary file (NUL bytes), invalid UTF-8, a 50 MB file and an unreadable entry (a FIFO; or a
    file without read permission when not root) are skipped, each named in the warnings; the rest is indexed."""
    docs = write_docs(tmp_path / "docs", {"good.md": "Good text.\n"})
    (docs / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00 zip data")
    (docs / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    with (docs / "huge.md").open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # a sparse 50 MB file: no time spent writing it
    os.mkfifo(docs / "pipe.md")
    if os.geteuid() != 0:
        (docs / "locked.md").write_text("secret\n")
        (docs / "locked.md").chmod(0)
    summary = update_index_sync(tmp_path / "idx", [docs])
    warnings = "\n".join(summary.skipped)
    for name in ("binary.txt", "latin1.txt", "huge.md", "pipe.md") + (("locked.md",) if os.geteuid() else ()):
        assert name in warnings, (name, warnings)
    assert "NUL" in warnings and "not UTF-8" in warnings and "larger than" in warnings
    assert (summary.added, summary.passages) == (1, 1)


def test_a_jsonl_file_inside_a_folder_is_named_not_read(tmp_path: Path) -> None:
    """Issue 18: only a .jsonl named as a source is a record file; one met inside a folder (a log, a BEIR
    folder's queries) is named in the warnings and not indexed, and naming it indexes its records."""
    docs = write_docs(tmp_path / "docs", {"guide.md": "How backups are kept.\n"})
    (docs / "notes.jsonl").write_text('{"id": "n1", "content": "Backups are kept for 30 days."}\n')
    summary = update_index_sync(tmp_path / "idx", [docs])
    assert any("notes.jsonl" in note and "name it as a source" in note for note in summary.skipped), summary.skipped
    assert (summary.added, summary.passages) == (1, 1)
    summary = update_index_sync(tmp_path / "idx", [docs, docs / "notes.jsonl"])
    assert summary.passages == 2 and not any("notes.jsonl" in note for note in summary.skipped)


def _refused(tmp_path: Path, source: Path, fragment: str) -> None:
    before = _state(tmp_path / "idx")
    with pytest.raises(SearchIndexError) as error:
        update_index_sync(tmp_path / "idx", [source])
    assert error.value.code == "INDEX_INVALID_INPUT" and fragment in error.value.message, error.value.message
    assert _state(tmp_path / "idx") == before
    assert [p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith("g-")] == [before[0]]


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    update_index_sync(tmp_path / "idx", [write_docs(tmp_path / "docs")])
    return tmp_path


def test_an_empty_folder_or_one_with_only_skipped_files_is_refused(indexed: Path) -> None:
    """Issue 18: an empty folder (or one whose only file is binary) is refused; the index stays as it was."""
    (indexed / "empty").mkdir()
    _refused(indexed, indexed / "empty", "nothing to index")
    (indexed / "binary").mkdir()
    (indexed / "binary" / "x.txt").write_bytes(b"\x00\x01")
    _refused(indexed, indexed / "binary", "nothing to index")
    _refused(indexed, indexed / "does-not-exist", "no source exists")


@pytest.mark.parametrize(("lines", "fragment"), [
    (['{"id": "a", "content": "x"}', '["not", "an", "object"]'], "line 2: not a JSON object"),
    (['{"id": "a", "content": "x"}', "{broken"], "line 2: not valid JSON"),
    (['{"id": "a", "content": "x"}', '{"id": "a", "content": "y"}'], "given twice"),
    (['{"content": "no id"}'], "needs a non-empty string or integer id"),
    (['{"id": "a", "content": 42}'], "needs a string content"),
    (['{"id": "a", "content": "nul \\u0000 here"}'], "NUL"),
    (['{"id": "a", "content": "lone \\ud800 surrogate"}'], "surrogate"),
    (['{"id": "a", "content": "x", "metadata": [1]}'], "metadata must be an object"),
    (['{"id": "a", "content": "x", "metadata": []}'], "metadata must be an object"),
    (['{"id": "a", "content": "x", "metadata": 0}'], "metadata must be an object"),
    (['{"id": "a", "content": "x", "metadata": ""}'], "metadata must be an object"),
    (['{"id": "a", "content": "x", "metadata": {"n": 1e999}}'], "non-finite"),
    (['{"id": "a", "content": "x", "metadata": {"path": "/elsewhere"}}'], "metadata key 'path' is set by the index"),
    (['{"id": "a", "content": "x", "metadata": {"lineStart": 3}}'], "metadata key 'lineStart' is set by the index"),
])
def test_bad_jsonl_is_refused_naming_the_line(indexed: Path, lines: list[str], fragment: str) -> None:
    """Issue 18: a JSONL line that is not an object (or not JSON, without id/content, with NUL, a lone
    surrogate, a non-finite number, metadata the index would overwrite) and a duplicate id are refused with
    the file and line; nothing written."""
    source = indexed / "records.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _refused(indexed, source, fragment)


def test_an_id_already_held_by_another_file_is_refused(indexed: Path) -> None:
    """Issue 18: a record id another indexed file already holds is a duplicate too."""
    (indexed / "one.jsonl").write_text('{"id": "r1", "content": "first"}\n')
    update_index_sync(indexed / "idx", [indexed / "one.jsonl"])
    (indexed / "two.jsonl").write_text('{"id": "r1", "content": "second"}\n')
    _refused(indexed, indexed / "two.jsonl", "already in the index")


def test_invalid_utf8_and_overlong_lines_in_jsonl_are_refused(indexed: Path) -> None:
    """Issue 18: bytes that are not UTF-8 and a line over 1 MiB in a JSONL file are refused, not skipped."""
    (indexed / "bad.jsonl").write_bytes(b'{"id": "a", "content": "caf\xe9"}\n')
    _refused(indexed, indexed / "bad.jsonl", "not UTF-8")
    (indexed / "long.jsonl").write_text(json.dumps({"id": "a", "content": "x" * (1 << 20)}) + "\n")
    _refused(indexed, indexed / "long.jsonl", "longer than")


@settings(max_examples=40)
@given(line=st.one_of(st.binary(max_size=60), st.text(max_size=60).map(str.encode),
                      st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                                   lambda inner: st.lists(inner, max_size=3)
                                   | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                                   max_leaves=8).map(lambda v: json.dumps(v).encode())))
def test_any_jsonl_line_is_indexed_or_refused_with_a_clear_error(line: bytes) -> None:
    """Issue 18 (bad input property): whatever one JSONL line holds, indexing it either succeeds or raises
    INDEX_INVALID_INPUT; never another exception, never a half-written index."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "records.jsonl").write_bytes(line.replace(b"\n", b" ") + b"\n")
        try:
            update_index_sync(root / "idx", [root / "records.jsonl"])
        except SearchIndexError as error:
            assert error.code == "INDEX_INVALID_INPUT"
            assert not (root / "idx").exists()  # a refused first run leaves nothing behind
        else:
            assert _state(root / "idx")[1] == 1


def test_an_index_folder_that_cannot_be_one_is_a_clear_error_from_python_and_the_shell(tmp_path: Path) -> None:
    """Issue 18 (bad input): ``--index`` naming a file, a path under a file or an empty path, and ``--remove`` on
    an index that does not exist, are refused with a code (a JSON error with ``--json``), never a traceback, and
    nothing is created."""
    import subprocess
    import sys

    docs = write_docs(tmp_path / "docs")
    a_file = docs / "ops" / "alerts.txt"
    cases = {a_file: "INDEX_INVALID_INPUT", a_file / "sub": "INDEX_UNAVAILABLE"}
    for target, code in cases.items():
        with pytest.raises(SearchIndexError) as refused:
            update_index_sync(target, [docs])
        assert refused.value.code == code and str(target) in refused.value.message
    with pytest.raises(SearchIndexError) as refused:
        update_index_sync("", [docs])
    assert refused.value.code == "INDEX_INVALID_INPUT"
    with pytest.raises(SearchIndexError) as refused:
        update_index_sync(tmp_path / "never", remove=[docs])
    assert refused.value.code == "INDEX_NOT_FOUND" and not (tmp_path / "never").exists()

    cli = [str(Path(sys.executable).parent / "ditto"), "index"]
    runs = {("docs", "--index", str(a_file)): (1, "INDEX_INVALID_INPUT"),
            ("docs", "--index", str(a_file / "sub")): (1, "INDEX_UNAVAILABLE"),
            ("--remove", "docs", "--index", "never"): (1, "INDEX_NOT_FOUND")}
    for args, (status, code) in runs.items():
        done = subprocess.run([*cli, *args, "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == status, done.stderr
        assert json.loads(done.stdout)["error"]["code"] == code and "Traceback" not in done.stderr
    done = subprocess.run([*cli, "docs", "--index", "", "--json"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "empty path" in done.stderr and "Traceback" not in done.stderr
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["docs"]  # nothing written anywhere


def test_nothing_but_the_index_own_generations_is_ever_removed(tmp_path: Path) -> None:
    """Issue 18 (nothing lost): an index built into a folder that holds other things (a project folder, ``--index
    .``) leaves them alone, a folder named like ``g-notes`` included; only its own ``g-NNNNNN`` generations go."""
    docs = write_docs(tmp_path / "docs")
    (tmp_path / "g-important").mkdir()
    (tmp_path / "g-important" / "data.txt").write_text("precious\n")
    (tmp_path / "g-12").mkdir()
    update_index_sync(tmp_path, [docs])
    (docs / "more.md").write_text("More text about backups.\n")
    update_index_sync(tmp_path, [docs])
    assert (tmp_path / "g-important" / "data.txt").read_text() == "precious\n" and (tmp_path / "g-12").is_dir()
    assert sorted(entry.name for entry in tmp_path.glob("g-0*")) == ["g-000002"]


def test_one_path_given_as_a_string_is_one_path_never_its_letters(tmp_path: Path) -> None:
    """Issue 18 (bad input): ``sources``, ``remove`` and ``ignore`` given as one ``str`` (or ``PathLike``) mean that
    one path or glob: ``remove="docs/a.md"`` once removed every file of the index (``/`` and ``.``)."""
    docs = write_docs(tmp_path / "docs")
    summary = update_index_sync(tmp_path / "idx", str(docs), ignore="*.txt")
    with open_index(tmp_path / "idx") as index:
        files = sorted(Path(path).name for path, _, _ in index.files())
    assert summary.files == len(files) and files and not any(name.endswith(".txt") for name in files)
    removed = update_index_sync(tmp_path / "idx", remove=str(docs / "ops" / "backups.md"))
    with open_index(tmp_path / "idx") as index:
        left = sorted(Path(path).name for path, _, _ in index.files())
    assert removed.to_json_dict()["files"]["removed"] == 1 and left == [name for name in files if name != "backups.md"]
    for sources, ignore in (([docs, 3], ()), (docs, 3), (docs, [b"*.md"])):
        with pytest.raises(SearchIndexError) as refused:
            update_index_sync(tmp_path / "idx", sources, ignore=ignore)
        assert refused.value.code == "INDEX_INVALID_INPUT"


def test_a_file_named_twice_is_indexed_once(tmp_path: Path) -> None:
    """Issue 18: overlapping sources (a folder twice, a folder and a file in it, a link to the folder) name each
    file once; they used to be refused as an id "given twice"."""
    docs = write_docs(tmp_path / "docs")
    (tmp_path / "link").symlink_to(docs)
    once = update_index_sync(tmp_path / "once", [docs])
    summary = update_index_sync(tmp_path / "twice", [docs, docs, docs / "ops" / "backups.md", tmp_path / "link"])
    assert summary.files == once.files and summary.passages == once.passages


@pytest.mark.parametrize("damage", ["missing generation", "not a database", "no BM25 arrays"])
def test_a_damaged_index_is_refused_and_nothing_is_deleted(tmp_path: Path, damage: str) -> None:
    """Issue 18 (nothing lost): a manifest naming a missing generation, a database that is not one, or a generation
    without its BM25 arrays is INDEX_NOT_FOUND saying the index is damaged; the folder is left as it was (the
    real generation was once deleted as stale before the crash)."""
    import shutil

    docs = write_docs(tmp_path / "docs")
    index = tmp_path / "idx"
    update_index_sync(index, [docs])
    if damage == "missing generation":
        manifest = index / "manifest.json"
        manifest.write_text(manifest.read_text().replace("g-000001", "g-000009"))
    elif damage == "not a database":
        (index / "g-000001" / "index.sqlite").write_bytes(b"garbage, not SQLite\n")
    else:
        shutil.rmtree(index / "g-000001" / "bm25")
    (docs / "new.md").write_text("A new file about alerts.\n")
    before = sorted(str(path.relative_to(index)) for path in index.rglob("*"))
    with pytest.raises(SearchIndexError) as refused:
        update_index_sync(index, [docs])
    assert refused.value.code == "INDEX_NOT_FOUND" and "damaged" in refused.value.message
    assert sorted(str(path.relative_to(index)) for path in index.rglob("*")) == before


def test_a_refused_first_run_leaves_no_folder_and_removing_nothing_says_so(tmp_path: Path) -> None:
    """Issue 18 (nothing half-written): a first ``update_index`` that is refused (an empty folder) leaves no index
    folder behind (it used to leave one holding only its lock); removing a path the index does not hold publishes
    nothing and says so in the warnings (not counted as a skipped file)."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(SearchIndexError):
        update_index_sync(tmp_path / "idx", [tmp_path / "empty"])
    assert not (tmp_path / "idx").exists()
    docs = write_docs(tmp_path / "docs")
    update_index_sync(tmp_path / "idx", [docs])
    before = _state(tmp_path / "idx")
    summary = update_index_sync(tmp_path / "idx", remove=[tmp_path / "nowhere"])
    data = summary.to_json_dict()
    assert data["files"]["removed"] == 0 and data["files"]["skipped"] == 0
    assert any("nothing of it is in the index" in warning for warning in data["warnings"])
    assert _state(tmp_path / "idx") == before
