"""Optional adapters between RETRIEVAL and other workers (import the submodule you need)."""
