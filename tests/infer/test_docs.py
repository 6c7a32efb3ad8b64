"""Every Python block of docs/infer.md runs as written, in order, in one namespace (INF-1…INF-6).

There is no model server here, so the page's servers are replaced by local stand-ins that speak the same
protocol, and only those: the `.env` the page loads and the environment name a local OpenAI-compatible chat
server (the real ``openai`` SDK talks to it), and the embedding server at ``http://127.0.0.1:8000/v1`` is a local
OpenAI-compatible embeddings server. Everything else is the page's own text.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from tests.support.doc_blocks import DOCS, python_blocks, run_blocks
from tests.support.openai_chat_server import ChatServerState, ChatStep, openai_chat_server
from tests.support.openai_embeddings_server import openai_embeddings_server


async def test_every_block_of_the_infer_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """INF-1…INF-6: the built-in model, the node, a model server named in .env, embeddings, the research
    tasks and the counters, as docs/infer.md shows them, answer what the page says."""
    blocks = python_blocks(DOCS / "infer.md")
    assert len(blocks) >= 5
    state = ChatServerState(default=ChatStep(content="Backups are kept for 35 days."), api_key="sk-docs")
    async with openai_chat_server(state) as (chat_url, _), openai_embeddings_server() as (embed_url, _):
        (tmp_path / ".env").write_text(f"DITTO_WORKER_INFER_BASE_URL={chat_url}\nDITTO_WORKER_INFER_MODEL=gpt-4o-mini\n"
                                       "DITTO_WORKER_INFER_API_KEY=sk-docs\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        for name, value in (("BASE_URL", chat_url), ("MODEL", "gpt-4o-mini"), ("API_KEY", "sk-docs")):
            monkeypatch.setenv(f"DITTO_WORKER_INFER_{name}", value)
        module = types.ModuleType("ditto_docs_infer")
        sys.modules[module.__name__] = module
        try:
            await run_blocks([block.replace("http://127.0.0.1:8000/v1", embed_url + "/v1") for block in blocks],
                             module.__dict__, str(DOCS / "infer.md"))
        finally:
            del sys.modules[module.__name__]
            embedder = module.__dict__.get("embedder")
            if embedder is not None:
                await embedder.aclose()
    names = module.__dict__
    assert names["answer"].message.content == "Backups are kept for 35 days."
    assert names["config"].model == "gpt-4o-mini" and state.requests[0]["model"] == "gpt-4o-mini"
    assert state.authorizations == ["Bearer sk-docs"] * 2  # the .env block, then the environment block
    assert names["result"].parsed == {"excerpts": [{"sourceId": "doc-1", "quote": "Backups are kept for 35 days."}]}
    assert names["counters"].to_json_dict() == {}
