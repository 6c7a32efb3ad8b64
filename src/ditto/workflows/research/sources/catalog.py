"""The catalogue of sources: the built-in four in reading order, then the registered ones.

Each built-in source is a class in its own module implementing
:class:`~.base.ResearchSource`; :func:`source_specs` lists them in reading
order, followed by the sources registered with :func:`~.registry.register_source`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .documents import DocumentsSource
from .knowledge import ExternalKnowledgeSource, InternalKnowledgeSource
from .registry import SourceSpec, custom_specs
from .web import WebSource

if TYPE_CHECKING:
    from ..types import ResearchRequest

__all__ = ["BUILTIN_SPECS", "source_specs", "sources_for"]


def _internal(request: ResearchRequest) -> bool:
    return request.knowledge in ("internal", "both")


def _external(request: ResearchRequest) -> bool:
    return request.knowledge in ("external", "both")


BUILTIN_SPECS = (
    SourceSpec(kind="documents", source_type="document", prefix="doc", create=DocumentsSource),
    SourceSpec(kind="knowledge", source_type="knowledge-internal", prefix="int", create=InternalKnowledgeSource,
               wanted=_internal),
    SourceSpec(kind="knowledge", source_type="knowledge-external", prefix="ext", create=ExternalKnowledgeSource,
               wanted=_external),
    SourceSpec(kind="web", source_type="web", prefix="web", create=WebSource),
)


def source_specs() -> tuple[SourceSpec, ...]:
    """Every source, in reading order: documents, internal and external knowledge, the web, then yours."""
    return (*BUILTIN_SPECS, *custom_specs())


def sources_for(request: ResearchRequest) -> tuple[SourceSpec, ...]:
    """The sources a request reads, in reading order."""
    return tuple(spec for spec in source_specs() if spec.kind in request.sources and spec.wanted(request))
