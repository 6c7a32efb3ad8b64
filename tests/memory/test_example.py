"""examples/memory.py runs end to end (MEM-1, MEM-2, MEM-3)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "examples" / "memory.py"), str(directory)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


async def test_example_writes_gets_searches_deletes_and_injects(tmp_path: Path) -> None:
    """MEM-1/MEM-2/MEM-3: the example's write/get/search/delete and injected provider give the documented output."""
    done = await asyncio.to_thread(run_example, tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["written"] == ["knowledge:acme:retention", "knowledge:acme:backup", "knowledge:globex:retention",
                                  "retrieval:req-1:queries"]
    assert summary["got"] == ["retrieval:req-1:queries"]
    searched = summary["searched"]
    assert [hit["key"] for hit in searched] == ["knowledge:acme:retention", "knowledge:acme:backup"]
    assert searched[0]["score"] > searched[1]["score"] > 0
    assert summary["exact"] == ["knowledge:acme:retention"]
    assert summary["deleted"] == 1
    assert summary["injected"] == [{"key": "knowledge:globex:retention", "namespace": "knowledge:globex:"}]
    assert (tmp_path / "memory.sqlite").exists()
