"""``ditto verify <task-dir>``: re-check a finished brief offline against its snapshots.

Every snapshot's ``raw`` bytes hash to its folder name (and a web page's
``extracted.txt`` to the evidence's ``locator.extractedSha256``); for every evidence item
the snapshot folder exists, the quote is exactly the snapshot text at ``start:end``
and spans ``lineStart``-``lineEnd``; every citation names an evidence id; the
brief belongs to the task's request. Nothing is fetched or re-run.

Example::

    problems = verify_task("ditto-tasks/task-20260101-120000-ab12cd")
    assert problems == []
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from ...errors import describe_validation_error
from .errors import ResearchError
from .taskdir import check_task_directory, open_task, snapshot_text, task_path
from .types import Brief
from .verification import line_range

__all__ = ["verify_task"]


def verify_task(directory: Path | str) -> list[str]:
    """Every mismatch found, as one line each; an empty list means the brief checks out.

    A ``directory`` that is not a usable path raises ``ResearchError`` (``RESEARCH_INVALID_INPUT``).
    """
    root = task_path(directory)
    try:
        check_task_directory(root)  # nothing is read through a planted link, not even to hash it
    except ResearchError as error:
        return [error.message]
    except OSError:
        pass  # a missing folder: said below, as a missing brief
    try:
        data = json.loads((root / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ["artifacts/brief.json is missing"]
    except (OSError, ValueError):
        return ["artifacts/brief.json is not readable JSON"]
    try:
        brief = Brief.model_validate(data)
    except ValidationError as error:
        return [f"brief.json does not match the brief schema: {describe_validation_error(error, root='brief')}"]
    problems: list[str] = []
    try:
        task = open_task(root)  # also checks that request.json still hashes to its requestId
    except ResearchError as error:
        problems.append(f"request.json: {error.message}")
    else:
        if task.request_id != brief.request_id:
            problems.append("brief.json belongs to another request than request.json")
        elif (task.request.question, task.request.entry) != (brief.question, brief.entry):
            problems.append("brief.json's question or entry differs from its request")
    ids = [item.id for item in brief.evidence]
    if len(set(ids)) != len(ids):
        problems.append("evidence ids are not unique")
    for citation in brief.citations:
        if citation not in ids:
            problems.append(f"citation {citation} names no evidence")
    texts: dict[str, str | None] = {}
    snapshots = root / "snapshots"
    if snapshots.is_dir():
        for folder in sorted(snapshots.iterdir()):
            texts[folder.name] = _checked_text(folder, folder.name, problems, "snapshots")
    for item in brief.evidence:
        digest = item.snapshot_sha256
        folder = root / "snapshots" / digest
        if digest not in texts:
            texts[digest] = _checked_text(folder, digest, problems, item.id)
        text = texts[digest]
        if text is None:
            continue
        extracted_sha256 = (item.locator or {}).get("extractedSha256")
        if extracted_sha256 is not None and _extracted_digest(folder) != extracted_sha256:
            problems.append(f"{item.id}: the extracted text of snapshot {digest} changed (extractedSha256)")
            continue
        if not 0 <= item.start < item.end <= len(text):
            problems.append(f"{item.id}: offsets {item.start}-{item.end} are outside the snapshot")
            continue
        if text[item.start:item.end] != item.quote:
            problems.append(f"{item.id}: the quote is not the snapshot text at {item.start}-{item.end}")
            continue
        if line_range(text, item.start, item.end) != (item.line_start, item.line_end):
            problems.append(f"{item.id}: lines {item.line_start}-{item.line_end} do not match the quote's position")
    return problems


def _extracted_digest(folder: Path) -> str | None:
    try:
        return hashlib.sha256((folder / "extracted.txt").read_bytes()).hexdigest()
    except OSError:
        return None


def _checked_text(folder: Path, digest: str, problems: list[str], evidence_id: str) -> str | None:
    try:
        raw = (folder / "raw").read_bytes()
    except OSError:
        problems.append(f"{evidence_id}: snapshot {digest} is missing")
        return None
    if hashlib.sha256(raw).hexdigest() != digest:
        problems.append(f"{evidence_id}: snapshot {digest} does not hash to its name (changed bytes)")
        return None
    try:
        return snapshot_text(folder)
    except (OSError, UnicodeDecodeError):
        problems.append(f"{evidence_id}: snapshot {digest} text is unreadable")
        return None
