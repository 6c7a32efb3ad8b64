"""Reading BEIR SciFact (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) for the benchmarks that use it.

The readers are the library's own (:mod:`ditto.retrieval.evaluation`, which ``ditto eval beir`` uses), so
the benchmarks and the command score the same queries the same way.
"""

from __future__ import annotations

from ditto.retrieval.evaluation import iter_beir_corpus as iter_corpus
from ditto.retrieval.evaluation import read_beir_qrels as read_qrels
from ditto.retrieval.evaluation import read_beir_queries as read_queries

__all__ = ["iter_corpus", "read_qrels", "read_queries"]
