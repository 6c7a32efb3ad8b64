"""Data contracts shared across workers: plain, frozen, camelCase on the wire."""

from ._base import MODEL_CONFIG, DittoModel
from .context import Context, ContextItem, ContextPolicy, ContextPurpose, ContextSelection, Message, Reference
from .interaction import ToolCall
from .json import (
    NOT_JSON,
    FrozenDict,
    InvalidJson,
    JsonObject,
    JsonValue,
    check_json,
    freeze_json,
    frozen_json,
    js_json_dumps,
    thaw_json,
    try_frozen_json,
    valid_text,
)

__all__ = [
    "MODEL_CONFIG",
    "NOT_JSON",
    "Context",
    "ContextItem",
    "ContextPolicy",
    "ContextPurpose",
    "ContextSelection",
    "DittoModel",
    "FrozenDict",
    "InvalidJson",
    "JsonObject",
    "JsonValue",
    "Message",
    "Reference",
    "ToolCall",
    "check_json",
    "freeze_json",
    "frozen_json",
    "js_json_dumps",
    "thaw_json",
    "try_frozen_json",
    "valid_text",
]
