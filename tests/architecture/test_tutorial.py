"""Issue 20: docs/tutorial.md runs as written — its Python blocks in order in one session (printing
exactly the output shown under them), its research command, and its served worker (RT-6, RET-2,
CX-9, WF-1)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..support.ditto_serve import ditto_serve
from ..support.doc_blocks import DOCS, run_blocks

PAGE = DOCS / "tutorial.md"
FENCE = re.compile(r"```(\w*)\n(.*?)```", flags=re.DOTALL)


def _segments() -> list[tuple[str, str, str | None]]:
    """``(language, code, printed output or None)``: a bare fence right after a python block is its output."""
    fences = FENCE.findall(PAGE.read_text(encoding="utf-8"))
    segments: list[tuple[str, str, str | None]] = []
    for index, (language, code) in enumerate(fences):
        if language == "":
            continue
        following = fences[index + 1] if index + 1 < len(fences) else None
        output = following[1] if language == "python" and following is not None and following[0] == "" else None
        segments.append((language, code, output))
    return segments


def test_the_tutorial_has_its_five_steps() -> None:
    """The page goes index → search → context → research → serve, each with code."""
    text = PAGE.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings == ["1. Some notes to work on", "2. Index the folder and search it", "3. Keep a working context",
                        "4. Ask a research question", "5. Serve a worker"]
    assert [language for language, _code, _output in _segments()].count("python") == 5


async def test_the_tutorial_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block, in order, in an empty folder; printed output equals the page's output blocks."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "tutorial"}
    server: contextlib.ExitStack = contextlib.ExitStack()
    url = None
    with server:
        for language, code, expected in _segments():
            if language == "bash":
                for line in (line for line in code.splitlines() if line.strip()):
                    words = shlex.split(line)
                    if words[:2] == ["pip", "install"] or words[0] == "export":
                        continue  # the package check installs; the token is given to the server below
                    if words[:2] == ["ditto", "serve"]:
                        token = "change-me"
                        assert f"DITTO_TRANSPORT_HTTP_WORKER_TOKEN={token}" in code
                        workers = [words[i + 1] for i, word in enumerate(words) if word == "--worker"]
                        url, _process = server.enter_context(ditto_serve(workers, token))
                        continue
                    assert words[0] == "ditto", line
                    done = await asyncio.to_thread(
                        subprocess.run, [sys.executable, "-m", "ditto", *words[1:]], capture_output=True,
                        text=True, timeout=120, cwd=tmp_path, env=dict(os.environ))
                    assert done.returncode == 0, done.stderr[-2000:]
                    assert '"status": "completed"' in done.stdout or "completed" in done.stdout
                continue
            if url is not None:
                assert "http://127.0.0.1:8765" in code
                code = code.replace("http://127.0.0.1:8765", url)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                await run_blocks([code], namespace, str(PAGE))
            if expected is not None:
                assert printed.getvalue() == expected, code
    assert url is not None, "the serve step ran"
