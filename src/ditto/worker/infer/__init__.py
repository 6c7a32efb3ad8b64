"""INFER: models behind one node, ``INFER.SAMPLE`` (SPEC §6, INF-1…INF-6).

``create_infer_client`` is the SDK (``client.reasoning.sample``), ``create_infer_worker``
registers the node. ``builtin:extractive`` — offline, deterministic — is the default
model; ``create_openai_provider(infer_config_from_env(os.environ))`` adds any
OpenAI-compatible server under the provider name ``openai``. The research tasks the
workflow asks (:mod:`ditto.worker.infer.tasks`) are re-exported here.
"""

from .config import INFER_ENV_PREFIX, OpenAIInferConfig, infer_config_from_env
from .providers import (
    BUILTIN_MODEL,
    ExtractiveProvider,
    OpenAIProvider,
    create_extractive_provider,
    create_openai_provider,
)
from .sdk import InferClient, create_infer_client
from .tasks import (
    CHOOSE_EXCERPTS,
    CHOOSE_QUERIES,
    EXCERPT_CHOICE_SCHEMA,
    MAX_QUOTE_CHARS,
    QUERY_CHOICE_SCHEMA,
    Excerpt,
    ExcerptChoice,
    ExcerptPassage,
    ExcerptTask,
    QueryChoice,
    QueryTask,
    ResearchTask,
    parse_task,
    response_format,
    task_messages,
)
from .types import (
    BUILTIN_PROVIDER,
    INFER_ERROR_CODES,
    ChatMessage,
    InferError,
    InferProvider,
    InferResult,
    InferUsage,
    ModelConfig,
    ProviderReply,
    ProviderRequest,
    SampleInput,
)
from .usage import InferCounters, ModelCounts, estimate_tokens
from .worker import INFER_SAMPLE, INFER_WORKER_TYPE, InferWorkerDefinition, create_infer_worker, infer_sample_node

__all__ = [
    "BUILTIN_MODEL",
    "BUILTIN_PROVIDER",
    "CHOOSE_EXCERPTS",
    "CHOOSE_QUERIES",
    "EXCERPT_CHOICE_SCHEMA",
    "INFER_ENV_PREFIX",
    "INFER_ERROR_CODES",
    "INFER_SAMPLE",
    "INFER_WORKER_TYPE",
    "MAX_QUOTE_CHARS",
    "QUERY_CHOICE_SCHEMA",
    "ChatMessage",
    "Excerpt",
    "ExcerptChoice",
    "ExcerptPassage",
    "ExcerptTask",
    "ExtractiveProvider",
    "InferClient",
    "InferCounters",
    "InferError",
    "InferProvider",
    "InferResult",
    "InferUsage",
    "InferWorkerDefinition",
    "ModelConfig",
    "ModelCounts",
    "OpenAIInferConfig",
    "OpenAIProvider",
    "ProviderReply",
    "ProviderRequest",
    "QueryChoice",
    "QueryTask",
    "ResearchTask",
    "SampleInput",
    "create_extractive_provider",
    "create_infer_client",
    "create_infer_worker",
    "create_openai_provider",
    "estimate_tokens",
    "infer_config_from_env",
    "infer_sample_node",
    "parse_task",
    "response_format",
    "task_messages",
]
