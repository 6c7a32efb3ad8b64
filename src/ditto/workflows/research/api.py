"""One call that creates (or resumes) a task, builds its runtime, runs it and closes everything.

Example::

    result = await run_research("multi-source", {"question": "How long are backups kept?",
                                                 "sources": ["documents", "knowledge"]})
    print(result.brief, result.summary)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...errors import describe_validation_error
from ...runtime import WorkerDefinition
from .config import ResearchOptions, default_base_dir
from .errors import ResearchError
from .sample import SAMPLE_VOCABULARY, default_question
from .task_runtime import open_research_runtime
from .taskdir import ResearchTask, create_task, open_task
from .types import ENTRIES, Entry, ResearchRequest, ResearchResult

__all__ = ["build_request", "default_model", "entry_module", "run_research"]


def entry_module(entry: Entry) -> Any:
    """The module of an entry (``"multi-source"`` → ``ditto.workflows.research.multi_source``)."""
    if entry not in ENTRIES:
        raise ResearchError("RESEARCH_INVALID_INPUT", f"unknown research entry {entry!r}")
    return importlib.import_module(f"{__package__}.{entry.replace('-', '_')}")


def default_model(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``openai`` with ``DITTO_WORKER_INFER_MODEL`` when the environment configures a model server,
    else the built-in ``builtin:extractive``."""
    from ...worker.infer import infer_config_from_env

    source = os.environ if env is None else env
    if infer_config_from_env(source) is not None:
        return {"provider": "openai", "model": source.get("DITTO_WORKER_INFER_MODEL") or None}
    return {"provider": "builtin:extractive"}


def build_request(entry: Entry, fields: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
                  ) -> ResearchRequest:
    """A request for ``entry`` with the defaults (sample question and vocabulary, model) filled in."""
    values = dict(fields or {})
    values.setdefault("question", default_question(entry))
    if entry in ("rewrite", "expand") and values.get("vocabulary") is None:
        values["vocabulary"] = list(SAMPLE_VOCABULARY)
    if values.get("model") is None:
        values["model"] = default_model(env)
    try:
        return ResearchRequest.model_validate({**values, "entry": entry})
    except ValidationError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", describe_validation_error(error, root="request")) from None


async def run_research(entry: Entry, request: Mapping[str, Any] | ResearchRequest | None = None, *,
                       directory: Path | str | None = None, base_dir: Path | str | None = None,
                       options: ResearchOptions | Mapping[str, Any] | None = None,
                       env: Mapping[str, str] | None = None,
                       workers: Sequence[WorkerDefinition] = (), targets: Mapping[str, Any] | None = None,
                       web: Mapping[str, Any] | None = None) -> tuple[ResearchTask, ResearchResult]:
    """Create a task (or, when ``directory`` holds one, resume it) and run it to its end or ``stop_after``.

    Resuming uses the stored request: passing ``request`` together with an
    existing task directory is refused unless it is the same request.
    """
    existing = directory is not None and (Path(directory) / "request.json").exists()
    if existing:
        assert directory is not None
        task = open_task(directory)
        if request is not None:
            wanted = request if isinstance(request, ResearchRequest) else build_request(entry, request, env)
            if wanted != task.request:
                raise ResearchError("RESEARCH_REQUEST_MISMATCH",
                                    "the task directory holds another request; start a new task instead")
    else:
        built = request if isinstance(request, ResearchRequest) else build_request(entry, request, env)
        if built.entry != entry:
            raise ResearchError("RESEARCH_REQUEST_MISMATCH", f"the request is for {built.entry}, not {entry}")
        if base_dir is None and env is not None:
            base_dir = default_base_dir(env)
        task = create_task(built, base_dir=base_dir, directory=directory)
    async with open_research_runtime(task, env=env, workers=workers, targets=targets, web=web) as runtime:
        result = await entry_module(entry).run(runtime, {"directory": str(task.directory)}, options)
    return task, result
