"""Every Python block in docs/extending.md runs as written, in order, in one namespace.

The page is the extension guide of the one worker shape (RT-1, RT-3, RT-4: a definition, its node
descriptors, NodeResult statuses and error codes); if the API drifts, this test fails.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_extending_page_runs() -> None:
    """The minimal worker (and provider, when the page has one) behave as the page's assertions say."""
    blocks = _blocks(DOCS / "extending.md")
    assert len(blocks) >= 3
    # A real module so pydantic and dataclasses can resolve the page's annotations.
    module = types.ModuleType("ditto_docs_extending")
    sys.modules[module.__name__] = module
    try:
        for block in blocks:
            exec(compile(block, str(DOCS / "extending.md"), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
