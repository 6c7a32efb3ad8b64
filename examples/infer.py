"""INFER in practice, offline: the built-in model chooses queries and excerpts, and answers a chat.

Run it with ``python examples/infer.py``; it prints a JSON summary. No network and
no key: every call goes to ``builtin:extractive``. To use a real model server put
``DITTO_WORKER_INFER_BASE_URL`` and ``DITTO_WORKER_INFER_MODEL`` in a ``.env`` file and
run ``python examples/infer.py --dotenv .env``: the same calls then go to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from ditto.config import load_dotenv_mapping
from ditto.runtime import create_ditto
from ditto.worker.infer import (
    ExcerptPassage,
    ExcerptTask,
    InferCounters,
    ModelConfig,
    QueryTask,
    create_infer_worker,
    create_openai_provider,
    infer_config_from_env,
    response_format,
    task_messages,
)

PASSAGES = (
    ExcerptPassage(source_id="handbook#intro", text=(
        "This handbook covers backups, logs and access. Questions about backups go to the operations team.")),
    ExcerptPassage(source_id="handbook#retention", text=(
        "Storage is reviewed every quarter. Nightly backups are kept for 35 days, then deleted "
        "automatically. Audit logs are kept for one year.")),
    ExcerptPassage(source_id="handbook#office", text="The office opens at nine. Visitors sign in at the desk."),
)
VOCABULARY = ("office hours", "backup retention", "audit log retention", "visitor policy")


async def main(dotenv: str | None = None) -> dict[str, Any]:
    providers: dict[str, Any] = {}
    model = ModelConfig()  # builtin:extractive
    config = infer_config_from_env(load_dotenv_mapping(dotenv)) if dotenv else None
    if config is not None:
        providers["openai"] = create_openai_provider(config)
        model = config.model_config()
    counters = InferCounters()
    runtime = create_ditto(workers=[create_infer_worker(providers or None, counters=counters)])
    question = "How long are nightly backups kept?"

    async def ask(task: QueryTask | ExcerptTask) -> Any:
        result = await runtime.invoke("INFER.SAMPLE", {
            "model": model, "messages": task_messages(task), "responseFormat": response_format(task)})
        return result.unwrap().parsed

    queries = await ask(QueryTask(question=question, vocabulary=VOCABULARY, min_queries=2, max_queries=3))
    excerpts = await ask(ExcerptTask(question=question, passages=PASSAGES, max_excerpts=2, max_per_source=1))
    nothing = await ask(ExcerptTask(question="Who won the 1998 World Cup?", passages=PASSAGES))
    # The context → INFER pattern: selected items as user messages, then the question.
    chat = (await runtime.invoke("INFER.SAMPLE", {"model": model, "messages": [
        *({"role": "user", "content": passage.text} for passage in PASSAGES),
        {"role": "user", "content": "How long are audit logs kept?"}]})).unwrap()
    await runtime.close()
    for provider in providers.values():
        await provider.aclose()
    return {"queries": queries["queries"], "excerpts": excerpts["excerpts"], "unanswerable": nothing["excerpts"],
            "chat": chat.message.content, "usage": chat.usage.to_json_dict(), "counters": counters.to_json_dict()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dotenv", help="a .env file with DITTO_WORKER_INFER_* to use a real model server")
    print(json.dumps(asyncio.run(main(parser.parse_args().dotenv)), indent=2, ensure_ascii=False))
