"""A research task over your own material: a documents folder, confirmed internal knowledge and an
application-owned knowledge base, answered by the built-in model, then verified offline.

Run it with ``python examples/research.py [DIRECTORY]``; it prints a JSON summary. Without a
directory it works in a temporary one. No network, no key.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ditto.retrieval import RetrievalCandidate, RetrievalCandidateSource, RetrievalSearchOutput
from ditto.runtime import create_ditto
from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store
from ditto.workflows.research import (
    ResearchRequest,
    create_task,
    import_internal_knowledge,
    multi_source,
    open_research_runtime,
    verify_task,
)


class Handbook:
    """A RETRIEVAL provider standing in for a knowledge platform your application already has."""

    PAGES = {"hb-12": "Handbook 12: the nightly export is kept for 9 weeks in cold storage.",
             "hb-30": "Handbook 30: visitors sign in at the front desk."}

    async def search(self, input: Any, context: Any = None) -> RetrievalSearchOutput:
        words = set(str(input.query.content).lower().split())
        hits = [RetrievalCandidate(id=key, content=text, source=RetrievalCandidateSource(target="handbook", ref=key))
                for key, text in self.PAGES.items() if words & set(text.lower().replace(".", "").split())]
        return RetrievalSearchOutput(target=input.target, strategy=input.strategy, candidates=tuple(hits[:3]))


def write_documents(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "ops.md").write_text("# Operations\n\nThe nightly export runs at 02:15 UTC.\n"
                                 "It writes one file per customer.\n", encoding="utf-8")
    (docs / "draft.md").write_text("The nightly export runs at noon (draft, ignore).\n", encoding="utf-8")
    return docs


def read_brief(path: str | None) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8")) if path else {}


async def main(root: Path) -> dict[str, Any]:
    docs = write_documents(root)

    # Confirmed internal knowledge lives in a MEMORY store the application owns.
    memory_path = root / "agent-memory.sqlite"
    store = create_sqlite_memory_store(str(memory_path))
    async with create_ditto(workers=[create_memory_worker(store=store)]) as runtime:
        await import_internal_knowledge(runtime, tenant="acme", records=[
            {"key": "export-owner", "text": "The nightly export is owned by the data platform team."}])
    await store.close()

    request = ResearchRequest(entry="multi-source", question="When does the nightly export run, how long is "
                              "it kept and who owns it?", sources=("documents", "knowledge"), knowledge="both",
                              documents=(str(docs),), ignore=("draft.md",), kb="target:handbook",
                              memory=str(memory_path), internal_knowledge_keys=("export-owner",))
    task = create_task(request, base_dir=root / "tasks")
    targets = {"handbook": {"default_strategy": "keyword", "providers": {"keyword": Handbook()}}}
    async with open_research_runtime(task, env={}, targets=targets) as runtime:
        result = await multi_source.run(runtime, {"directory": str(task.directory)})
    brief = read_brief(result.brief)
    return {"status": result.status, "summary": result.summary,
            "evidence": [{"sourceType": item["sourceType"], "uri": item["uri"], "quote": item["quote"]}
                         for item in brief.get("evidence", [])],
            "verified": verify_task(task.directory) == []}


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps(asyncio.run(main(Path(sys.argv[1]))), indent=2))
    else:
        with tempfile.TemporaryDirectory() as folder:
            print(json.dumps(asyncio.run(main(Path(folder))), indent=2))
