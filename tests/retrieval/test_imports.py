"""RETRIEVAL is an optional package: core imports never load it (SPEC §4 preamble, RET-1)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["ditto", "ditto.worker", "ditto.worker.memory", "ditto.worker.context"])
def test_core_imports_do_not_load_retrieval(module: str) -> None:
    """RET-1: `import ditto`, `ditto.worker` and `ditto.worker.memory` never import `ditto.retrieval`."""
    code = (f"import json, sys, {module}\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('ditto.retrieval'))))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout) == []


def test_retrieval_import_is_light_and_registers_nothing() -> None:
    """RET-2, issue 18: importing ditto.retrieval loads no backend engine, no embedding runtime (torch) and no
    MEMORY implementation."""
    # `import ditto` itself loads the core workers (MEMORY included, as the seed's root entry
    # exports createMemoryWorker); what matters is what ditto.retrieval adds on top of that.
    code = ("import json, sys, ditto\n"
            "before = set(sys.modules)\n"
            "import ditto.retrieval\n"
            "added = set(sys.modules) - before\n"
            "print(json.dumps([m for m in ('bm25s', 'jieba', 'pymilvus', 'psycopg', 'torch', 'sentence_transformers',"
            " 'ditto.worker.memory.sqlite_store')"
            " if m in added or (m != 'ditto.worker.memory.sqlite_store' and m in sys.modules)]))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout) == []
