"""Shared helpers of the research tests: run a task in-process, read what it left behind."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema

from ditto.runtime import WorkerDefinition
from ditto.workflows.research import ResearchOptions, ResearchResult, ResearchTask, brief_schema, run_research

ROOT = Path(__file__).resolve().parents[2]


async def run(entry: str, request: Mapping[str, Any] | None, base: Path, model: Any, *,
              options: ResearchOptions | None = None, directory: Path | None = None,
              env: Mapping[str, str] | None = None, workers: Sequence[WorkerDefinition] = ()
              ) -> tuple[ResearchTask, ResearchResult]:
    return await run_research(entry, request, base_dir=base, directory=directory,  # type: ignore[arg-type]
                              options=options or ResearchOptions(), env=env or {},
                              workers=[model.worker(), *workers])


def brief(task: ResearchTask) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((task.directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, brief_schema(), format_checker=jsonschema.FormatChecker())
    return data


def sample_values(task: ResearchTask) -> tuple[int, int]:
    """(retention days, backup interval hours) drawn for this task, read back from its sample files."""
    text = (task.directory / "internal-knowledge.json").read_text(encoding="utf-8")
    days = re.search(r"retained for (\d+) days", text)
    hours = re.search(r"every (\d+) hours", text)
    assert days and hours
    return int(days.group(1)), int(hours.group(1))


def quotes_this_task(data: Mapping[str, Any], task: ResearchTask) -> bool:
    days, hours = sample_values(task)
    quotes = " ".join(item["quote"] for item in data["evidence"])
    return f"{days} days" in quotes or f"{hours} hours" in quotes


def trace(task: ResearchTask) -> list[dict[str, Any]]:
    path = task.directory / "trace.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def source_and_model_calls(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Calls to a model or a source (not the checkpoint/cache stores)."""
    return [r for r in records if r["node"] in ("INFER.SAMPLE", "RETRIEVAL.SEARCH") or
            r["node"].startswith("INTERACTION.") or (r["node"] == "MEMORY.SEARCH" and r["stage"] == "evidence")]


def write_knowledge_base(path: Path, rows: Sequence[tuple[str, str]] = ()) -> Path:
    """An SQLite FTS5 knowledge base at ``path`` (table ``knowledge(title, content)``), the shape ``--kb`` reads."""
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        connection.execute("CREATE VIRTUAL TABLE knowledge USING fts5(title, content)")
        connection.executemany("INSERT INTO knowledge VALUES (?, ?)", rows)
        connection.commit()
    finally:
        connection.close()
    return path
