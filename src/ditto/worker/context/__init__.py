"""The CONTEXT worker (seed 001): LOAD, UPDATE, SELECT and COMPRESS a working context.

``create_context()`` is the direct SDK, ``create_context_worker()`` registers
the same implementation as four runtime nodes. Explicit requests compute on a
``context`` snapshot; ``scope`` requests read and write a cache through a
``ContextStateStore`` (Redis by default, ``create_redis_context_store``).
"""

from .compress import ContextCompressRequest, deterministic_compress, is_protected_context_item
from .compress import run_compress as run_compress
from .env import REDIS_URL_ENV, context_worker_from_env, create_context_redis_client
from .errors import CONTEXT_ERROR_CODES, ContextError
from .execution import ContextExecution, create_context_execution
from .flows import ContextFlowResult, run_rag_flow, run_skill_flow
from .inputs import (
    ContextCompressInput,
    ContextIngressItem,
    ContextLoadInput,
    ContextSelectInput,
    ContextUpdateInput,
)
from .load import run_load
from .policy import ContextPolicy
from .ports import (
    ContextCallOptions,
    ContextCompressor,
    ContextOperationQueue,
    ContextSelector,
    ContextServices,
    ContextStateStore,
    RagStrategy,
    ReferenceResolver,
    StoredContext,
    TokenEstimator,
)
from .queue import InProcessContextQueue, create_context_operation_queue
from .rag import RagCandidate, RagStageInput, RagStrategyPipeline, create_rag_strategy
from .scope import ContextScope, context_scope_key
from .sdk import ContextClient, ContextOptions, create_context
from .select import ContextSelectRequest, ContextStrategy, default_select, run_select
from .settings import context_options_from_config
from .stores import (
    InMemoryContextStore,
    RedisContextClient,
    RedisContextStore,
    create_in_memory_context_store,
    create_redis_context_store,
)
from .update import run_update
from .worker import (
    context_compress_node,
    context_load_node,
    context_select_node,
    context_update_node,
    create_context_worker,
)

__all__ = [
    "CONTEXT_ERROR_CODES",
    "REDIS_URL_ENV",
    "ContextCallOptions",
    "ContextClient",
    "ContextCompressInput",
    "ContextCompressRequest",
    "ContextCompressor",
    "ContextError",
    "ContextExecution",
    "ContextFlowResult",
    "ContextIngressItem",
    "ContextLoadInput",
    "ContextOperationQueue",
    "ContextOptions",
    "ContextPolicy",
    "ContextScope",
    "ContextSelectInput",
    "ContextSelectRequest",
    "ContextSelector",
    "ContextServices",
    "ContextStateStore",
    "ContextStrategy",
    "ContextUpdateInput",
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
]
