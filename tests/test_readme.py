"""The README's commands and examples work as written (WF-1, WF-2, WF-13, RT-1, RT-7).

The first command is the main job: a research task over the sample documents and both knowledge
bases with the built-in model, offline. Its brief must verify.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _first_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert block is not None
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_the_main_job_and_the_tests() -> None:
    """The two commands: the research job, then the test suite (run by .ci/run)."""
    assert _first_commands() == ["scripts/research", "scripts/test"]
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_main_job_produces_a_verified_brief(tmp_path: Path) -> None:
    """WF-2/WF-13: scripts/research completes offline, cites this task's sample values, and verifies."""
    done = subprocess.run([str(ROOT / "scripts" / "research"), "--base-dir", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    result = printed["result"]
    assert result["status"] == "completed"
    brief = json.loads(Path(result["brief"]).read_text(encoding="utf-8"))
    kinds = {evidence["sourceType"] for evidence in brief["evidence"]}
    assert kinds == {"document", "knowledge-internal", "knowledge-external"}
    policy = (Path(printed["directory"]) / "policy.md").read_text(encoding="utf-8")
    numbers = set(re.findall(r"\d+", policy))
    quoted = " ".join(evidence["quote"] for evidence in brief["evidence"])
    assert numbers & set(re.findall(r"\d+", quoted)), "the brief must quote this task's random values"
    verified = subprocess.run([sys.executable, "-m", "ditto", "verify", printed["directory"]],
                              capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_python_examples_run(index: int, tmp_path: Path) -> None:
    """Each Python example in the README runs in a fresh folder without raising; the research one (WF-1,
    WF-11) finds what it asks on the sample data with the built-in model, as a reader would expect."""
    code = _python_blocks()[index]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    if "ResearchRequest" in code:
        assert done.stdout.startswith("completed"), done.stdout
