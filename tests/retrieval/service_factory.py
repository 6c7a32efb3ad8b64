"""``ditto serve --worker tests.retrieval.service_factory:retrieval_service`` (RET-8).

A runtime holding only the RETRIEVAL worker: target ``kb`` with a ``hybrid``
default strategy over two real vector branches (cosine and dot product on the
same in-memory numpy index) and a ``vector`` strategy. A thin reporting
provider writes the serving process id and the defaults it received into the
output metadata, so the caller can check round-robin and the YAML keys.
"""

from __future__ import annotations

import os
from typing import Any

from ditto.config import RuntimeConfig
from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalTargetRegistry,
    create_hybrid_search_provider,
    create_retrieval_worker,
    create_vector_search_provider,
)
from ditto.runtime import WorkerDefinition
from tests.support.openai_embeddings_server import hashed_bow

CORPUS = {
    "d1": "agent memory migration guide",
    "d2": "vector database index tuning",
    "d3": "hybrid retrieval with reciprocal rank fusion",
    "d4": "cooking pasta at home",
}


class LocalHashEmbedding:
    """The same hashed bag of words as the test embedding server, in process."""

    async def embed(self, contents: Any, context: RetrievalExecutionContext | None = None) -> list[list[float]]:
        return [hashed_bow(str(c), 32) for c in contents]


class ReportingProvider:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                     ) -> RetrievalSearchOutput:
        output: RetrievalSearchOutput = await self.inner.search(input, context)
        defaults = context.defaults if context is not None else None
        report: dict[str, Any] = {"pid": os.getpid(), "limit": input.limit}
        if defaults is not None:
            report["defaults"] = defaults.model_dump(by_alias=True, exclude_none=True)
        return output.model_copy(update={"metadata": report})


def _registry() -> RetrievalTargetRegistry:
    embedding = LocalHashEmbedding()
    cosine, dot = InMemoryVectorIndex(metric="cosine"), InMemoryVectorIndex(metric="dot")
    for index in (cosine, dot):
        index.add([{"id": key, "vector": hashed_bow(text, 32), "content": text} for key, text in CORPUS.items()])
    vector = create_vector_search_provider(cosine, embedding=embedding)
    hybrid = create_hybrid_search_provider([vector, create_vector_search_provider(dot, embedding=embedding)])
    return RetrievalTargetRegistry({"kb": {"default_strategy": "hybrid", "providers": {
        "hybrid": ReportingProvider(hybrid), "vector": ReportingProvider(vector)}}})


def retrieval_service(config: RuntimeConfig) -> WorkerDefinition:
    """Pins the loaded YAML to the definition (``config=``)."""
    return create_retrieval_worker(providers=_registry(), config=config, concurrency=4)


def retrieval_service_plain() -> WorkerDefinition:
    """Takes no config: the YAML reaches it as the serving runtime's own configuration."""
    return create_retrieval_worker(providers=_registry(), concurrency=4)
