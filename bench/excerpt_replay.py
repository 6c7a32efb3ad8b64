"""Record the built-in model's excerpt tasks on SciFact claims, then replay them against the current code.

Usage::

    PYTHONPATH=src python bench/index_scifact.py --only-claims --claims 809 --split train --embed --work W
    PYTHONPATH=src python bench/excerpt_replay.py record --split train --work W --out /tmp/train-tasks.jsonl
    PYTHONPATH=src python bench/excerpt_replay.py replay /tmp/train-tasks.jsonl --work W

A research task costs a search, snapshots, MEMORY checkpoints and a brief; the excerpt choice is a pure
function of its task (:func:`ditto.worker.infer.extractive.choose_excerpts`). ``record`` runs the claims
as ``document-search`` tasks over the prepared index that ``bench/index_scifact.py --work W`` built
(``W/claims-index-embed``, or ``W/claims-index`` without ``--embed``) and writes each excerpt task the
built-in model received, with the cosines it read, one JSON line each. ``replay`` runs
``choose_excerpts`` on every recorded task with the code as it is now and prints the share of claims
whose quotes hold a relevant abstract (*cites*), whose passages hold one (*shown*: the ceiling of any
excerpt choice), with no quote at all, and the quotes per brief. This is how the quote order and the
first-quote cosine were chosen (docs/design/research.md, "Every source before any source's second
quote"): on train only, in seconds instead of minutes per setting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from retrieval_beir import DEFAULT_DATA


def _index_dir(work: Path, embed: bool) -> Path:
    directory = work / ("claims-index-embed" if embed else "claims-index")
    if not (directory / "manifest.json").exists():
        raise SystemExit(f"no index in {directory}: run bench/index_scifact.py --only-claims --work {work}"
                         + (" --embed" if embed else "") + " first")
    return directory


async def _record(data: Path, work: Path, split: str, claims: int, embed: bool, out: Path) -> int:
    import ditto.worker.infer.providers.builtin as builtin
    from ditto.retrieval.evaluation import read_beir_qrels, read_beir_queries
    from ditto.workflows.research import run_research

    index = _index_dir(work, embed)
    os.environ["DITTO_RESEARCH_EMBED"] = "1" if embed else "0"
    qrels = read_beir_qrels(data, split)
    queries = read_beir_queries(data)
    selected = [(query_id, queries[query_id]) for query_id in qrels if query_id in queries][:claims]
    current: dict[str, str] = {}
    choose = builtin.choose_excerpts

    def spy(task: Any, **options: Any) -> Any:  # what the provider was asked, then its own answer
        with out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"claim": current["id"], "relevant": sorted(qrels[current["id"]]),
                                     "task": task.model_dump(mode="json"),
                                     "similarities": options.get("similarities"),
                                     "options": {k: v for k, v in options.items() if k != "similarities"}})
                         + "\n")
        return choose(task, **options)

    builtin.choose_excerpts = spy  # type: ignore[assignment]  # this process only
    try:
        with tempfile.TemporaryDirectory(prefix="ditto-bench-replay-") as tasks:
            for number, (query_id, text) in enumerate(selected):
                current["id"] = query_id
                await run_research("document-search", {"question": text, "tenant": f"r{number}",
                                                       "index": str(index)}, base_dir=Path(tasks), env={})
    finally:
        builtin.choose_excerpts = choose  # type: ignore[assignment]
    return len(selected)


def _passage_files(work: Path, embed: bool) -> dict[str, str]:
    """Each indexed passage's text → the abstract id of its file (``<id>.txt``)."""
    from ditto.retrieval.index import open_index

    with open_index(_index_dir(work, embed)) as index:
        rows = index.passages([document.id for document in index.bm25.documents()])
    found: dict[str, str] = {}
    for row in rows.values():
        found.setdefault(row.text, Path(row.path).stem)
    return found


def replay(recorded: Path, work: Path, embed: bool) -> dict[str, float]:
    from ditto.worker.infer.extractive import choose_excerpts
    from ditto.worker.infer.tasks import ExcerptTask

    files = _passage_files(work, embed)
    claims: dict[str, dict[str, bool]] = {}
    quotes = 0
    with recorded.open(encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            task = ExcerptTask.model_validate(entry["task"])
            by_source = {passage.source_id: files.get(passage.text) for passage in task.passages}
            chosen = choose_excerpts(task, similarities=entry["similarities"], **entry["options"])
            relevant = set(entry["relevant"])
            seen = claims.setdefault(entry["claim"], {"cites": False, "shown": False, "quoted": False})
            seen["cites"] |= bool({by_source[excerpt.source_id] for excerpt in chosen} & relevant)
            seen["shown"] |= bool(set(by_source.values()) & relevant)
            seen["quoted"] |= bool(chosen)
            quotes += len(chosen)
    count = len(claims) or 1
    return {"claims": len(claims), "cites": sum(c["cites"] for c in claims.values()) / count,
            "shown": sum(c["shown"] for c in claims.values()) / count,
            "no_evidence": sum(not c["quoted"] for c in claims.values()) / count, "quotes": quotes / count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="run claims and write their excerpt tasks")
    record.add_argument("--data", type=Path, default=DEFAULT_DATA)
    record.add_argument("--split", choices=("train", "test"), default="train")
    record.add_argument("--claims", type=int, default=10_000)
    record.add_argument("--work", type=Path, required=True)
    record.add_argument("--bm25", action="store_true", help="the BM25 index (without embeddings)")
    record.add_argument("--out", type=Path, required=True)
    again = commands.add_parser("replay", help="choose the excerpts of recorded tasks with the current code")
    again.add_argument("recorded", type=Path)
    again.add_argument("--work", type=Path, required=True)
    again.add_argument("--bm25", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.command == "record":
        args.out.write_text("", encoding="utf-8")  # the spy appends
        count = asyncio.run(_record(args.data, args.work, args.split, args.claims, not args.bm25, args.out))
        print(f"{count} claims recorded into {args.out} in {time.perf_counter() - started:.0f} s")
        return
    row = replay(args.recorded, args.work, not args.bm25)
    print("| claims | cites a relevant abstract | one shown | no quote | quotes per brief | replay s |\n"
          "| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {row['claims']} | {row['cites']:.4f} | {row['shown']:.4f} | {row['no_evidence']:.4f} | "
          f"{row['quotes']:.2f} | {time.perf_counter() - started:.1f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
