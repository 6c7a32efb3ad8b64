"""Embedded search engines used by the RETRIEVAL text provider.

``BM25Index`` is an in-process BM25 (Lucene variant) index built on bm25s with an
English/CJK analyzer, metadata filters, incremental changes and save/load.
"""

from ...text.analysis import TextAnalyzer
from .bm25 import BM25Index, IndexedDocument, MatchMode, ProgressCallback, TextDocument
from .filters import FILTER_OPERATORS, FilterCondition, parse_filter

__all__ = [
    "FILTER_OPERATORS",
    "BM25Index",
    "FilterCondition",
    "IndexedDocument",
    "MatchMode",
    "ProgressCallback",
    "TextAnalyzer",
    "TextDocument",
    "parse_filter",
]
