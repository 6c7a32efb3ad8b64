"""INTERACTION data types (INT-1…INT-6): what callers send and what they get back.

The research workflow and applications depend on these shapes only, never on the
implementation modules. Every model is frozen and accepts camelCase or snake_case.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, Field, StrictInt, ValidationError, field_serializer, field_validator

from ...contracts import DittoModel, InvalidJson, ToolCall, check_json
from ...errors import DittoError, describe_validation_error

__all__ = [
    "INTERACTION_ERROR_CODES",
    "ActMcpInput",
    "ActToolInput",
    "InteractionError",
    "ListToolsInput",
    "Observation",
    "ObservationStatus",
    "ObserveInput",
    "SearchCandidate",
    "SearchEngine",
    "ToolCall",
    "ToolError",
    "ToolFailure",
    "ToolMessage",
    "ToolResult",
    "ToolSpec",
    "WebPage",
    "WebReadInput",
    "WebSearchInput",
    "WebSearchResult",
]

#: Every code an :class:`InteractionError` (or a ToolResult's ``error``) can carry.
INTERACTION_ERROR_CODES: Final = frozenset({
    "INTERACTION_INVALID_INPUT",
    "INTERACTION_UNKNOWN_TOOL",
    "INTERACTION_TOOL_FAILED",
    "INTERACTION_ORIGIN_NOT_ALLOWED",
    "INTERACTION_REDIRECT_REFUSED",
    "INTERACTION_RESPONSE_TOO_LARGE",
    "INTERACTION_UNSUPPORTED_CONTENT",
    "INTERACTION_TIMEOUT",
    "INTERACTION_CANCELLED",
})


class InteractionError(DittoError):
    """An INTERACTION failure with a stable ``code`` (one of :data:`INTERACTION_ERROR_CODES`).

    The message is written by this package: a tool's or server's own text never
    appears here (it is logged), except a :class:`ToolError` a tool raised for the model.
    """

    codes = INTERACTION_ERROR_CODES
    cancelled_code = "INTERACTION_CANCELLED"
    timeout_code = "INTERACTION_TIMEOUT"


M = TypeVar("M", bound=BaseModel)


def parse_interaction_input(model: type[M], input: Any) -> M:
    """``input`` as ``model`` (the model itself or a plain dict), or ``INTERACTION_INVALID_INPUT``.

    The one place the SDK and the web client turn a caller's input into a model, so
    both report a bad field with the same public message (never the offending value).
    """
    if isinstance(input, model):
        return input
    try:
        return model.model_validate(input)
    except ValidationError as error:
        raise InteractionError("INTERACTION_INVALID_INPUT", describe_validation_error(error)) from None


def _json_checked(value: Any) -> Any:
    try:
        check_json(value)
    except InvalidJson as error:
        raise ValueError(f"must be finite JSON ({error.reason})") from None
    return value


class ToolError(Exception):
    """Raise this from a tool when its message is meant for the model.

    Any other exception a tool raises is logged and reported with a fixed
    message, because its text may carry paths, hosts or secrets::

        def divide(a: float, b: float) -> float:
            if b == 0:
                raise ToolError("b must not be zero")
            return a / b
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolFailure(DittoModel):
    """Why a tool call did not succeed: a stable code and a public message."""

    code: str
    message: str


