"""Reading BEIR SciFact (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) for the benchmarks that use it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def iter_corpus(root: Path) -> Iterator[dict[str, Any]]:
    """The corpus documents in file order (``_id``, ``title``, ``text``)."""
    with (root / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def read_qrels(root: Path, split: str) -> dict[str, set[str]]:
    """Relevant document ids per query id (positive scores only), in file order."""
    qrels: dict[str, set[str]] = {}
    with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(query_id, set()).add(doc_id)
    return qrels


def read_queries(root: Path) -> dict[str, str]:
    """Query text per query id."""
    with (root / "queries.jsonl").open(encoding="utf-8") as handle:
        return {query["_id"]: query["text"] for query in map(json.loads, handle)}
