"""The web as a source, through INTERACTION nodes (filled in when INTERACTION lands)."""

from __future__ import annotations

from typing import Any

from ..types import FailedSource, QueryRecord
from ..verification import Passage

__all__ = ["web_group"]


async def web_group(controller: Any, queries: list[QueryRecord]) -> tuple[list[Passage], FailedSource | None]:
    """Search or read pages for ``queries``; a placeholder until the INTERACTION worker exists."""
    return [], FailedSource(source="web", code="UNKNOWN_NODE", message="no INTERACTION worker is registered")
