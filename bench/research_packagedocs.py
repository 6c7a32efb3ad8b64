"""Research over documentation as Debian installs it: ``--documents /usr/share/doc/<package>``.

Usage::

    PYTHONPATH=src python bench/research_packagedocs.py [--show] [--work DIR]

Each question of ``bench/data/packagedocs_questions.json`` (written by someone who had not read the code;
answers checked by grep in the decompressed files) runs as a ``document-search`` task over its package's folder,
in this process (``run_research``, the CLI's code path), with a folder cache of its own under ``--work``. An
answerable question is a hit when a quote from the named file holds an answer (whitespace collapsed); an
unanswerable one when the brief says ``no-evidence``. The peer in the same run is BM25's top passage of the
same folder (the index the task searches, ``strategy=bm25``, limit 1) holding the answer. The folders are the
machine's own: a question whose folder or file is not installed is counted as not run.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from research_realdocs import _collapse

QUESTIONS = Path(__file__).resolve().parent / "data" / "packagedocs_questions.json"


def _installed(item: dict[str, Any]) -> bool:
    folder = Path(item["folder"])
    return folder.is_dir() and ("file" not in item or (folder / item["file"]).is_file())


def _judge(item: dict[str, Any], brief: dict[str, Any] | None) -> bool:
    if "file" not in item:
        return brief is not None and brief["status"] == "no-evidence"
    if brief is None:
        return False
    uri = (Path(item["folder"]) / item["file"]).resolve().as_uri()
    return any(entry["uri"] == uri and any(_collapse(answer) in _collapse(entry["quote"])
                                           for answer in item["answers"]) for entry in brief["evidence"])


def _file_text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")


async def _bm25_top(item: dict[str, Any], work: Path) -> bool:
    """Whether BM25's best passage of the folder (a fresh index of it) holds the answer, from the named file."""
    from ditto.retrieval.index import SearchIndexError, create_index_search_provider, open_index, update_index

    index = work / "bm25" / Path(item["folder"]).name
    if not (index / "manifest.json").exists():
        try:
            await update_index(index, [Path(item["folder"])])
        except SearchIndexError:  # nothing in the folder the reader takes for a document
            return False
    opened = open_index(index)
    try:
        output = await create_index_search_provider(opened).search(
            {"query": {"content": item["question"]}, "target": {"name": "docs"}, "strategy": "bm25", "limit": 1})
    finally:
        opened.close()
    return any(str(candidate.metadata.get("path", "")).endswith("/" + item["file"]) and any(
        _collapse(answer) in _collapse(candidate.content) for answer in item["answers"])
        for candidate in output.candidates[:1])


async def _run(items: list[dict[str, Any]], work: Path, show: bool) -> None:
    from ditto.workflows.research import ResearchOptions, run_research

    os.environ.setdefault("DITTO_INDEX_CACHE_DIR", str(work / "cache"))
    tallies = {"answerable": [0, 0, 0], "unanswerable": [0, 0, 0]}
    seconds: list[float] = []
    for item in items:
        kind = "answerable" if "file" in item else "unanswerable"
        started = time.perf_counter()
        _, result = await run_research("document-search", {"question": item["question"],
                                                           "documents": [item["folder"]]},
                                       base_dir=work / "tasks", env={}, options=ResearchOptions())
        seconds.append(time.perf_counter() - started)
        brief = json.loads(Path(result.brief).read_text(encoding="utf-8")) if result.brief else None  # noqa: ASYNC240
        ok = _judge(item, brief)
        tallies[kind][0] += ok
        tallies[kind][1] += 1
        if kind == "answerable":
            tallies[kind][2] += await _bm25_top(item, work)
        if show:
            status = brief["status"] if brief else result.status
            print(f"{'ok  ' if ok else 'MISS'} {item['id']} {status:11} {item['question'][:90]}")
            if not ok and brief:
                for entry in brief["evidence"][:2]:
                    print(f"       {entry['uri'].rsplit('/', 1)[-1][:24]} | {_collapse(entry['quote'])[:110]}")
    seconds.sort()
    print("Research over /usr/share/doc/<package> folders (built-in model, in process)")
    print("| questions | research brief | BM25 top-1 passage |\n| --- | ---: | ---: |")
    for kind, (hits, total, bm25) in tallies.items():
        if total:
            peer = f"{bm25}/{total}" if kind == "answerable" else ""
            print(f"| {kind} | {hits}/{total} ({hits / total:.0%}) | {peer} |")
    print(f"median {seconds[len(seconds) // 2]:.2f} s per task (the first task over a folder also indexes it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--show", action="store_true", help="print every question's outcome")
    parser.add_argument("--work", type=Path, default=None, help="where the tasks and caches go (a temp dir)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    args = parser.parse_args()
    data = json.loads(args.questions.read_text(encoding="utf-8"))
    items = [*data["answerable"], *data["unanswerable"]]
    runnable = [item for item in items if _installed(item)]
    for item in runnable:
        if "file" in item:  # the set's own check: every answer is in its file
            text = _collapse(_file_text(Path(item["folder"]) / item["file"]))
            assert any(_collapse(answer) in text for answer in item["answers"]), item["id"]
    if len(runnable) < len(items):
        print(f"{len(items) - len(runnable)} questions not run: their folder or file is not installed here")
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        asyncio.run(_run(runnable, args.work, args.show))
        return
    with tempfile.TemporaryDirectory() as work:
        asyncio.run(_run(runnable, Path(work), args.show))


if __name__ == "__main__":
    main()
