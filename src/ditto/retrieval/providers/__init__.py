"""Search providers. Import the module you need; this package imports nothing heavy.

Even ``local_embedding`` imports its runtime (ONNX Runtime, or sentence-transformers and torch) only
when a provider is built, so naming it (or ``ditto.retrieval.create_local_embedding_provider``) costs
nothing until used.
"""
