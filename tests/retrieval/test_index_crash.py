"""A writer killed with SIGKILL leaves the previous index usable; a second writer at once is refused (issue 18).

The writer is a real child process running ``update_index``; it stops itself at a chosen stage (its
progress callback prints a line and sleeps), so the kill lands exactly there, every run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ditto.retrieval.index import SearchIndexError, open_index, update_index_sync
from tests.retrieval.index_support import write_docs

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import sys, time
from ditto.retrieval.index import update_index_sync

stage = sys.argv[3]

def progress(name, done, total):
    if name == stage:
        print("paused", flush=True)
        time.sleep(120)

update_index_sync(sys.argv[1], [sys.argv[2]], progress=progress)
"""


def _start_paused(index: Path, source: Path, stage: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(index), str(source), stage], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "paused", child.stderr.read() if child.stderr else line
    return child


def _search(index_dir: Path, query: str) -> list[str]:
    with open_index(index_dir) as index:
        return [document.id for document, _ in index.bm25.search(query, limit=5)]


@pytest.mark.parametrize("stage", ["read", "bm25"])
def test_sigkill_during_indexing_leaves_the_previous_index_usable(tmp_path: Path, stage: str) -> None:
    """Issue 18: SIGKILL while reading the changed files, or after the new generation's database is written
    but before it is published: the previous manifest and generation still open and search as before; the
    next run removes the half-built generation and publishes the change."""
    docs = write_docs(tmp_path / "docs")
    first = update_index_sync(tmp_path / "idx", [docs])
    assert _search(tmp_path / "idx", "escalation")
    (docs / "ops/alerts.txt").write_text("Pager duty rotates weekly.\n")
    for number in range(40):
        (docs / f"bulk/n{number}.md").parent.mkdir(exist_ok=True)
        (docs / f"bulk/n{number}.md").write_text(f"Bulk note {number}.\n")
    child = _start_paused(tmp_path / "idx", docs, stage)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    with open_index(tmp_path / "idx") as index:
        assert index.generation == first.generation and len(index) == first.passages
    assert _search(tmp_path / "idx", "escalation") and not _search(tmp_path / "idx", "pager")
    generations = sorted(p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith("g-"))
    assert first.generation in generations
    after = update_index_sync(tmp_path / "idx", [docs])
    assert after.updated == 1 and after.added == 40
    assert _search(tmp_path / "idx", "pager") and not _search(tmp_path / "idx", "escalation")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith("g-")) == [after.generation]


def test_a_second_writer_is_refused_while_one_runs_and_readers_are_not_blocked(tmp_path: Path) -> None:
    """Issue 18: two `ditto index` runs on one directory: the second is refused at once with INDEX_BUSY (the
    first holds the flock), in Python and from the command line; searching meanwhile works; once the first
    ends (here: killed, which releases the lock) a new run proceeds."""
    docs = write_docs(tmp_path / "docs")
    update_index_sync(tmp_path / "idx", [docs])
    (docs / "ops/alerts.txt").write_text("Pager duty rotates weekly.\n")
    child = _start_paused(tmp_path / "idx", docs, "read")
    try:
        with pytest.raises(SearchIndexError) as error:
            update_index_sync(tmp_path / "idx", [docs])
        assert error.value.code == "INDEX_BUSY"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        done = subprocess.run([sys.executable, "-m", "ditto", "index", str(docs), "--index", str(tmp_path / "idx"),
                               "--json"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1
        assert json.loads(done.stdout)["error"]["code"] == "INDEX_BUSY"
        assert _search(tmp_path / "idx", "escalation")
    finally:
        child.kill()
        child.wait(timeout=30)
    assert update_index_sync(tmp_path / "idx", [docs]).updated == 1