class ToolResult(DittoModel):
    """What a tool call produced (INTERACTION.ACT.TOOL / ACT.MCP).

    ``status == "error"`` means the tool ran and failed (it raised, or an MCP
    tool answered ``isError``, or the server went away mid-call): ``error.code``
    is then ``INTERACTION_TOOL_FAILED`` (or the code of the built-in web tool's
    failure) and ``content`` the public text the model may see.
    ``source`` names where the answer came from: ``tool:<name>`` or ``mcp:<server>/<name>``.
    """

    call_id: str = Field(min_length=1, max_length=256)
    name: str = Field(min_length=1, max_length=256)
    status: Literal["success", "error"]
    content: Any = None
    source: str = Field(min_length=1, max_length=512)
    error: ToolFailure | None = None

    @field_validator("call_id", "name", "source")
    @classmethod
    def _valid_text(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("must not contain NUL characters")
        _json_checked(value)
        return value

    # A ToolResult handed to OBSERVE may come from anywhere (a dict, the wire): it must be JSON that
    # the observation, CONTEXT and the HTTP transport can carry — finite, valid Unicode, bounded depth.
    _json_content = field_validator("content")(lambda value: _json_checked(value))


class ToolMessage(DittoModel):
    """The chat message an observation hands to a model: ``role`` is always ``"tool"``."""

    role: Literal["tool"] = "tool"
    content: str
    tool_call_id: str | None = None
    name: str | None = None


ObservationStatus = Literal["success", "error", "cancelled", "timeout", "rejected"]


class Observation(DittoModel):
    """A tool outcome as the working context stores it (INTERACTION.OBSERVE).

    ``status`` is ``"success"`` only when the tool succeeded; otherwise ``error``
    says why and ``message.content`` carries the same public text, so the
    application can decide whether a failed observation enters its working set.
    """

    message: ToolMessage
    source: str
    status: ObservationStatus
    call_id: str | None = None
    error: ToolFailure | None = None


class ToolSpec(DittoModel):
    """A tool as a model sees it: name, description and JSON schema of its arguments."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict)
    source: str


class ActToolInput(DittoModel):
    """INTERACTION.ACT.TOOL ``{"call": {"id", "name", "arguments"}}``."""

    call: ToolCall


class ActMcpInput(DittoModel):
    """INTERACTION.ACT.MCP ``{"server": "files", "call": {...}}``; ``server`` names a configured MCP server."""

    server: str = Field(min_length=1, max_length=128)
    call: ToolCall


class ListToolsInput(DittoModel):
    """INTERACTION.LIST_TOOLS ``{}`` (the worker's own tools) or ``{"server": "files"}`` (an MCP server's)."""

    server: str | None = Field(default=None, min_length=1, max_length=128)


class ObserveInput(DittoModel):
    """INTERACTION.OBSERVE ``{"result": ...}``.

    ``result`` is a :class:`ToolResult` (or its JSON), or the ``NodeResult`` of an
    ACT call, successful or not: a failed act becomes an observation whose status
    and error say why. ``call`` (optional) fills the call id and tool name when the
    act failed before producing a ToolResult.
    """

    result: Any
    call: ToolCall | None = None


SearchEngine = Literal["wikipedia", "brave"]

#: Most candidates a web search returns (seed 004: "最多返回 5 个候选").
MAX_SEARCH_RESULTS: Final = 5


class WebSearchInput(DittoModel):
    """INTERACTION.WEB.SEARCH ``{"query": "...", "engine"?: "wikipedia"|"brave", "limit"?: 1..5}``.

    ``engine`` defaults to the worker's configured engine (Wikipedia unless the
    application chose Brave); asking for an engine that is not configured fails,
    it never falls back to another one.
    """

    query: str = Field(min_length=1, max_length=400)
    engine: SearchEngine | None = None
    limit: StrictInt = Field(default=MAX_SEARCH_RESULTS, ge=1, le=MAX_SEARCH_RESULTS)


class SearchCandidate(DittoModel):
    """One search hit. The snippet only helps choose a page; read the page for evidence."""

    title: str
    url: str
    snippet: str = ""


class WebSearchResult(DittoModel):
    """The engine that answered, the query sent and at most five candidates in engine order."""

    engine: SearchEngine
    query: str
    candidates: tuple[SearchCandidate, ...] = ()


class WebReadInput(DittoModel):
    """INTERACTION.WEB.READ ``{"url": "https://allowed.example/page"}``."""

    url: str = Field(min_length=1, max_length=4096)


class WebPage(DittoModel):
    """A page read by INTERACTION.WEB.READ.

    ``raw`` is the body exactly as received (after transfer decoding), ``sha256``
    its hex digest; ``text`` the main text trafilatura extracted and ``lines`` the
    same text split on ``"\\n"``: line *n* (numbered from 1) is ``lines[n - 1]``,
    and ``"\\n".join(lines) == text``. ``final_url`` equals ``url`` because
    redirects are refused, never followed. On the JSON wire ``raw`` is base64.
    """

    url: str
    final_url: str
    status: int
    content_type: str
    raw: bytes
    sha256: str
    text: str
    lines: tuple[str, ...]

    @field_validator("raw", mode="before")
    @classmethod
    def _from_base64(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("raw must be base64 text or bytes") from None
        return value

    @field_serializer("raw")
    def _to_base64(self, value: bytes) -> str:
        return base64.b64encode(value).decode("ascii")

    def line_range(self, start: int, end: int) -> str:
        """Lines ``start``..``end`` (1-based, inclusive) joined by ``"\\n"``."""
        if start < 1 or end < start or end > len(self.lines):
            raise IndexError("line range outside the page text")
        return "\n".join(self.lines[start - 1:end])
