"""Data contracts shared across workers: plain, frozen, camelCase on the wire."""

from ._base import MODEL_CONFIG, DittoModel
from .context import Context, ContextItem, ContextPurpose, ContextSelection, Message, Reference
from .interaction import ToolCall
from .json import FrozenDict, InvalidJson, JsonObject, JsonValue, check_json, freeze_json, js_json_dumps, thaw_json

__all__ = [
    "MODEL_CONFIG",
    "Context",
    "ContextItem",
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
    "js_json_dumps",
    "thaw_json",
]
