"""examples/infer.py runs offline with the built-in model and prints the documented choices."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "examples" / "infer.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


async def test_example_chooses_queries_excerpts_and_answers_offline() -> None:
    """INF-1, INF-2, INF-3, INF-6, WF-11: the example's calls all go to builtin:extractive, no network or key."""
    done = await asyncio.to_thread(run_example)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["queries"] == ["backup retention", "office hours"]
    assert summary["excerpts"] == [{"sourceId": "handbook#retention",
                                    "quote": "Nightly backups are kept for 35 days, then deleted automatically."}]
    assert summary["unanswerable"] == []
    assert summary["chat"] == "Audit logs are kept for one year."
    assert summary["usage"]["inputTokens"] > 0 and summary["usage"]["outputTokens"] > 0
    assert summary["counters"]["builtin:extractive/extractive"]["calls"] == 4
