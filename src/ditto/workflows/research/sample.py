"""The generated sample material of a task (seed 004: random values so a brief provably quotes *this* task).

Each new task directory gets its own retention days and backup interval, drawn
at random, written into ``policy.md`` (documents), ``internal-knowledge.json``
(internal knowledge, imported through MEMORY.WRITE) and ``knowledge.sqlite``
(an external SQLite FTS5 knowledge base). Sample material of a kind is written
only when the request names no source of that kind.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .entries import Entry, entry_spec

__all__ = [
    "KB_CONTENT_COLUMN",
    "KB_TABLE",
    "SAMPLE_TENANT",
    "SAMPLE_VOCABULARY",
    "SampleValues",
    "default_question",
    "draw_sample_values",
    "write_internal_knowledge",
    "write_knowledge_base",
    "write_policy",
]

SAMPLE_TENANT: Final = "acme"
#: The FTS5 table and content column of a knowledge base file (sample or the caller's own).
KB_TABLE: Final = "knowledge"
KB_CONTENT_COLUMN: Final = "content"
#: The controlled vocabulary rewrite/expand use when the caller gives none: what the sample index supports.
SAMPLE_VOCABULARY: Final = (
    "backup retention period",
    "backup interval",
    "backup restore procedure",
    "data deletion schedule",
    "access review",
    "incident response",
)

def default_question(entry: Entry) -> str:
    """The sample question of an entry (the entry table's row): asked only on the generated sample data."""
    return entry_spec(entry).sample_question


@dataclass(frozen=True, slots=True)
class SampleValues:
    """The values drawn for one task."""

    retention_days: int
    backup_interval_hours: int


def draw_sample_values(rng: random.Random | None = None) -> SampleValues:
    """Random retention days (14-120) and backup interval (2-23 hours), never equal."""
    source = rng or random.SystemRandom()
    days = source.randint(14, 120)
    hours = source.randint(2, 23)
    while hours == days:
        hours = source.randint(2, 23)
    return SampleValues(days, hours)


def write_policy(path: Path, values: SampleValues) -> None:
    """``policy.md``: the sample document."""
    text = (
        "# Data protection policy\n"
        "\n"
        "## Backups\n"
        "\n"
        f"Production database backups run every {values.backup_interval_hours} hours.\n"
        f"Each backup is retained for {values.retention_days} days and then deleted.\n"
        "\n"
        "## Restores\n"
        "\n"
        "Only the operations team may restore a backup.\n"
        "Every restore is logged in the operations queue.\n"
        "\n"
        "## Access\n"
        "\n"
        "Access to production systems is reviewed every quarter.\n"
    )
    path.write_text(text, encoding="utf-8")


def internal_records(values: SampleValues) -> list[dict[str, str]]:
    return [
        {"key": "backup-retention",
         "text": f"Confirmed by the platform team: production database backups are retained for "
                 f"{values.retention_days} days."},
        {"key": "backup-interval",
         "text": f"Confirmed by the platform team: a production database backup runs every "
                 f"{values.backup_interval_hours} hours."},
        {"key": "on-call", "text": "The on-call rotation changes every Monday morning."},
    ]


def write_internal_knowledge(path: Path, values: SampleValues, tenant: str = SAMPLE_TENANT) -> None:
    """``internal-knowledge.json``: ``{"tenant", "records": [{"key", "text"}]}``, imported on new tasks."""
    document = {"tenant": tenant, "records": internal_records(values)}
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def knowledge_rows(values: SampleValues) -> list[tuple[str, str]]:
    return [
        ("Backup retention period",
         f"Backup retention period: each database backup is kept for {values.retention_days} days, then deleted."),
        ("Backup interval",
         f"Backup interval: the database backup job runs every {values.backup_interval_hours} hours."),
        ("Backup restore procedure",
         "Backup restore procedure: restores are requested through the operations queue and tested each quarter."),
        ("Data deletion schedule",
         "Data deletion schedule: customer data is deleted after the contract ends, on request of the account owner."),
        ("Access review", "Access review: access rights to production systems are reviewed every quarter."),
        ("Incident response",
         "Incident response: security incidents are reported to the security team within one hour."),
    ]


def write_knowledge_base(path: Path, values: SampleValues) -> None:
    """``knowledge.sqlite``: an FTS5 table ``knowledge(title, content)``, the external knowledge base."""
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute(f"CREATE VIRTUAL TABLE {KB_TABLE} USING fts5(title, {KB_CONTENT_COLUMN})")
            connection.executemany(f"INSERT INTO {KB_TABLE}(title, {KB_CONTENT_COLUMN}) VALUES (?, ?)",
                                   knowledge_rows(values))
    finally:
        connection.close()
