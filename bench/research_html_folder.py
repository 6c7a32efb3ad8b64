"""Research over a folder of real HTML documentation: Debian's SQLite manual, ``--documents /usr/share/doc/sqlite3``.

Usage::

    PYTHONPATH=src:. python bench/research_html_folder.py [--set SET] [--show] [--embed] [--work DIR]

``--set sqlite`` (the default): the whole folder Debian's ``sqlite3-doc`` installs (766 HTML pages, the changelogs
and the rest) is one ``--documents`` folder; each question is one ``document-search`` task with the built-in model,
in this process (``run_research``), all tasks sharing one folder cache, which the first task builds (its time is
reported apart). Two question sets: ``web`` (the 13 questions of ``bench/research_web.py``, each about one page)
and ``folder`` (``bench/data/sqlite_folder_questions.json``: 30 answerable questions over 30 other pages and 10
that the manual does not answer, written by someone who had not read the code). A question *hits* when the brief
quotes its phrase from its page (white space collapsed, in any case); an unanswerable one is right when the brief
is ``no-evidence``. The peer in the same run is the folder cache's own BM25 top-1 passage (same index, same
analysis): does it hold the phrase, from the right page? ``--embed`` builds the cache with the packaged embedding
model (hybrid retrieval, as research uses when the ``embed`` extra is installed; the first task then embeds the
whole folder); without it, BM25 only. ``--set nodejs``: Node.js's API documentation as Debian's ``nodejs-doc``
installs it (``/usr/share/doc/nodejs``), with ``bench/data/nodejs_folder_questions.json`` (30 answerable questions,
10 unanswerable, written the same way, after this session's changes: held out). ``--set git`` (Debian's ``git-doc``,
``/usr/share/doc/git-doc``: git's manual pages and guides as HTML beside their AsciiDoc sources, 30 + 10 questions)
and ``--set pyhowto`` (Python 3.11's HOWTO pages, ``/usr/share/doc/python3.11-doc/html/howto``, 20 + 6): written by
a helper that had not read the code, in session 26, and held out since.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDER = Path("/usr/share/doc/sqlite3")


#: The folders and their questions: the SQLite manual (``sqlite3-doc``), and Node.js's API documentation
#: (``nodejs-doc``), whose questions were written after every change of the session that built this, and run
#: once before and once after them: the held-out set.
FOLDERS: dict[str, tuple[Path, str]] = {
    "sqlite": (FOLDER, "sqlite_folder_questions.json"),
    "nodejs": (Path("/usr/share/doc/nodejs"), "nodejs_folder_questions.json"),
    "git": (Path("/usr/share/doc/git-doc"), "git_folder_questions.json"),
    "pyhowto": (Path("/usr/share/doc/python3.11-doc/html/howto"), "pyhowto_folder_questions.json"),
}


def _questions(name: str) -> list[dict[str, Any]]:
    asked: list[dict[str, Any]] = []
    if name == "sqlite":
        from bench.research_web import QUESTIONS

        asked = [{"id": f"w{number:02d}", "set": "web", "question": question, "page": page, "phrase": phrase}
                 for number, (question, page, phrase) in enumerate(QUESTIONS, start=1)]
    data = json.loads((ROOT / "bench/data" / FOLDERS[name][1]).read_text(encoding="utf-8"))
    asked += [{"set": "folder", **item} for item in data["questions"]]
    return asked


def _same_page(path: str, page: str) -> bool:
    """Whether ``path`` (a URI or a path) is ``page`` of the folder, in any of its forms: Node.js's folder ships
    each page's Markdown source beside its HTML (``api/fs.md``, ``api/fs.md.gz``), git's its AsciiDoc source
    (``git-stash.txt``), which say the same."""
    def stem(name: str) -> str:
        for suffix in (".gz", ".html", ".md", ".txt"):
            name = name.removesuffix(suffix)
        return name

    return stem(path).endswith("/" + stem(page))


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def _quotes(brief_path: str | None) -> list[tuple[str, str]]:
    """``(uri, quote)`` of each evidence item of the brief (white space collapsed)."""
    if not brief_path:
        return []
    brief = json.loads(Path(brief_path).read_text(encoding="utf-8"))
    return [(item["uri"], _collapsed(item["quote"])) for item in brief["evidence"]]


def _cache_index(cache: Path) -> Path:
    return next(path for path in cache.iterdir() if path.is_dir())


async def _bm25_top1(cache: Path, question: str) -> tuple[str, str]:
    from ditto.retrieval.index import create_index_search_provider, open_index

    with open_index(_cache_index(cache)) as index:
        provider = create_index_search_provider(index, coordinate=True)
        output = await provider.search({"query": {"content": question}, "target": {"name": "docs"}, "limit": 1,
                                        "strategy": "bm25"})
    if not output.candidates:
        return "", ""
    hit = output.candidates[0]
    return str(hit.metadata["path"]), _collapsed(hit.content)


async def run(name: str, folder: Path, work: Path, embed: bool, show: bool) -> dict[str, Any]:
    from ditto.workflows.research import run_research

    cache = work / "cache"
    env = {"DITTO_INDEX_CACHE_DIR": str(cache), "DITTO_RESEARCH_EMBED": "1" if embed else "0"}
    results: dict[str, Any] = {"first_s": 0.0, "later_s": [], "sets": {}}
    for number, item in enumerate(_questions(name)):
        started = time.perf_counter()
        _, result = await run_research("document-search", {"question": item["question"], "documents": [str(folder)]},
                                       base_dir=work / "tasks", env=env)
        elapsed = time.perf_counter() - started
        if number == 0:
            results["first_s"] = elapsed
        else:
            results["later_s"].append(elapsed)
        row = results["sets"].setdefault(item["set"], {"answerable": 0, "hits": 0, "bm25": 0, "unanswerable": 0,
                                                       "no_evidence": 0})
        quotes = _quotes(result.brief)
        if item["page"] is None:
            row["unanswerable"] += 1
            right = result.status == "no-evidence"
            row["no_evidence"] += right
        else:
            row["answerable"] += 1
            phrase = item["phrase"].lower()
            right = any(_same_page(uri, item["page"]) and phrase in quote.lower() for uri, quote in quotes)
            row["hits"] += right
            path, text = await _bm25_top1(cache, item["question"])
            row["bm25"] += _same_page(path, item["page"]) and phrase in text.lower()
        if show:
            print(f"{'ok  ' if right else 'MISS'} {item['id']} {result.status:<11} {elapsed:5.1f}s {item['question']}"
                  f" [{item['page']}: {item['phrase']}]")
            if not right:
                for uri, quote in quotes:
                    print(f"        {uri.rsplit('/', 1)[-1]}: {quote[:140]}")
            sys.stdout.flush()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=sorted(FOLDERS), default="sqlite", help="which folder and questions")
    parser.add_argument("--folder", type=Path, help="another copy of the set's folder")
    parser.add_argument("--work", type=Path, help="where tasks and the folder cache go (default: a temporary one)")
    parser.add_argument("--embed", action="store_true", help="hybrid retrieval (the embed extra); BM25 otherwise")
    parser.add_argument("--show", action="store_true", help="print each question's outcome")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="ditto-bench-html-") as temporary:
        work = args.work or Path(temporary)
        folder = args.folder or FOLDERS[args.set][0]
        results = asyncio.run(run(args.set, folder, work, args.embed, args.show))
    print(f"Research over {folder} ({'hybrid' if args.embed else 'BM25'} folder cache, built-in model)")
    print("| set | answer quoted from its page | BM25 top-1 passage of the folder | unanswerable → no-evidence |")
    print("| --- | ---: | ---: | ---: |")
    for name, row in results["sets"].items():
        unanswerable = f"{row['no_evidence']}/{row['unanswerable']}" if row["unanswerable"] else "—"
        print(f"| {name} | {row['hits']}/{row['answerable']} | {row['bm25']}/{row['answerable']} | {unanswerable} |")
    print(f"first task (reads and indexes the folder): {results['first_s']:.1f} s; later tasks: median "
          f"{statistics.median(results['later_s']):.2f} s")


if __name__ == "__main__":
    main()
