"""RETRIEVAL worker (optional package, seed 000): ``RETRIEVAL.SEARCH`` and its providers.

Nothing here is imported by ``import ditto`` or ``ditto.worker``; importing this
package registers nothing. Build a :class:`RetrievalTargetRegistry`, then use
:func:`create_retrieval` (direct SDK) or :func:`create_retrieval_worker`.
"""

from .defaults import merge_defaults, resolve_limit
from .errors import RETRIEVAL_ERROR_CODES, RetrievalError
from .registry import RetrievalTargetRegistry
from .sdk import RETRIEVAL_SEARCH, Retrieval, create_retrieval
from .types import (
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalDefaults,
    RetrievalEmbeddingDefaults,
    RetrievalExecutionContext,
    RetrievalHybridDefaults,
    RetrievalProviderRegistry,
    RetrievalQuery,
    RetrievalRerankDefaults,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTarget,
)
from .validation import parse_search_input, validate_search_output
from .worker import create_retrieval_worker, retrieval_search_node

__all__ = [
    "RETRIEVAL_ERROR_CODES",
    "RETRIEVAL_SEARCH",
    "Retrieval",
    "RetrievalCandidate",
    "RetrievalCandidateSource",
    "RetrievalDefaults",
    "RetrievalEmbeddingDefaults",
    "RetrievalError",
    "RetrievalExecutionContext",
    "RetrievalHybridDefaults",
    "RetrievalProviderRegistry",
    "RetrievalQuery",
    "RetrievalRerankDefaults",
    "RetrievalSearchInput",
    "RetrievalSearchOutput",
    "RetrievalSearchProvider",
    "RetrievalTarget",
    "RetrievalTargetRegistry",
    "create_retrieval",
    "create_retrieval_worker",
    "merge_defaults",
    "parse_search_input",
    "resolve_limit",
    "retrieval_search_node",
    "validate_search_output",
]
