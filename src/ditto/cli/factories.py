"""``--worker module:factory``: how the CLI turns a spec into worker definitions (serve and research)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys

import typer

from ..config import RuntimeConfig
from ..errors import DittoError
from ..runtime import WorkerDefinition

__all__ = ["load_worker_factory"]

#: What to use instead of a library factory that needs objects only Python can give.
_HINTS = {
    "ditto.retrieval:create_retrieval_worker": " (it needs a registry of search providers: to serve an index "
                                               "use `ditto serve --index DIR`, or write a module:factory that "
                                               "builds the registry)",
}


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
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        raise typer.BadParameter(f"{spec} is not a function") from None
    required = [p for p in parameters if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if len(required) > 1 or any(p.kind is p.KEYWORD_ONLY for p in required):
        raise typer.BadParameter(f"{spec} needs arguments the command line cannot give "
                                 f"({', '.join(p.name for p in required)}); --worker takes a factory of no "
                                 "argument or of the runtime config" + _HINTS.get(spec, ""))
    try:
        made = factory(config) if parameters else factory()
    except DittoError as error:  # the factory refused the config: say so, no traceback
        raise typer.BadParameter(f"{spec} refused to build a worker: {error.code}: {error.message}"
                                 + _HINTS.get(spec, "")) from None
    definitions = [made] if isinstance(made, WorkerDefinition) else list(made)
    if not definitions or not all(isinstance(item, WorkerDefinition) for item in definitions):
        raise typer.BadParameter(f"{spec} did not return WorkerDefinition(s)")
    return definitions
