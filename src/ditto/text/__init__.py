"""Text analysis and lexical scoring shared by every worker (no optional dependency needed).

``word_terms`` is the cheap notion of a term; ``TextAnalyzer`` the configurable
pipeline (stop words, Snowball stemming, CJK segmentation); ``score_documents``
BM25 over a few texts. RETRIEVAL's engine, MEMORY's re-scoring, CONTEXT's term
overlap and INFER's built-in model all take their terms from here.
"""

from .analysis import CJK_CLASS, CJK_STOPWORDS, ENGLISH_STOPWORDS, CjkMode, TextAnalyzer, word_terms
from .bm25 import BM25_B, BM25_K1, bm25_score, score_documents

__all__ = [
    "BM25_B",
    "BM25_K1",
    "CJK_CLASS",
    "CJK_STOPWORDS",
    "ENGLISH_STOPWORDS",
    "CjkMode",
    "TextAnalyzer",
    "bm25_score",
    "score_documents",
    "word_terms",
]
