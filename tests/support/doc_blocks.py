"""Run the Python blocks of a docs page like notebook cells (top-level ``await``, one namespace)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs"


def python_blocks(page: Path) -> list[str]:
    """The page's ```python blocks, in order."""
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL)


async def run_blocks(blocks: list[str], namespace: dict[str, Any], filename: str) -> None:
    """Run each block with top-level ``await`` allowed, keeping its names for the next block."""
    for block in blocks:
        code = compile(block, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        outcome = eval(code, namespace)  # the page's own code, compiled above
        if outcome is not None:
            await outcome
