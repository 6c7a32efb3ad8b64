"""Fixtures for the backend providers: small corpora (the PostgreSQL servers are session fixtures of
``tests.support.real_servers``)."""

from __future__ import annotations

from typing import Any

# A small corpus with metadata used by text, SQL and Milvus tests alike.
DOCS: list[dict[str, Any]] = [
    {"id": "d1", "content": "Agent memory migration guide for long running agents",
     "metadata": {"year": 2024, "lang": "en", "tags": ["memory", "guide"]}},
    {"id": "d2", "content": "Memory allocators and garbage collection in runtimes",
     "metadata": {"year": 2021, "lang": "en", "tags": ["runtime"]}},
    {"id": "d3", "content": "Migrating agent state between memory stores safely",
     "metadata": {"year": 2025, "lang": "en", "tags": ["memory"]}},
    {"id": "d4", "content": "智能体的记忆迁移方案与长期记忆存储",
     "metadata": {"year": 2024, "lang": "zh", "tags": ["memory"]}},
    {"id": "d5", "content": "向量检索与全文检索的混合排序",
     "metadata": {"year": 2023, "lang": "zh"}},
    {"id": "d6", "content": "Cooking pasta with tomatoes and basil",
     "metadata": {"year": 2019, "lang": "en", "draft": True}},
]
