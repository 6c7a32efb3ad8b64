"""Turning inputs and outputs into JSON for the HTTP transport.

Pydantic models are written with their camelCase aliases and without unset
optional fields (the seed's JSON shape); read-only snapshots (FrozenDict,
tuples) become plain objects and arrays. Anything else is refused rather than
silently stringified, so a worker that returns, say, a socket gets a clear
``OUTPUT_NOT_SERIALIZABLE`` instead of a surprise on the other side.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

__all__ = ["NotSerializable", "dumps", "to_wire_value"]


class NotSerializable(TypeError):
    """The value has a part JSON cannot carry."""


def to_wire_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotSerializable("non-finite number")
        return value
    if isinstance(value, BaseModel):
        return to_wire_value(value.model_dump(by_alias=True, exclude_none=True))
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotSerializable("object keys must be strings")
            out[key] = to_wire_value(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_wire_value(item) for item in value]
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire_value(to_wire())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_wire_value({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    raise NotSerializable(f"{type(value).__name__} cannot be sent as JSON")


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
