"""Which source kinds exist: the built-in names and the sources an application registered.

This module knows names only, so the request can check its ``sources``
without importing any source (and without a cycle); the source classes are
put together in :func:`ditto.workflows.research.sources.source_specs`.

Example::

    register_source(SourceSpec(kind="notes", source_type="notes", prefix="note", create=NotesSource))
    registered_kinds()   # ('documents', 'knowledge', 'web', 'notes')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "BUILTIN_KINDS",
    "BUILTIN_PREFIXES",
    "BUILTIN_SOURCE_TYPES",
    "SourceSpec",
    "custom_specs",
    "register_source",
    "registered_kinds",
    "unregister_source",
]

BUILTIN_KINDS: Final = ("documents", "knowledge", "web")
BUILTIN_SOURCE_TYPES: Final = ("document", "knowledge-internal", "knowledge-external", "web")
BUILTIN_PREFIXES: Final = ("doc", "int", "ext", "web")
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


def _always(_request: Any) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A source: the request ``kind`` that turns it on, its evidence ``source_type``, the ``prefix`` of
    its passage ids, ``create`` (the factory, called with a ``SourceSetup`` once per task run,
    returning a ``ResearchSource``) and ``wanted`` (does this request read it, beyond naming the kind)."""

    kind: str
    source_type: str
    prefix: str
    create: Callable[[Any], Any]
    wanted: Callable[[Any], bool] = field(default=_always)

    def __post_init__(self) -> None:
        for name in (self.kind, self.source_type, self.prefix):
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ValueError("source kind, type and prefix are 1-32 lower-case letters, digits or '-'")
        if not callable(self.create) or not callable(self.wanted):
            raise ValueError("a source spec needs callable create and wanted")


_CUSTOM: dict[str, SourceSpec] = {}


def register_source(spec: SourceSpec) -> None:
    """Add a source kind; it is read after the built-ins, in registration order.

    Its ``source_type`` and ``prefix`` must be new; its ``kind`` may be new or a
    built-in one (then naming that kind reads it too).
    """
    if not isinstance(spec, SourceSpec):
        raise TypeError("register_source takes a SourceSpec")
    if spec.source_type in BUILTIN_SOURCE_TYPES or spec.source_type in _CUSTOM:
        raise ValueError(f"a source of type {spec.source_type!r} is already registered")
    if spec.prefix in BUILTIN_PREFIXES or any(other.prefix == spec.prefix for other in _CUSTOM.values()):
        raise ValueError(f"the passage id prefix {spec.prefix!r} is taken")
    _CUSTOM[spec.source_type] = spec


def unregister_source(source_type: str) -> None:
    """Remove a registered source type (built-ins cannot be removed; unknown types are ignored)."""
    if source_type in BUILTIN_SOURCE_TYPES:
        raise ValueError("the built-in sources cannot be removed")
    _CUSTOM.pop(source_type, None)


def custom_specs() -> tuple[SourceSpec, ...]:
    """The registered (non built-in) sources, in registration order."""
    return tuple(_CUSTOM.values())


def registered_kinds() -> tuple[str, ...]:
    """Every request source kind, in reading order: the built-ins, then the registered ones."""
    return tuple(dict.fromkeys((*BUILTIN_KINDS, *(spec.kind for spec in _CUSTOM.values()))))
