"""Research on the real SQLite documentation: ``web-read`` with the built-in model, over HTTPS on loopback.

Usage::

    PYTHONPATH=src:. python bench/research_web.py [--show]

The HTML pages Debian's ``sqlite3-doc`` ships are served on 127.0.0.1 with a test CA
(``tests/support/loopback_tls.py``); each question is one ``ditto research web-read --url PAGE
--ca-file CA`` child process, as a user runs it. A question *hits* when the brief quotes the
phrase that answers it (checked by grep in the page beforehand). The peer in the same run is the
page's best paragraph by BM25 over the same extracted text ("BM25 top-1 paragraph"). Also
counted: briefs ``rejected`` (the goal is none: our own model's answer must never be refused).
Needs the Debian packages ``sqlite3-doc`` (``scripts/services`` installs it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: (question, page, phrase of the answer) — phrases grep-checked in the pages' text.
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("When does SQLite run a checkpoint automatically?", "wal.html", "1000 pages"),
    ("What privileges are needed to open a read-only WAL database?", "wal.html", "-shm"),
    ("How is an automatic ROWID chosen for a new row?", "autoinc.html", "largest ROWID"),
    ("What happens when no unused ROWID can be found?", "autoinc.html", "SQLITE_FULL"),
    ("What does the VACUUM command do to the database file?", "lang_vacuum.html", "minimal amount of disk space"),
    ("How can VACUUM make a backup copy of a live database?", "lang_vacuum.html", "INTO clause"),
    ("What is the default maximum length of a string or BLOB?", "limits.html", "1,000,000,000"),
    ("What is the default setting for the maximum number of columns?", "limits.html", "2000"),
    ("How does a column with TEXT affinity store numerical data?", "datatype3.html", "TEXT affinity"),
    ("How do I enable foreign key constraints at runtime?", "foreignkeys.html", "foreign_keys"),
    ("What does an ON DELETE CASCADE action do?", "foreignkeys.html", "CASCADE"),
    ("What does a RESERVED lock mean?", "lockingv3.html", "RESERVED lock means"),
    ("What decides whether temporary files are stored in memory?", "tempfiles.html", "temp_store"),
)


def _bm25_top1(text: str, question: str) -> str:
    from ditto.text import TextAnalyzer, score_documents
    from ditto.text.passages import cut_passages

    analyzer = TextAnalyzer(cjk="unigram")
    spans = cut_passages(text)
    scores = score_documents(analyzer.analyze(question), [analyzer.analyze(text[s.start:s.end]) for s in spans])
    best = max(range(len(spans)), key=lambda index: scores[index]) if spans else -1
    return text[spans[best].start:spans[best].end] if best >= 0 else ""


def run(show: bool) -> dict[str, Any]:
    from tests.support.loopback_tls import make_test_ca, serve_directory
    from tests.support.sqlite_docs import sqlite_docs_dir

    docs = sqlite_docs_dir()
    results: dict[str, Any] = {"questions": len(QUESTIONS), "hits": 0, "rejected": 0, "other": 0, "bm25": 0,
                               "seconds": []}
    with tempfile.TemporaryDirectory(prefix="ditto-bench-web-") as folder:
        base = Path(folder)
        (base / "ca").mkdir()
        ca = make_test_ca(base / "ca")
        with serve_directory(docs, ca) as origin:
            for question, page, phrase in QUESTIONS:
                started = time.monotonic()
                done = subprocess.run(
                    [sys.executable, "-m", "ditto", "research", "web-read", "--url", f"{origin}/{page}",
                     "--ca-file", str(ca.ca_file), "--question", question, "--json", "--base-dir",
                     str(base / "tasks")], capture_output=True, text=True, cwd=ROOT, timeout=300,
                    env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"})
                results["seconds"].append(time.monotonic() - started)
                outcome = json.loads(done.stdout.strip().splitlines()[-1])
                status = outcome["result"]["status"]
                quotes = ""
                if status == "completed":
                    brief = json.loads(Path(outcome["result"]["brief"]).read_text(encoding="utf-8"))
                    quotes = " ".join(item["quote"] for item in brief["evidence"])
                    text = next((Path(outcome["directory"]) / "snapshots").glob("*/extracted.txt")).read_text(
                        encoding="utf-8")
                    results["bm25"] += phrase.lower() in _bm25_top1(text, question).lower()
                elif status == "rejected":
                    results["rejected"] += 1
                else:
                    results["other"] += 1
                hit = phrase.lower() in quotes.lower()
                results["hits"] += hit
                if show:
                    print(f"{'HIT ' if hit else 'miss'} {status:<11} {page:<18} {question}")
                    if not hit and quotes:
                        print(f"       quoted: {quotes[:300]!r}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="print each question's outcome")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    results = run(args.show)
    count = results["questions"]
    print("Real SQLite documentation through `web-read` (built-in model, HTTPS on loopback)")
    print("| evidence | answer quoted | rejected | other | median s per task |\n| --- | ---: | ---: | ---: | ---: |")
    print(f"| research brief | {results['hits']}/{count} ({results['hits'] / count:.0%}) | {results['rejected']} | "
          f"{results['other']} | {statistics.median(results['seconds']):.2f} |")
    print(f"| BM25 top-1 paragraph of the same text | {results['bm25']}/{count} | | | |")


if __name__ == "__main__":
    main()
