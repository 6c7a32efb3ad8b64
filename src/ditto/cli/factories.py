"""``--worker module:factory``: how the CLI turns a spec into worker definitions (serve and research)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys

import typer

from ..config import RuntimeConfig
from ..runtime import WorkerDefinition

__all__ = ["load_worker_factory"]


def load_worker_factory(spec: str, config: RuntimeConfig) -> list[WorkerDefinition]:
    """Import ``module:factory`` and call it (with the config if it takes one)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise typer.BadParameter(f"--worker must look like module:factory, got {spec!r}")
    if os.getcwd() not in sys.path:  # like uvicorn's --app-dir ".": factories may live in the project
        sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise typer.BadParameter(f"cannot import {spec}: {exc}") from None
    made = factory(config) if inspect.signature(factory).parameters else factory()
    definitions = [made] if isinstance(made, WorkerDefinition) else list(made)
    if not definitions or not all(isinstance(item, WorkerDefinition) for item in definitions):
        raise typer.BadParameter(f"{spec} did not return WorkerDefinition(s)")
    return definitions
