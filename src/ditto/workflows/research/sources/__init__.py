"""The research sources: documents, internal and external knowledge, the web, and the port they share.

* :mod:`.base` — the port (:class:`~.base.ResearchSource`, its limits, its setup and hits);
* :mod:`.registry` — which kinds exist, and :func:`~.registry.register_source` for yours;
* :mod:`.catalog` — every source in reading order (:func:`~.catalog.sources_for` a request);
* :mod:`.documents`, :mod:`.knowledge`, :mod:`.web` — the built-in sources.

Importing this package imports only the registry (names, no source classes).
"""

from .registry import (
    BUILTIN_KINDS,
    BUILTIN_SOURCE_TYPES,
    SourceSpec,
    register_source,
    registered_kinds,
    unregister_source,
)

__all__ = ["BUILTIN_KINDS", "BUILTIN_SOURCE_TYPES", "SourceSpec", "register_source", "registered_kinds",
           "unregister_source"]
