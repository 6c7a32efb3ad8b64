"""Bounded field types shared by the config models and the worker contracts.

Each is a strict ``Annotated`` pydantic type (``True`` and ``1.0`` are not
integers), so a bound is written once and reads the same in the YAML schema,
in a worker's request models and in its error messages.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field, StrictInt

__all__ = [
    "MAX_LIMIT",
    "MAX_SAFE_INTEGER",
    "MAX_TTL_MS",
    "PositiveInt",
    "PositiveLimit",
    "RequestLimit",
    "SafePositiveInt",
    "TtlMs",
]

#: The seeds' ceiling for policy numbers and request budgets.
MAX_LIMIT: Final = 1_000_000
#: JavaScript's ``Number.MAX_SAFE_INTEGER``: the largest integer a seed's number holds exactly.
MAX_SAFE_INTEGER: Final = 2**53 - 1
#: The largest TTL Redis ``PX`` and JavaScript timers accept (a signed 32-bit millisecond count).
MAX_TTL_MS: Final = 2_147_483_647

#: A policy number: an integer 1–1,000,000.
PositiveLimit = Annotated[StrictInt, Field(ge=1, le=MAX_LIMIT)]
#: A request budget: an integer 0–1,000,000 (0 is a zero budget).
RequestLimit = Annotated[StrictInt, Field(ge=0, le=MAX_LIMIT)]
#: Any integer from 1 up.
PositiveInt = Annotated[StrictInt, Field(ge=1)]
#: A count that must stay exact in JavaScript: 1 … 2**53 - 1.
SafePositiveInt = Annotated[StrictInt, Field(ge=1, le=MAX_SAFE_INTEGER)]
#: A time-to-live in milliseconds: 1 … 2,147,483,647.
TtlMs = Annotated[StrictInt, Field(ge=1, le=MAX_TTL_MS)]
