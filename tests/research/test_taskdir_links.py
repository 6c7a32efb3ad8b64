"""Planted links in a task folder never make a run write or read outside it (issue 16 item 2).

A task is run to ``--stop-after evidence`` (so it has a lock, a trace,
snapshots, MEMORY checkpoints and an empty ``artifacts/``), one of its parts is
replaced by a symbolic link to a victim outside the folder, and the task is
resumed: the resume is refused with ``RESEARCH_UNSAFE_TASK_DIRECTORY`` and the
victim is byte for byte what it was. The second half plants the link *after*
the folder was checked (a race) and calls each writer directly.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from ditto.workflows.research import ResearchOptions, ResearchTask, open_task
from ditto.workflows.research.errors import ResearchError
from ditto.workflows.research.taskdir import TaskLock, atomic_write, check_task_directory, snapshot_text
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

REQUEST = {"sources": ["documents", "knowledge"], "knowledge": "external"}


async def _stopped_task(base: Path, model: ScriptedModel) -> ResearchTask:
    task, result = await run("multi-source", REQUEST, base, model,
                             options=ResearchOptions(stop_after="evidence"))
    assert result.status == "stopped"
    assert any((task.directory / "snapshots").iterdir())
    return task


def _fingerprint(path: Path) -> dict[str, str]:
    """Every file under ``path`` (or ``path`` itself) by its SHA-256: what a victim must keep."""
    if path.is_file():
        return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()}
    return {str(item.relative_to(path)): hashlib.sha256(item.read_bytes()).hexdigest()
            for item in sorted(path.rglob("*")) if item.is_file()}


def _plant(task: ResearchTask, relative: str, victims: Path) -> Path:
    """Replace ``relative`` in the task by a link to a copy outside it (a fresh file when it did not exist)."""
    inside = task.directory / relative
    victim = victims / relative.replace("/", "_").strip(".") / inside.name
    victim.parent.mkdir(parents=True)
    if inside.is_dir():
        shutil.copytree(inside, victim)
        shutil.rmtree(inside)
    elif inside.exists():
        shutil.copy2(inside, victim)
        inside.unlink()
    else:
        victim.write_bytes(b"victim: must stay as it is\n")
    inside.symlink_to(victim, target_is_directory=victim.is_dir())
    return victim


def _snapshot_dir(task: ResearchTask) -> str:
    return f"snapshots/{sorted(p.name for p in task.snapshots.iterdir())[0]}"


PARTS = [".lock", "trace.jsonl", "request.json", "artifacts", "artifacts/brief.json", "snapshots", "SNAPSHOT",
         "memory.sqlite", "knowledge.sqlite", "policy.md", "memory.sqlite-wal"]


@pytest.mark.parametrize("part", PARTS)
async def test_a_planted_link_is_refused_on_resume_and_its_target_is_untouched(
        part: str, tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """WF-3, WF-8, issue 16 item 2: each part of a task folder replaced by a link (the lock, the trace, the
    request, the artifacts folder and brief, the snapshots folder and one snapshot, both SQLite stores and
    SQLite's own -wal file, the sample document) makes the resume refuse with RESEARCH_UNSAFE_TASK_DIRECTORY;
    nothing is written through the link."""
    task = await _stopped_task(base, model)
    relative = _snapshot_dir(task) if part == "SNAPSHOT" else part
    victim = _plant(task, relative, tmp_path / "victims")
    before = _fingerprint(victim)
    resumed = ScriptedModel()
    with pytest.raises(ResearchError) as caught:
        await run("multi-source", None, base, resumed, directory=task.directory)
    assert caught.value.code == "RESEARCH_UNSAFE_TASK_DIRECTORY"
    assert Path(relative).name in caught.value.message
    assert _fingerprint(victim) == before
    assert resumed.calls == {}
    assert not (task.directory / "artifacts" / "brief.json").is_file() or part == "artifacts/brief.json"


async def test_verify_refuses_a_task_folder_with_a_link(tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """WF-13, issue 16 item 2: ``verify`` reads nothing through a planted link either."""
    from ditto.workflows.research import verify_task

    task, result = await run("multi-source", REQUEST, base, model)
    assert result.status == "completed" and verify_task(task.directory) == []
    _plant(task, _snapshot_dir(task), tmp_path / "victims")
    problems = verify_task(task.directory)
    assert problems and all("is a symbolic link" in problem for problem in problems)
    (task.directory / _snapshot_dir(task)).unlink()
    brief_victim = _plant(task, "artifacts/brief.json", tmp_path / "victims2")
    brief_victim.write_text("not read", encoding="utf-8")
    assert verify_task(task.directory) == ["artifacts/brief.json is a symbolic link (links are not followed)"]


async def test_links_planted_after_the_check_are_not_written_through(tmp_path: Path, base: Path,
                                                                     model: ScriptedModel) -> None:
    """WF-3, issue 16 item 2: a link that appears after the folder was checked (a race) is still never
    followed: the lock, the trace, a snapshot and the artifacts folder are refused, and a file replaced by a
    link is replaced whole (the rename swaps the link itself) instead of being written through."""
    task = await _stopped_task(base, model)
    opened = open_task(task.directory)
    victims = tmp_path / "victims"
    lock_victim = _plant(opened, ".lock", victims)
    lock_before = lock_victim.read_bytes()
    with pytest.raises(ResearchError) as caught:
        TaskLock(opened.directory).acquire()
    assert caught.value.code == "RESEARCH_UNSAFE_TASK_DIRECTORY"
    trace_victim = _plant(opened, "trace.jsonl", victims)
    trace_before = trace_victim.read_bytes()
    with pytest.raises(ResearchError):
        opened.trace({"stage": "x"})
    snapshot_victim = _plant(opened, "snapshots", victims)
    with pytest.raises(ResearchError):
        opened.save_snapshot(b"new bytes")
    with pytest.raises(ResearchError):
        snapshot_text(opened.snapshots / next(iter(snapshot_victim.iterdir())).name)
    brief_victim = _plant(opened, "artifacts/brief.json", victims)
    atomic_write(opened.artifacts / "brief.json", b"{}")
    assert not (opened.artifacts / "brief.json").is_symlink()
    artifacts_victim = _plant(opened, "artifacts", victims)
    artifacts_before = _fingerprint(artifacts_victim)
    with pytest.raises(ResearchError):
        atomic_write(opened.artifacts / "brief.json", b"[]")
    assert lock_victim.read_bytes() == lock_before and lock_before
    assert trace_victim.read_bytes() == trace_before and trace_before
    assert not (snapshot_victim / hashlib.sha256(b"new bytes").hexdigest()).exists()
    assert brief_victim.read_bytes() == b"victim: must stay as it is\n"
    assert _fingerprint(artifacts_victim) == artifacts_before


async def test_a_lock_link_never_truncates_its_target(tmp_path: Path, base: Path, model: ScriptedModel) -> None:
    """WF-8, issue 16 item 2 (the reported attack): a ``.lock`` linked to a file outside the task used to be
    truncated by the resume; now the file keeps every byte."""
    task = await _stopped_task(base, model)
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"do not truncate me\n" * 100)
    (task.directory / ".lock").unlink()
    (task.directory / ".lock").symlink_to(precious)
    with pytest.raises(ResearchError):
        TaskLock(task.directory).acquire()
    with pytest.raises(ResearchError):
        check_task_directory(task.directory)
    assert precious.read_bytes() == b"do not truncate me\n" * 100


async def test_a_special_file_in_place_of_a_task_file_is_refused(base: Path, model: ScriptedModel) -> None:
    """WF-3, issue 16 item 2: a FIFO planted as ``trace.jsonl`` (which would block a writer) is refused."""
    import os

    task = await _stopped_task(base, model)
    (task.directory / "trace.jsonl").unlink()
    os.mkfifo(task.directory / "trace.jsonl")
    with pytest.raises(ResearchError) as caught:
        open_task(task.directory)
    assert caught.value.code == "RESEARCH_UNSAFE_TASK_DIRECTORY" and "trace.jsonl" in caught.value.message


def test_a_new_task_is_never_made_through_a_link(tmp_path: Path) -> None:
    """WF-3, issue 16 item 2: ``create_task(directory=...)`` refuses a directory that is a link, or that holds a
    (dangling) ``request.json`` link, with RESEARCH_UNSAFE_TASK_DIRECTORY; the link's target stays empty."""
    from ditto.workflows.research import create_task

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere, target_is_directory=True)
    (tmp_path / "dangling").mkdir()
    (tmp_path / "dangling" / "request.json").symlink_to(tmp_path / "nowhere.json")
    for target in ("linked", "dangling"):
        with pytest.raises(ResearchError) as caught:
            create_task({"entry": "document-search", "question": "q"}, directory=tmp_path / target)
        assert caught.value.code == "RESEARCH_UNSAFE_TASK_DIRECTORY"
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "nowhere.json").exists()
