"""The public face of the root, foundation, runtime and INFER/INTERACTION packages: exactly these names.

As httpx does in ``test_exported_members``: a name enters or leaves ``__all__`` on purpose, and no public
attribute is defined without being listed (RT-1, RT-4, CX-1, MEM-1 name what the root package offers;
INF-1 and INT-1 the INFER and INTERACTION faces).
"""

from __future__ import annotations

import importlib
import types

import pytest

EXPECTED: dict[str, set[str]] = {
    "ditto.errors": {
        "CANCELLED", "HANDLER_ERROR", "OUTPUT_NOT_SERIALIZABLE", "REJECTED", "TIMEOUT", "ConfigError",
        "DittoError", "GraphError", "InvalidArgumentError", "MissingExtraError", "NodeStatus", "RegistrationError",
        "RoutingError", "TransportError", "describe_validation_error",
    },
    "ditto.signal": {"AbortController", "CancelSignal", "CancelledBySignal", "await_with_signal"},
    "ditto.text": {
        "BM25_B", "BM25_K1", "CJK_CLASS", "CJK_STOPWORDS", "ENGLISH_STOPWORDS", "CjkMode", "TextAnalyzer",
        "bm25_score", "score_documents", "word_terms",
    },
    "ditto.runtime": {
        "DEFAULT_LOOP_BUDGET", "INPUT_FN_FAILED", "SKIP", "ExecutionContext", "Graph", "GraphNode", "GraphResult",
        "LoopContext", "NodeDescriptor", "NodeError", "NodeHandler", "NodeResult", "NodeStatus", "Runtime",
        "RuntimeClient", "Transport", "WorkerDefinition", "WorkerInfo", "create_ditto", "current_execution",
        "graph", "node_descriptor",
    },
    "ditto.transport": {"DEFAULT_MAX_BODY_BYTES", "HttpTransport", "create_http_transport", "create_worker_http_app"},
    "ditto": {
        "AbortController", "CancelSignal", "CancelledBySignal", "ConfigError", "ContextError", "ContextScope",
        "ContextStateStore", "DittoError", "DittoMemoryError", "ExecutionContext", "Graph", "GraphError",
        "GraphResult", "HttpTransport", "InferClient", "InferCounters", "InferError", "InferResult",
        "InteractionError", "InvalidArgumentError", "LoopContext", "MemoryItem", "MissingExtraError", "ModelConfig",
        "NodeDescriptor",
        "NodeError", "NodeResult", "Observation", "RegistrationError", "RoutingError", "Runtime", "RuntimeClient",
        "RuntimeConfig", "ToolCall", "ToolError", "ToolResult", "TransportError", "WorkerDefinition", "WorkerInfo",
        "__version__", "context_compress_node", "context_load_node", "context_scope_key", "context_select_node",
        "context_update_node", "create_context", "create_context_execution", "create_context_operation_queue",
        "create_context_worker", "create_ditto", "create_http_transport", "create_in_memory_context_store",
        "create_infer_client", "create_infer_worker", "create_interaction", "create_interaction_worker",
        "create_memory", "create_memory_worker", "create_rag_strategy", "create_redis_context_store",
        "create_sqlite_memory_store", "create_worker_http_app", "current_execution", "default_select",
        "deterministic_compress", "graph", "infer_sample_node", "is_protected_context_item", "load_dotenv_mapping",
        "load_runtime_config", "load_runtime_config_file", "node_descriptor", "run_rag_flow", "run_skill_flow",
    },
    "ditto.config": {
        "ContextCacheConfig", "ContextLocalCacheConfig", "ContextPolicyConfig", "ContextQueueConfig",
        "ContextWorkerConfig", "HttpTransportConfig", "InteractionWebConfig", "InteractionWorkerConfig",
        "MemoryWorkerConfig", "RetrievalEmbeddingConfig", "RetrievalHybridConfig", "RetrievalRerankConfig",
        "RetrievalWorkerConfig", "RuntimeConfig", "TransportConfig", "WorkersConfig", "load_dotenv_mapping",
        "load_runtime_config", "load_runtime_config_file",
    },
    "ditto.contracts": {
        "Context", "ContextItem", "ContextPolicy", "ContextPurpose", "ContextSelection", "DittoModel", "FrozenDict",
        "InvalidJson", "JsonObject", "JsonValue", "MODEL_CONFIG", "Message", "NOT_JSON", "Reference", "ToolCall",
        "check_json", "freeze_json", "frozen_json", "js_json_dumps", "thaw_json", "try_frozen_json", "valid_text",
    },
    "ditto.worker.infer": {
        "BUILTIN_MODEL", "BUILTIN_PROVIDER", "CHOOSE_EXCERPTS", "CHOOSE_QUERIES", "ChatMessage",
        "EXCERPT_CHOICE_SCHEMA", "Excerpt", "ExcerptChoice", "ExcerptPassage", "ExcerptTask", "ExtractiveProvider",
        "INFER_ENV_PREFIX", "INFER_ERROR_CODES", "INFER_SAMPLE", "INFER_WORKER_TYPE", "InferClient",
        "InferWorkerDefinition", "InferCounters", "InferError", "InferProvider", "InferResult", "InferUsage",
        "MAX_QUOTE_CHARS", "ModelConfig", "ModelCounts", "OpenAIInferConfig", "OpenAIProvider", "ProviderReply",
        "ProviderRequest", "QUERY_CHOICE_SCHEMA", "QueryChoice", "QueryTask", "ResearchTask", "SampleInput",
        "create_extractive_provider", "create_infer_client", "create_infer_worker", "create_openai_provider",
        "estimate_tokens", "infer_config_from_env", "infer_sample_node", "parse_task", "response_format",
        "task_messages",
    },
    "ditto.worker.interaction": {
        "BRAVE_API_KEY_ENV", "INTERACTION_WORKER_TYPE", "Interaction", "InteractionError",
        "InteractionWorkerDefinition", "McpHttpServer", "McpStdioServer", "Observation", "SearchCandidate", "Tool",
        "ToolCall", "ToolError", "ToolFailure", "ToolMessage", "ToolResult", "ToolSpec", "WebClient", "WebOptions",
        "WebPage", "WebSearchResult", "create_interaction", "create_interaction_worker", "interaction_act_mcp_node",
        "interaction_act_tool_node", "interaction_list_tools_node", "interaction_observe_node",
        "interaction_web_read_node", "interaction_web_search_node", "interaction_worker_from_env", "tool",
        "web_options_from_config", "web_options_from_env", "web_read", "web_search",
    },
}


@pytest.mark.parametrize("package", sorted(EXPECTED))
def test_exported_members(package: str) -> None:
    """``__all__`` is exactly the documented set, every name resolves, nothing public is left unlisted."""
    module = importlib.import_module(package)
    exported = set(module.__all__)
    assert exported == EXPECTED[package]
    missing = {name for name in exported if not hasattr(module, name)}
    assert missing == set()
    defined_here = {
        name for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", package).startswith(package)
    }
    assert defined_here - exported <= _TYPING_HELPERS, defined_here - exported


# Module-level type variables and aliases used in signatures are not part of the face.
_TYPING_HELPERS = {"T", "In", "Out", "M", "InputFn", "Invoke", "TYPE_CHECKING"}


def test_node_names_are_descriptors() -> None:
    """RT-4: a module-level ``*_node`` name anywhere in ``ditto`` is a NodeDescriptor, never a function or helper."""
    import pkgutil

    import ditto
    from ditto.runtime import NodeDescriptor

    misnamed = []
    for info in pkgutil.walk_packages(ditto.__path__, "ditto."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        misnamed += [f"{info.name}.{name}" for name, value in vars(module).items()
                     if name.endswith("_node") and not isinstance(value, NodeDescriptor)]
    assert misnamed == []
