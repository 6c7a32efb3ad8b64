"""Issue 20: every file in examples/ runs as ``python examples/<name>.py`` and prints what it shows.

Each example is run in a fresh folder outside the checkout, its output parsed and checked for the
values the example is about. A new example without an entry here fails ``test_every_example_is_covered``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _context(out: dict[str, Any]) -> None:
    assert out["LOAD (a message, an item, a reference)"][0] == "message: Answer using the supplied evidence."
    assert out["UPDATE (replace goal, add an observation)"][1] == "goal: Explain the cache"
    assert out["cached scope: SELECT limit 1"] == ["evidence: Relevant source"]
    assert out["scope without a store"] == "STATE_STORE_UNAVAILABLE"
    assert out["deterministic_compress of 11 items to 8"][0] == "message: rules"
    assert len(out["deterministic_compress of 11 items to 8"]) == 8


def _retrieval(out: dict[str, Any]) -> None:
    assert [hit.split()[0] for hit in out["one line: search('agent memory')"]] == ["d1", "d3"]
    assert out["chinese: search('记忆迁移')"][0].startswith("d5 ")
    assert out["unknown target"] == "RETRIEVAL_TARGET_NOT_FOUND"
    assert out["SQLite FTS5: 'pasta'"][0].startswith("4 ")


def _memory(out: dict[str, Any]) -> None:
    assert out["searched"][0]["text"] == "Backups are kept for 35 days."
    assert out["deleted"] == 1


def _infer(out: dict[str, Any]) -> None:
    assert out["excerpts"][0]["quote"].startswith("Nightly backups are kept for 35 days")
    assert out["chat"]


def _interaction(out: dict[str, Any]) -> None:
    assert out["tool"] == {"content": "1080", "source": "tool:convert_days"}
    assert out["web"]["redirect"] == "INTERACTION_REDIRECT_REFUSED"
    assert out["mcp"]["tools"] == ["define"]


def _research(out: dict[str, Any]) -> None:
    assert out["status"] == "completed" and out["verified"] is True
    assert {evidence["sourceType"] for evidence in out["evidence"]} == {
        "document", "knowledge-internal", "knowledge-external"}


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "context.py": _context, "retrieval.py": _retrieval, "memory.py": _memory, "infer.py": _infer,
    "interaction.py": _interaction, "research.py": _research,
}
#: Not run here: a stdio MCP server (interaction.py starts it) and the Redis walk-through
#: (tests/context/test_chat.py runs it against a real redis-server).
ELSEWHERE = {"interaction_mcp_server.py", "chat_context.py"}


def run_example(path: Path, cwd: Path, python: str = sys.executable, env: dict[str, str] | None = None) -> Any:
    """Run one example; its stdout must be one JSON document."""
    done = subprocess.run([python, str(path)], capture_output=True, text=True, timeout=180, cwd=cwd,
                          env=env if env is not None else dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_every_example_is_covered() -> None:
    """The examples folder holds exactly the checked examples, the two run elsewhere and the YAML."""
    assert {path.name for path in EXAMPLES.glob("*.py")} == set(CHECKS) | ELSEWHERE
    assert (EXAMPLES / "ditto.yaml").is_file()


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_example_prints_what_it_shows(name: str, tmp_path: Path) -> None:
    """``python examples/<name>`` exits 0 and prints the results the example is about."""
    CHECKS[name](run_example(EXAMPLES / name, tmp_path))
