"""Running ``ditto research`` / ``ditto verify`` as real child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = "tests.research.scripted:create_scripted_infer_worker"


#: The suite's own caches and its BM25-only research (tests/conftest.py): a child keeps them, so no test writes to
#: the user's cache folders or loads an embedding model it was not asked to.
_KEPT: frozenset[str] = frozenset({"DITTO_INDEX_CACHE_DIR", "DITTO_RESEARCH_EMBED", "DITTO_EMBEDDING_CACHE_DIR"})


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("DITTO_") or key in _KEPT}
    env["PYTHONPATH"] = f"{ROOT / 'src'}{os.pathsep}{ROOT}"
    env.update(extra or {})
    return env


def research_args(entry: str, *args: str, scripted: bool = True) -> list[str]:
    command = [sys.executable, "-m", "ditto", "research", entry, *args]
    if scripted:
        command += ["--worker", SCRIPTED]
    return command


def run_cli(command: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), cwd=ROOT, env=cli_env(env), capture_output=True, text=True, timeout=timeout)


def output(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"stdout must be one JSON line: {done.stdout!r} / {done.stderr[-2000:]}"
    parsed: dict[str, Any] = json.loads(lines[0])
    return parsed


def verify_args(directory: Path) -> list[str]:
    return [sys.executable, "-m", "ditto", "verify", str(directory)]
