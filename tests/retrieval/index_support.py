"""Shared pieces of the persistent-index tests: a deterministic embedder and small corpora on disk.

``WordHashEmbedder`` is a real, deterministic function (hashed bag of words, L2-normalised),
not a model: the tests that use it check the index's mechanics (dimensions, filters, add and
remove), never retrieval quality, which only the real weights may claim.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


class WordHashEmbedder:
    """Each lower-cased word adds 1 to one of ``dimensions`` buckets; the vector is normalised."""

    def __init__(self, dimensions: int = 16, model_id: str = "word-hash") -> None:
        self.dimensions = dimensions
        self.model_id = model_id
        self.calls = 0

    async def embed(self, contents: Sequence[Any], context: Any = None) -> list[list[float]]:
        self.calls += 1
        vectors = []
        for content in contents:
            vector = [0.0] * self.dimensions
            for word in re.findall(r"\w+", str(content).lower()):
                vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            vectors.append([x / norm if any(vector) else 1.0 / math.sqrt(self.dimensions) for x in vector])
        return vectors


DOCS = {
    "ops/backups.md": "# Backups\n\nBackups are kept for 30 days.\nThey run nightly at 02:00.\n\n"
                      "## Restore\n\nUse `ditto restore` to bring a backup back.\n",
    "ops/alerts.txt": "Alerts page the on-call engineer.\nEscalation happens after 15 minutes.\n",
    "guide/memory.md": "# Agent memory\n\nAgent memory keeps facts between sessions.\n\n"
                       "Garbage collection frees memory in runtimes.\n",
}


def write_docs(root: Path, docs: dict[str, str] | None = None) -> Path:
    for name, text in (DOCS if docs is None else docs).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def apply_changes(docs: Path, operations: Sequence[tuple[str, str, str]], after_each: Callable[[], object]) -> None:
    """Write (``"write"``) or delete each named file of ``docs`` in turn, calling ``after_each`` after each one."""
    for action, name, text in operations:
        path = docs / name
        if action == "write":
            path.write_text(text + "\n")
        elif path.exists():
            path.unlink()
        after_each()
