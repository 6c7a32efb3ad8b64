"""INFER providers: ``builtin:extractive`` (offline, the default) and ``openai`` (any compatible server)."""

from .builtin import BUILTIN_MODEL, ExtractiveProvider, create_extractive_provider
from .openai import OpenAIProvider, create_openai_provider

__all__ = ["BUILTIN_MODEL", "ExtractiveProvider", "OpenAIProvider", "create_extractive_provider",
           "create_openai_provider"]
