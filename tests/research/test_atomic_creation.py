"""Task creation is atomic and killed writes leave nothing behind (issue 16 item 11).

A child process creates a task (or writes into one) and is killed with a real
``SIGKILL`` at a chosen point: the child replaces one library function or
``os.rename`` / ``os.replace`` with a wrapper that kills the process there. The
shipped code has no hook for it. The parent then checks that the base folder
holds either no task or a complete one that runs, and that the next run
cleans what the kill left.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ditto.workflows.research import ResearchOptions, open_task, verify_task
from ditto.workflows.research.errors import ResearchError
from ditto.workflows.research.taskdir import create_task
from tests.research.cli import ROOT, cli_env
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

_CHILD = r'''
import os, signal, sys
from pathlib import Path
from ditto.workflows.research import taskdir

point, base, directory = sys.argv[1], Path(sys.argv[2]), sys.argv[3] or None

def die(*_args, **_kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

real_rename, real_replace = os.rename, os.replace
if point == "sample-written":       # the sample document and KB are written, nothing else
    real_kb = taskdir.write_knowledge_base
    taskdir.write_knowledge_base = lambda *a, **k: (real_kb(*a, **k), die())
elif point == "task-id-temp":       # .task-id's temporary file written, not yet renamed
    os.replace = lambda src, dst, **k: die() if dst == ".task-id" else real_replace(src, dst, **k)
elif point == "request-temp":       # request.json's temporary file written, not yet renamed
    os.replace = lambda src, dst, **k: die() if dst == "request.json" else real_replace(src, dst, **k)
elif point == "before-rename":      # the staging folder is complete, not yet in place
    os.rename = die
elif point == "after-rename":       # in place, the process dies before returning
    os.rename = lambda *a, **k: (real_rename(*a, **k), die())
taskdir.create_task({"entry": "document-search", "question": "How long are backups kept?"},
                    base_dir=base, directory=directory)
print("not killed")
'''

POINTS = ["sample-written", "task-id-temp", "request-temp", "before-rename", "after-rename"]


def _kill_during_creation(point: str, base: Path, directory: Path | None = None) -> None:
    base.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", _CHILD, point, str(base), str(directory or "")], cwd=ROOT,
                          env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr[-2000:])


def _visible(base: Path) -> list[Path]:
    return sorted(path for path in base.iterdir() if not path.name.startswith("."))


def _hidden(base: Path) -> list[str]:
    return sorted(path.name for path in base.iterdir() if path.name.startswith("."))


@pytest.mark.parametrize("point", POINTS)
async def test_a_kill_during_creation_leaves_no_task_or_a_complete_one(point: str, base: Path,
                                                                       model: ScriptedModel) -> None:
    """WF-3, WF-8, issue 16 item 11: killed at any point of create_task, the base folder holds either no task
    folder or one that opens and runs to a verified brief; the dead staging folder is removed by the next
    creation, which works."""
    _kill_during_creation(point, base)
    visible = _visible(base)
    if point == "after-rename":
        assert len(visible) == 1
        task = open_task(visible[0])
        _, result = await run("document-search", None, base, model, directory=task.directory)
        assert result.status == "completed"
    else:
        assert visible == []
        assert [name[:12] for name in _hidden(base)] == [".ditto-task-"]
    fresh = create_task({"entry": "document-search", "question": "How long are backups kept?"}, base_dir=base)
    assert _hidden(base) == []
    assert open_task(fresh.directory).request_id == fresh.request_id


@pytest.mark.parametrize("point", ["request-temp", "before-rename"])
def test_a_kill_during_creation_in_a_given_directory_leaves_it_usable(point: str, tmp_path: Path) -> None:
    """WF-8, issue 16 item 11: with ``directory=`` given, a kill leaves that directory missing (never
    half-made), and creating the task there again works."""
    target = tmp_path / "my-task"
    _kill_during_creation(point, tmp_path / "unused", target)
    assert not target.exists()
    task = create_task({"entry": "document-search", "question": "q"}, directory=target)
    assert task.directory == target.resolve() and (target / "request.json").is_file()


def test_a_staging_folder_swept_by_another_creation_is_made_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """WF-3, WF-8: two controllers creating tasks in one base folder at once: one's sweep of dead staging folders
    can take the other's new one, made but not yet locked, for a dead one and remove it; that creation makes
    another staging folder and finishes, and nothing is left behind."""
    from ditto.workflows.research import taskdir

    made: list[str] = []
    real_mkdtemp = taskdir.tempfile.mkdtemp

    def swept_once(*args: object, **kwargs: object) -> str:
        path = real_mkdtemp(*args, **kwargs)  # type: ignore[call-overload]
        made.append(path)
        if len(made) == 1:
            taskdir._remove_dead_staging(Path(path).parent)  # the other controller's sweep, before the lock
        return str(path)

    monkeypatch.setattr(taskdir.tempfile, "mkdtemp", swept_once)
    task = create_task({"entry": "document-search", "question": "How long are backups kept?"}, base_dir=tmp_path)
    assert len(made) == 2 and not Path(made[0]).exists()
    assert open_task(task.directory).request_id == task.request_id
    assert _hidden(tmp_path) == []


def test_a_half_made_directory_is_refused_clearly(tmp_path: Path) -> None:
    """WF-8, issue 16 item 11: a folder left half-made by an older version (task files, no request.json) is
    refused by open_task and by create_task, both saying it is half made."""
    half = tmp_path / "half"
    (half / "snapshots").mkdir(parents=True)
    (half / ".task-id").write_text("0123456789abcdef\n", encoding="ascii")
    with pytest.raises(ResearchError) as opened:
        open_task(half)
    assert opened.value.code == "RESEARCH_TASK_NOT_FOUND" and "half-made" in opened.value.message
    with pytest.raises(ResearchError) as created:
        create_task({"entry": "document-search", "question": "q"}, directory=half)
    assert created.value.code == "RESEARCH_INVALID_INPUT" and "half-made" in created.value.message


_WRITER = r'''
import os, signal, sys
from pathlib import Path
from ditto.workflows.research.taskdir import atomic_write, open_task

task = open_task(sys.argv[1])
real_replace = os.replace
os.replace = lambda src, dst, **k: os.kill(os.getpid(), signal.SIGKILL) if dst == sys.argv[2] else real_replace(
    src, dst, **k)
if sys.argv[2] == "raw":
    task.save_snapshot(b"a snapshot the kill interrupts")
else:
    atomic_write(task.artifacts / "brief.json", b"{}")
'''


def _kill_writer(directory: Path, name: str) -> None:
    done = subprocess.run([sys.executable, "-c", _WRITER, str(directory), name], cwd=ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]


@pytest.mark.parametrize("name", ["brief.json", "raw"])
async def test_temporary_files_of_a_killed_write_are_removed_on_the_next_run(name: str, base: Path,
                                                                             model: ScriptedModel) -> None:
    """WF-8, issue 16 item 11: a write killed between its temporary file and the rename leaves a ``.*.tmp``
    file; the next run removes it once it holds the task lock, and completes."""
    task, result = await run("document-search", None, base, model,
                             options=ResearchOptions(stop_after="queries"))
    assert result.status == "stopped"
    _kill_writer(task.directory, name)
    leftovers = [path for path in task.directory.rglob("*.tmp")]
    assert len(leftovers) == 1 and leftovers[0].name.startswith(f".{name}.")
    _, resumed = await run("document-search", None, base, ScriptedModel(), directory=task.directory)
    assert resumed.status == "completed"
    assert list(task.directory.rglob("*.tmp")) == []
    assert verify_task(task.directory) == []  # no empty snapshot folder left behind either
    assert json.loads((task.directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))["status"] == (
        "completed")
