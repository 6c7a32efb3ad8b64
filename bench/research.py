"""Research workflow benchmark: the README task's wall time, and evidence quality on SciFact train claims.

Usage::

    python bench/research.py [--data ../shared/datasets/scifact] [--claims 300] [--runs 5]

1. **README task** — ``ditto research multi-source --sources documents,knowledge --knowledge both`` on the
   generated sample material with the built-in model, as a child process (what a user waits
   for, Python start-up included) and in process (``run_research``); then the resume after
   ``--stop-after evidence``. Median of ``--runs``.
2. **SciFact train claims** — the corpus becomes one external SQLite FTS5 knowledge base
   (built once; rowid = the abstract id). Each claim is a ``knowledge-base`` task (external
   knowledge, built-in model). A brief *hits* when it cites at least one abstract that
   ``qrels/train.tsv`` marks relevant. The peer in the same run is "BM25 top-1 as the
   evidence": the same FTS5 index through the same ``RETRIEVAL.SEARCH`` provider, limit 1.
   "top-3 recall" is the share of claims with a relevant abstract among the 3 records the
   model is shown (the ceiling of what the brief can cite).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _scifact import iter_corpus, read_qrels, read_queries

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "datasets" / "scifact"


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("DITTO_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def readme_task(runs: int, base: Path) -> dict[str, float]:
    command = [sys.executable, "-m", "ditto", "research", "multi-source", "--sources", "documents,knowledge",
               "--knowledge", "both", "--json", "--base-dir", str(base)]
    cold, resume = [], []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=_env(), check=True)
        cold.append(time.perf_counter() - started)
        assert json.loads(done.stdout)["result"]["status"] == "completed"
        stopped = subprocess.run([*command, "--stop-after", "evidence"], capture_output=True, text=True,
                                 env=_env(), check=True)
        directory = json.loads(stopped.stdout)["directory"]
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ditto", "research", "multi-source", "--json", "--directory",
                        directory], capture_output=True, text=True, env=_env(), check=True)
        resume.append(time.perf_counter() - started)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import ditto.cli.app"], env=_env(), check=True)
    startup = time.perf_counter() - started
    return {"process": statistics.median(cold), "resume_process": statistics.median(resume),
            "startup": startup, **asyncio.run(_in_process(runs, base))}


async def _in_process(runs: int, base: Path) -> dict[str, float]:
    from ditto.workflows.research import ResearchOptions, run_research

    options = ResearchOptions()
    request = {"sources": ["documents", "knowledge"], "knowledge": "both"}
    await run_research("multi-source", request, base_dir=base, env={}, options=options)  # warm imports
    cold, resume = [], []
    for _ in range(runs):
        started = time.perf_counter()
        await run_research("multi-source", request, base_dir=base, env={}, options=options)
        cold.append(time.perf_counter() - started)
        task, _ = await run_research("multi-source", request, base_dir=base, env={},
                                     options=ResearchOptions(stop_after="evidence"))
        started = time.perf_counter()
        _, result = await run_research("multi-source", None, directory=task.directory, env={}, options=options)
        resume.append(time.perf_counter() - started)
        assert result.status == "completed"
    return {"in_process": statistics.median(cold), "resume_in_process": statistics.median(resume)}


def build_kb(data: Path, path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("CREATE VIRTUAL TABLE knowledge USING fts5(title, content)")
    count = 0
    for doc in iter_corpus(data):
        connection.execute("INSERT INTO knowledge(rowid, title, content) VALUES (?, ?, ?)",
                           (int(doc["_id"]), doc.get("title", ""), f"{doc.get('title', '')}. {doc['text']}"))
        count += 1
    connection.commit()
    connection.close()
    return count


def _cited(path: str) -> set[str]:
    brief = json.loads(Path(path).read_text(encoding="utf-8"))
    return {item["locator"]["ref"].split(":", 1)[1] for item in brief["evidence"]}


def load_claims(data: Path, limit: int) -> list[tuple[str, str, set[str]]]:
    qrels = read_qrels(data, "train")
    claims = [(query_id, text, qrels[query_id]) for query_id, text in read_queries(data).items()
              if query_id in qrels]
    return claims[:limit]


async def scifact(data: Path, claims: int, base: Path) -> dict[str, Any]:
    from ditto.retrieval import RetrievalTargetRegistry, create_retrieval
    from ditto.retrieval.providers.sql import create_sql_search_provider
    from ditto.workflows.research import ResearchOptions, run_research

    kb = base / "scifact.sqlite"
    started = time.perf_counter()
    documents = build_kb(data, kb)
    build = time.perf_counter() - started
    selected = load_claims(data, claims)
    connection = sqlite3.connect(kb, check_same_thread=False)
    retrieval = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "fts", "providers": {
        "fts": create_sql_search_provider(connection, {"dialect": "sqlite", "table": "knowledge",
                                                       "content_column": "content"})}}}))
    bm25_hits = top3_hits = 0
    bm25_seconds = 0.0
    for _, text, relevant in selected:
        started = time.perf_counter()
        output = (await retrieval.search({"query": {"content": text}, "target": {"name": "kb"}, "limit": 3})).unwrap()
        bm25_seconds += time.perf_counter() - started
        ids = [candidate.id for candidate in output.candidates]
        bm25_hits += bool(ids[:1] and ids[0] in relevant)
        top3_hits += bool(set(ids) & relevant)
    connection.close()
    hits = no_evidence = other = 0
    seconds = []
    options = ResearchOptions()
    for _, text, relevant in selected:
        started = time.perf_counter()
        _, result = await run_research("knowledge-base", {"question": text, "kb": str(kb), "knowledge": "external"},
                                       base_dir=base / "tasks", env={}, options=options)
        seconds.append(time.perf_counter() - started)
        if result.status == "no-evidence":
            no_evidence += 1
        elif result.status != "completed":
            other += 1
        if result.brief:
            hits += bool(_cited(result.brief) & relevant)
    count = len(selected)
    return {"claims": count, "documents": documents, "build_s": build, "hit_rate": hits / count,
            "no_evidence": no_evidence / count, "other": other, "s_per_task": statistics.mean(seconds),
            "s_per_task_p50": statistics.median(seconds), "bm25_top1": bm25_hits / count,
            "top3_recall": top3_hits / count, "bm25_s_per_claim": bm25_seconds / count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA if DEFAULT_DATA.exists()
                        else Path("/work/shared/datasets/scifact"))
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    with tempfile.TemporaryDirectory(prefix="ditto-bench-research-") as folder:
        base = Path(folder)
        timing = readme_task(args.runs, base / "readme")
        print("README task (multi-source --sources documents,knowledge --knowledge both, builtin:extractive)")
        print("| path | median s | goal |\n| --- | ---: | ---: |")
        print(f"| `ditto research` child process | {timing['process']:.3f} | ≤ 2 |")
        print(f"| `run_research` in process | {timing['in_process']:.3f} | |")
        print(f"| resume after --stop-after evidence, child process | {timing['resume_process']:.3f} | ≤ 0.5 |")
        print(f"| resume after --stop-after evidence, in process | {timing['resume_in_process']:.3f} | |")
        print(f"| bare `import ditto.cli.app` in a child process | {timing['startup']:.3f} | |")
        quality = asyncio.run(scifact(args.data, args.claims, base / "scifact"))
        print(f"\nSciFact train: {quality['claims']} claims, {quality['documents']} abstracts "
              f"(FTS5 build {quality['build_s']:.1f} s)")
        print("| evidence | hit rate | no-evidence | s per claim |\n| --- | ---: | ---: | ---: |")
        print(f"| research brief (knowledge-base, builtin:extractive) | {quality['hit_rate']:.3f} | "
              f"{quality['no_evidence']:.3f} | {quality['s_per_task']:.3f} (p50 {quality['s_per_task_p50']:.3f}) |")
        print(f"| BM25 top-1 as the evidence (same FTS5 index) | {quality['bm25_top1']:.3f} | 0 | "
              f"{quality['bm25_s_per_claim']:.4f} |")
        print(f"| (ceiling) a relevant abstract among the 3 shown | {quality['top3_recall']:.3f} | | |")
        if quality["other"]:
            print(f"{quality['other']} task(s) ended neither completed nor no-evidence")


if __name__ == "__main__":
    main()
