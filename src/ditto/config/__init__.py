"""Runtime configuration: typed models and the YAML loader."""

from .loader import load_dotenv_mapping, load_runtime_config, load_runtime_config_file
from .models import (
    ContextCacheConfig,
    ContextLocalCacheConfig,
    ContextPolicyConfig,
    ContextQueueConfig,
    ContextWorkerConfig,
    HttpTransportConfig,
    InteractionWebConfig,
    InteractionWorkerConfig,
    MemoryWorkerConfig,
    RetrievalEmbeddingConfig,
    RetrievalHybridConfig,
    RetrievalRerankConfig,
    RetrievalWorkerConfig,
    RuntimeConfig,
    TransportConfig,
    WorkersConfig,
)

__all__ = [
    "ContextCacheConfig",
    "ContextLocalCacheConfig",
    "ContextPolicyConfig",
    "ContextQueueConfig",
    "ContextWorkerConfig",
    "HttpTransportConfig",
    "InteractionWebConfig",
    "InteractionWorkerConfig",
    "MemoryWorkerConfig",
    "RetrievalEmbeddingConfig",
    "RetrievalHybridConfig",
    "RetrievalRerankConfig",
    "RetrievalWorkerConfig",
    "RuntimeConfig",
    "TransportConfig",
    "WorkersConfig",
    "load_dotenv_mapping",
    "load_runtime_config",
    "load_runtime_config_file",
]
