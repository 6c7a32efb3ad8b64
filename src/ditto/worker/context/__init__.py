"""The CONTEXT worker: LOAD, UPDATE, SELECT and COMPRESS a working context.

``create_context()`` is the direct SDK, ``create_context_worker()`` registers
the same implementation as four runtime nodes. Explicit requests compute on a
``context`` snapshot; ``scope`` requests read and write a cache through a
``ContextStateStore`` (Redis by default, ``create_redis_context_store``)::

    from ditto.worker.context import create_context

    context = create_context()
    working = await context.load({"sources": [{"role": "system", "content": "Answer with evidence."}]})
    chosen = await context.select({"context": working, "purpose": "infer", "limit": 8, "order": "context"})

Modules: ``types`` (error, request models, service protocols), ``config``
(options, policy, services, YAML and environment), ``sdk``, ``worker``, and the
algorithms ``items``, ``merge`` (LOAD/UPDATE), ``select``, ``compress``,
``rag``, ``stores``, ``queue``, ``flows``.
"""

from .compress import deterministic_compress, is_protected_context_item, run_compress
from .config import (
    REDIS_URL_ENV,
    ContextExecution,
    ContextOptions,
    context_options_from_config,
    create_context_execution,
    create_context_redis_client,
)
from .flows import run_rag_flow, run_skill_flow
from .inputs import context_scope_key
from .merge import run_load, run_update
from .queue import InProcessContextQueue, create_context_operation_queue
from .rag import RagStrategyPipeline, create_rag_strategy
from .retry import update_with_retry
from .sdk import ContextClient, create_context
from .select import default_select, run_select
from .stores import (
    InMemoryContextStore,
    RedisContextClient,
    RedisContextStore,
    create_in_memory_context_store,
    create_redis_context_store,
)
from .types import (
    CONTEXT_ERROR_CODES,
    ContextArgumentError,
    ContextCallOptions,
    ContextCompressor,
    ContextCompressRequest,
    ContextError,
    ContextFlowResult,
    ContextIngressItem,
    ContextLoadRequest,
    ContextOperationQueue,
    ContextPolicy,
    ContextScope,
    ContextSelector,
    ContextSelectRequest,
    ContextServices,
    ContextStateStore,
    ContextStrategy,
    ContextUpdateRequest,
    RagCandidate,
    RagStageInput,
    RagStrategy,
    ReferenceResolver,
    StoredContext,
    TokenEstimator,
)
from .worker import (
    context_compress_node,
    context_load_node,
    context_select_node,
    context_update_node,
    context_worker_from_env,
    create_context_worker,
)

#: Earlier names of the request models (the same classes); not part of ``__all__``.
ContextLoadInput = ContextLoadRequest
ContextUpdateInput = ContextUpdateRequest
ContextSelectInput = ContextSelectRequest
ContextCompressInput = ContextCompressRequest

__all__ = [
    "CONTEXT_ERROR_CODES",
    "REDIS_URL_ENV",
    "ContextArgumentError",
    "ContextCallOptions",
    "ContextClient",
    "ContextCompressRequest",
    "ContextCompressor",
    "ContextError",
    "ContextExecution",
    "ContextFlowResult",
    "ContextIngressItem",
    "ContextLoadRequest",
    "ContextOperationQueue",
    "ContextOptions",
    "ContextPolicy",
    "ContextScope",
    "ContextSelectRequest",
    "ContextSelector",
    "ContextServices",
    "ContextStateStore",
    "ContextStrategy",
    "ContextUpdateRequest",
    "InMemoryContextStore",
    "InProcessContextQueue",
    "RagCandidate",
    "RagStageInput",
    "RagStrategy",
    "RagStrategyPipeline",
    "RedisContextClient",
    "RedisContextStore",
    "ReferenceResolver",
    "StoredContext",
    "TokenEstimator",
    "context_compress_node",
    "context_load_node",
    "context_options_from_config",
    "context_scope_key",
    "context_select_node",
    "context_update_node",
    "context_worker_from_env",
    "create_context",
    "create_context_execution",
    "create_context_operation_queue",
    "create_context_redis_client",
    "create_context_worker",
    "create_in_memory_context_store",
    "create_rag_strategy",
    "create_redis_context_store",
    "default_select",
    "deterministic_compress",
    "is_protected_context_item",
    "run_compress",
    "run_load",
    "run_rag_flow",
    "run_select",
    "run_skill_flow",
    "run_update",
    "update_with_retry",
]
