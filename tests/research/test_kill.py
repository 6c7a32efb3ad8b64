"""A CLI process SIGKILLed at each stage boundary (and mid-stage) resumes to the same brief, calling nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.research.cli import ROOT, cli_env, output, research_args, run_cli, verify_args
from tests.research.helpers import write_knowledge_base

POINTS = ["after:request", "after:queries", "mid:evidence", "after:evidence", "after:brief"]


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("sources")
    docs = root / "docs"
    docs.mkdir()
    (docs / "policy.md").write_text("# Policy\n\nBackups are retained for 41 days.\nBackups run every 7 hours.\n",
                                    encoding="utf-8")
    kb = write_knowledge_base(root / "kb.sqlite", [("Retention", "Each backup is retained for 41 days.")])
    return ["--sources", "documents,knowledge", "--documents", str(docs), "--kb", str(kb),
            "--question", "How long are backups retained and how often do they run?"]


def _brief(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    data.pop("createdAt")
    return data


def _trace(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "trace.jsonl").read_text(encoding="utf-8").splitlines()]


def _start_paused(args: list[str], point: str) -> subprocess.Popen[str]:
    assert args[1:3] == ["-m", "ditto"]
    args = [args[0], "-m", "tests.research.paused", point, *args[3:]]
    process = subprocess.Popen(args, cwd=ROOT, env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    while True:
        line = process.stderr.readline()
        if not line:
            process.wait(timeout=30)
            raise AssertionError(f"the CLI ended before reaching {point} (exit {process.returncode})")
        if line.strip() == f"ditto-research-paused {point}":
            return process


def _kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture(scope="module")
def reference(sources: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = tmp_path_factory.mktemp("reference") / "task"
    done = run_cli(research_args("multi-source", *sources, "--directory", str(directory)))
    assert done.returncode == 0, done.stderr
    return _brief(directory)


@pytest.mark.parametrize("point", POINTS)
def test_kill_and_resume_gives_the_same_brief(point: str, sources: list[str], reference: dict[str, Any],
                                              tmp_path: Path) -> None:
    """WF-8, WF-2: SIGKILL at a stage boundary or mid-stage; --directory resumes to the same brief and calls no
    model or source again for the stages archived before the kill."""
    directory = tmp_path / "task"
    killed = _start_paused(research_args("multi-source", *sources, "--directory", str(directory)), point)
    killed_pid = killed.pid
    _kill(killed)
    assert not (directory / "artifacts" / "brief.json").exists()
    resumed = run_cli(research_args("multi-source", "--directory", str(directory)))
    assert resumed.returncode == 0, resumed.stderr
    assert output(resumed)["result"]["status"] == "completed"
    assert _brief(directory) == reference
    records = _trace(directory)
    after = [r for r in records if r["pid"] != killed_pid]
    before = [r for r in records if r["pid"] == killed_pid]
    assert before and after
    queries_asked = [r for r in records if r.get("step") == "choose-queries"]
    assert len(queries_asked) == 1  # asked exactly once over both processes
    if point != "after:request":
        assert not [r for r in after if r.get("step") == "choose-queries"]
        assert not [r for r in after if r["stage"] == "request" and r["node"] == "MEMORY.WRITE"]
    if point in ("after:evidence", "after:brief"):
        assert not [r for r in after if r["node"] in ("INFER.SAMPLE", "RETRIEVAL.SEARCH")]
    if point == "after:brief":
        assert not [r for r in after if r["node"] == "MEMORY.WRITE"]
    if point == "mid:evidence":  # the unfinished stage runs again; the archived ones do not
        assert [r for r in after if r["node"] == "RETRIEVAL.SEARCH"]
    verified = run_cli(verify_args(directory))
    assert verified.returncode == 0, verified.stdout


def test_second_controller_is_refused(sources: list[str], tmp_path: Path) -> None:
    """WF-8: while one process runs a task, a second one resuming the same directory is refused."""
    directory = tmp_path / "task"
    running = _start_paused(research_args("multi-source", *sources, "--directory", str(directory)),
                            "after:queries")
    try:
        second = run_cli(research_args("multi-source", "--directory", str(directory)))
        assert second.returncode == 1
        result = output(second)["result"]
        assert result["status"] == "failed" and result["error"]["code"] == "RESEARCH_TASK_LOCKED"
    finally:
        _kill(running)
    third = run_cli(research_args("multi-source", "--directory", str(directory)))
    assert third.returncode == 0, third.stderr
