"""The ``ditto`` executable as a user runs it: exit statuses, what stdout holds, and the README's sample task
with the real built-in model (WF-2, WF-7, WF-11, WF-13, WF-14).

Issue 15, "Tests that catch the bug" (CLI). Every test starts the installed ``ditto`` console script
(the one next to the test's Python) as a child process, with this checkout's ``src`` first on its path;
nothing is scripted or patched, so the model is ``builtin:extractive`` and the sources are the task's own
sample files. The planted bugs these catch: a ``partial`` result exiting 1, ``verify``'s usage errors
exiting 1, ``--json`` ignored on a terminal (indented JSON, progress lines), a refused request exiting 0
or printing nothing to parse.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.research.cli import ROOT, cli_env

DITTO = Path(sys.executable).parent / "ditto"
#: The README's sample task (scripts/research without its setup step).
SAMPLE = ["research", "multi-source", "--sources", "documents,knowledge", "--knowledge", "both"]


@pytest.fixture(autouse=True)
def _installed() -> None:
    """scripts/setup installs the console script; without it these tests fail, they never skip."""
    assert DITTO.exists(), f"{DITTO} is missing: run scripts/setup"


def ditto(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DITTO), *args], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=120)


def one_json_line(stdout: str) -> dict[str, Any]:
    lines = stdout.splitlines()
    assert len(lines) == 1, f"stdout must be exactly one line of JSON: {stdout!r}"
    parsed: dict[str, Any] = json.loads(lines[0])
    return parsed


def test_the_readme_sample_task_completes_with_the_builtin_model_and_verifies(tmp_path: Path) -> None:
    """WF-11, WF-13 (issue 15, end to end through the real built-in model): the README's sample task run by
    the real ditto executable completes (exit 0), quotes this task's own drawn sample values from documents
    and both knowledge bases, and `ditto verify` on its folder passes (exit 0, ok, no problems)."""
    done = ditto(*SAMPLE, "--base-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    result = one_json_line(done.stdout)
    assert result["result"]["status"] == "completed"
    directory = Path(result["directory"])
    brief = json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    assert brief["model"]["provider"] == "builtin:extractive"
    knowledge = (directory / "internal-knowledge.json").read_text(encoding="utf-8")
    days = re.search(r"retained for (\d+) days", knowledge)
    assert days is not None
    quotes = [item["quote"] for item in brief["evidence"]]
    assert any(f"{days.group(1)} days" in quote for quote in quotes), quotes
    assert {item["sourceType"] for item in brief["evidence"]} == {"document", "knowledge-internal",
                                                                   "knowledge-external"}
    verified = ditto("verify", str(directory))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = one_json_line(verified.stdout)
    assert (report["directory"], report["ok"], report["problems"]) == (str(directory), True, [])


def test_a_partial_result_exits_0(tmp_path: Path) -> None:
    """WF-7, WF-14 (issue 15, partial exits 0): a failed source with --allow-partial and valid evidence from
    the others is "partial", a brief is written, and the exit status is 0 (the brief is usable)."""
    done = ditto("research", "multi-source", "--sources", "documents,knowledge", "--knowledge", "external",
                 "--kb", str(tmp_path / "missing.sqlite"), "--allow-partial", "--question",
                 "How long are database backups retained?", "--base-dir", str(tmp_path / "tasks"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = one_json_line(done.stdout)["result"]
    assert result["status"] == "partial"
    assert [source["source"] for source in result["failedSources"]] == ["knowledge-external"]
    assert Path(result["brief"]).is_file()


def test_verify_usage_errors_exit_2(tmp_path: Path) -> None:
    """WF-13, WF-14 (issue 15, verify usage error exits 2): no folder, two folders or an unknown option exit 2
    with the usage on stderr and nothing on stdout; a path the command cannot use (longer than any file
    system allows) exits 2 with its one JSON line (ok false). Exit 1 stays for "checked, and something does
    not match", such as a folder without a brief."""
    for args in ([], [str(tmp_path), str(tmp_path)], ["--bogus", str(tmp_path)]):
        refused = ditto("verify", *args)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert refused.stdout == "" and "Usage" in refused.stderr and "Traceback" not in refused.stderr
    unusable = "x" * 5000
    refused = ditto("verify", unusable, cwd=tmp_path)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    report = one_json_line(refused.stdout)
    assert (report["directory"], report["ok"], report["problems"]) == (
        unusable, False, ["the task directory is not a usable path"])
    empty = tmp_path / "empty"
    empty.mkdir()
    mismatch = ditto("verify", str(empty))
    assert mismatch.returncode == 1
    report = one_json_line(mismatch.stdout)
    assert (report["directory"], report["ok"], report["problems"]) == (
        str(empty), False, ["artifacts/brief.json is missing"])


def test_a_refused_request_exits_non_zero_with_the_result_json(tmp_path: Path) -> None:
    """WF-2, WF-14 (issue 15, refused request): a request the workflow refuses (a tenant with a colon, a blank
    question) exits 2 with one JSON line on stdout: status failed and the error's code and message; no task
    folder is made."""
    for args in (["--tenant", "a:b"], ["--question", "   "]):
        done = ditto("research", "document-search", *args, "--base-dir", str(tmp_path / "tasks"))
        assert done.returncode == 2, (args, done.stdout, done.stderr[-2000:])
        output = one_json_line(done.stdout)
        assert output["directory"] is None
        assert output["result"]["status"] == "failed"
        assert output["result"]["error"]["code"] == "RESEARCH_INVALID_INPUT" and output["result"]["error"]["message"]
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "tasks").exists()


def on_a_terminal(*args: str) -> str:
    """Run ditto with stdin, stdout and stderr on one pseudo-terminal; everything it wrote, newlines as \\n."""
    import pty

    master, slave = pty.openpty()
    env = {**cli_env(), "COLUMNS": "120", "TERM": "xterm"}
    process = subprocess.Popen([str(DITTO), *args], cwd=ROOT, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        process.wait(timeout=120)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_json_on_a_terminal_prints_exactly_one_line(tmp_path: Path) -> None:
    """WF-14 (issue 15, --json on a terminal): under a pty, --json prints exactly one line, the result JSON,
    and nothing else (no progress display, no "brief:" summary); without --json the same terminal gets the
    indented JSON, which shows the pty really is a terminal to the program."""
    text = on_a_terminal("research", "document-search", "--json", "--base-dir", str(tmp_path / "a"))
    lines = [line for line in text.split("\n") if line]
    assert len(lines) == 1, text
    result = json.loads(lines[0])
    assert result["result"]["status"] == "completed" and set(result) == {"directory", "result"}
    pretty = on_a_terminal("research", "document-search", "--base-dir", str(tmp_path / "b"))
    assert '\n  "directory": ' in pretty and "brief: " in pretty, pretty[-2000:]
