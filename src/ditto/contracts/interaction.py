"""The tool-call contract shared by INFER (a model asks for a call) and INTERACTION (it runs it).

It lives in ``ditto.contracts`` because both workers and the applications between them
speak it, and neither worker may import the other (seed 001 imports ``ToolCall`` from
the contracts module too).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, field_validator

from ._base import DittoModel
from .json import InvalidJson, check_json

__all__ = ["MAX_ARGUMENTS_TEXT_LENGTH", "MAX_TOOL_NAME_LENGTH", "ToolCall"]

#: Longest tool name accepted (OpenAI-compatible servers allow 64 characters).
MAX_TOOL_NAME_LENGTH = 64
#: Longest ``arguments`` accepted in their JSON-text form (as chat-completions servers send them).
MAX_ARGUMENTS_TEXT_LENGTH = 1024 * 1024


class ToolCall(DittoModel):
    """A request to run one tool: ``{"id": "call-1", "name": "add", "arguments": {"a": 1}}``.

    ``id`` ties the result and the observation back to the model's request;
    ``arguments`` is a finite JSON object (checked here, validated against the
    tool's own schema by INTERACTION before the tool runs). The JSON text an
    OpenAI-compatible server puts in ``function.arguments`` is accepted too and
    parsed (``'{"a": 1}'`` → ``{"a": 1}``).
    """

    id: str = Field(min_length=1, max_length=256)
    name: str = Field(min_length=1, max_length=MAX_TOOL_NAME_LENGTH)
    arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "name")
    @classmethod
    def _valid_text(cls, value: str) -> str:
        try:
            check_json(value)
        except InvalidJson as error:
            raise ValueError(error.reason) from None
        if "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value

    @field_validator("arguments", mode="before")
    @classmethod
    def _from_json_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if len(value) > MAX_ARGUMENTS_TEXT_LENGTH:
            raise ValueError(f"arguments text is longer than {MAX_ARGUMENTS_TEXT_LENGTH} characters")
        try:
            parsed = json.loads(value) if value.strip() else {}
        except (ValueError, RecursionError):
            raise ValueError("arguments text is not valid JSON") from None
        if not isinstance(parsed, dict):
            raise ValueError("arguments must be a JSON object")
        return parsed

    @field_validator("arguments")
    @classmethod
    def _finite_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            check_json(value)
        except InvalidJson as error:
            raise ValueError(f"arguments must be finite JSON ({error.reason})") from None
        return value
