"""examples/interaction.py runs offline end to end (INT-1…INT-5)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example() -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(ROOT / "examples" / "interaction.py")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


async def test_example_runs_tools_mcp_search_and_read_offline() -> None:
    """INT-1/INT-2/INT-3/INT-4/INT-5: the example's tool, MCP, search and read steps give the documented output."""
    done = await asyncio.to_thread(run_example)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["tool"] == {"content": "1080", "source": "tool:convert_days"}
    assert summary["failures"] == {"toolError": "unit must be 'hours' or 'minutes'",
                                   "invalid": "INTERACTION_INVALID_INPUT"}
    assert summary["mcp"]["tools"] == ["define"]
    assert summary["mcp"]["content"] == {"result": "write-ahead logging: changes are written to a log before "
                                                   "they are applied"}
    web = summary["web"]
    assert web["candidates"] == ["Backup policy"]
    assert web["quote"].startswith("Customer records are kept for 45 days") and web["line"] >= 1
    assert len(web["sha256"]) == 64
    assert web["redirect"] == "INTERACTION_REDIRECT_REFUSED"
    assert web["otherOrigin"] == "INTERACTION_ORIGIN_NOT_ALLOWED"
    assert summary["context"] == ["observation:call-1"]
