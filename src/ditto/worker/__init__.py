"""Core workers (CONTEXT, MEMORY). RETRIEVAL lives apart in ``ditto.retrieval``."""
