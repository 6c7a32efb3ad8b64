"""``web_search`` and ``web_read`` as tools a model may call (``web_tools=True``).

They run the same guarded client as the WEB nodes, with the worker's options:
a model can ask for a page, never for a wider origin list or another tool. A
refusal (origin not allowed, redirect, too large) comes back as a ToolResult
with ``status="error"`` and that code, so the model can try something else.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ...signal import CancelSignal
from .tools import Tool, tool
from .web import WebClient

__all__ = ["web_tools"]


def web_tools(client: WebClient) -> list[Tool]:
    """The two web tools bound to ``client``."""

    async def web_search(query: str, engine: Literal["wikipedia", "brave"] | None = None,
                         limit: Annotated[int, Field(ge=1, le=5)] = 5,
                         signal: CancelSignal | None = None) -> dict[str, Any]:
        """Search the web for pages about a query; returns up to 5 candidates (title, url, snippet).

        Snippets only help choose a page: read the page before relying on it.
        """
        found = await client.search({"query": query, "engine": engine, "limit": limit}, signal=signal)
        return found.to_json_dict()

    async def web_read(url: str, signal: CancelSignal | None = None) -> dict[str, Any]:
        """Read one https page from an allowed site; returns its main text with numbered lines."""
        page = await client.read({"url": url}, signal=signal)
        return {"url": page.url, "finalUrl": page.final_url, "status": page.status,
                "contentType": page.content_type, "sha256": page.sha256,
                "lines": [{"line": number, "text": text} for number, text in enumerate(page.lines, start=1)]}

    return [tool(web_search), tool(web_read)]
