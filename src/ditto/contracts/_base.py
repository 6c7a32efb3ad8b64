"""The pydantic base every public data type derives from.

Python code uses snake_case; the seed's JSON (and our HTTP wire format) uses
camelCase. ``populate_by_name`` plus a camelCase alias generator accepts both
spellings on input, and ``model_dump(by_alias=True)`` writes camelCase.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["MODEL_CONFIG", "DittoModel"]

MODEL_CONFIG = ConfigDict(
    alias_generator=to_camel,
    populate_by_name=True,
    frozen=True,
    extra="forbid",
    arbitrary_types_allowed=True,
)


class DittoModel(BaseModel):
    """Frozen, camelCase-aliased, strict about unknown fields."""

    model_config = MODEL_CONFIG

    def to_json_dict(self) -> dict[str, object]:
        """The seed's camelCase JSON shape, omitting unset optional fields."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
