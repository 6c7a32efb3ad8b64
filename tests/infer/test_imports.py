"""INFER is a core worker: importing it loads no optional or heavy library."""

from __future__ import annotations

import json
import subprocess
import sys


def test_import_infer_loads_no_retrieval_sdk_or_schema_library() -> None:
    """INF-3: ``import ditto.worker.infer`` loads neither ditto.retrieval, bm25s, jieba, the openai SDK,
    jsonschema nor httpx; the built-in model answers a schema task without retrieval's dependencies."""
    code = (
        "import asyncio, json, sys\n"
        "from ditto.worker.infer import ExcerptPassage, ExcerptTask, create_infer_client, response_format, "
        "task_messages\n"
        "watched = ('ditto.retrieval', 'bm25s', 'jieba', 'openai', 'jsonschema', 'httpx')\n"
        "loaded = [m for m in watched if m in sys.modules]\n"
        "task = ExcerptTask(question='backups kept',\n"
        "                   passages=[ExcerptPassage(source_id='a', text='Backups are kept.')])\n"
        "result = asyncio.run(create_infer_client().reasoning.sample(messages=task_messages(task), "
        "response_format=response_format(task)))\n"
        "after = [m for m in ('ditto.retrieval', 'bm25s', 'jieba', 'openai') if m in sys.modules]\n"
        "print(json.dumps([loaded, after, result.parsed]))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, after, parsed = json.loads(completed.stdout)
    assert loaded == [] and after == []
    assert parsed == {"excerpts": [{"sourceId": "a", "quote": "Backups are kept."}]}
