"""examples/research.py runs end to end with the built-in model (WF-1, WF-4, WF-11, WF-12, WF-13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.research.cli import ROOT, cli_env


def test_example_researches_own_sources(tmp_path: Path) -> None:
    """WF-12, WF-4, WF-11, WF-13: own documents (ignore-glob), own MEMORY knowledge, an application target;
    every source type cited, the brief verifies."""
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "research.py"), str(tmp_path)], cwd=ROOT,
                          env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed" and summary["verified"] is True
    by_type = {item["sourceType"]: item for item in summary["evidence"]}
    # The sentence after it says "It …": a quote reads it with the sentence it points back to.
    assert by_type["document"]["quote"] == "The nightly export runs at 02:15 UTC.\nIt writes one file per customer."
    assert by_type["document"]["uri"] == (tmp_path / "docs" / "ops.md").resolve().as_uri()
    assert by_type["knowledge-internal"]["uri"] == "memory:knowledge:acme:export-owner"
    assert by_type["knowledge-external"]["uri"] == "retrieval:handbook#hb-12"
    assert all("noon" not in item["quote"] for item in summary["evidence"])
