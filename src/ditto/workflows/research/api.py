"""One call that creates (or resumes) a task, builds its runtime, runs it and closes everything.

Example::

    result = await run_research("multi-source", {"question": "How long are backups kept?",
                                                 "sources": ["documents", "knowledge"]})
    print(result.brief, result.summary)
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...errors import DittoError, InvalidArgumentError, describe_validation_error
from ...runtime import WorkerDefinition
from .config import ResearchOptions, default_base_dir
from .entries import entry_name, entry_spec
from .errors import ResearchError
from .sample import SAMPLE_VOCABULARY, default_question
from .signing import signing_key
from .task_runtime import open_research_runtime
from .taskdir import ResearchTask, create_task, open_task
from .types import ENTRIES, Entry, ResearchRequest, ResearchResult

__all__ = ["build_request", "default_model", "entry_module", "known_entry", "run_research"]

logger = logging.getLogger("ditto.workflows.research")


def known_entry(entry: object) -> Entry:
    """``entry`` as the table spells it (``document_search`` means ``document-search``);
    ``RESEARCH_INVALID_INPUT`` for a name that is no entry."""
    known = entry_name(entry)
    if known is None:
        raise ResearchError("RESEARCH_INVALID_INPUT",
                            f"unknown research entry {entry!r}; the entries are {', '.join(ENTRIES)}")
    return known


def entry_module(entry: Entry) -> Any:
    """The module of an entry (``"multi-source"`` → ``ditto.workflows.research.multi_source``)."""
    return importlib.import_module(f"{__package__}.{known_entry(entry).replace('-', '_')}")


def default_model(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``openai`` with ``DITTO_WORKER_INFER_MODEL`` when the environment configures a model server,
    else the built-in ``builtin:extractive``."""
    from ...worker.infer import infer_config_from_env

    source = os.environ if env is None else env
    if infer_config_from_env(source) is not None:
        return {"provider": "openai", "model": source.get("DITTO_WORKER_INFER_MODEL") or None}
    return {"provider": "builtin:extractive"}


#: Request fields that name the caller's own material, and the source kind each one feeds.
_OWN_SOURCES: dict[str, str] = {"documents": "documents", "index": "documents", "kb": "knowledge",
                                "memory": "knowledge", "urls": "web"}
#: The tenant of a task on the caller's own sources when none is named (``acme`` is the sample's).
DEFAULT_TENANT = "default"


def build_request(entry: Entry, fields: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
                  ) -> ResearchRequest:
    """A request for ``entry`` with the defaults filled in.

    On the generated sample data: the entry's sample question, the sample
    vocabulary, tenant ``acme``. On the caller's own sources (``documents``,
    ``kb``, ``memory``, ``urls``) nothing of the sample is used: the question is
    required, ``rewrite``/``expand`` need the caller's vocabulary, the tenant
    defaults to ``default``, and unless ``sources`` is given the task reads only
    the kinds the caller named (so no sample knowledge base is cited next to
    the caller's files).
    """
    entry = known_entry(entry)
    values = {key: value for key, value in dict(fields or {}).items() if value is not None}
    own = [name for name in _OWN_SOURCES if values.get(name) is not None]
    if own:
        if not values.get("question"):
            raise ResearchError("RESEARCH_INVALID_INPUT", "name the question (--question) when the task reads your "
                                                          f"own sources ({', '.join(own)})")
        if entry in ("rewrite", "expand") and values.get("vocabulary") is None:
            raise ResearchError("RESEARCH_INVALID_INPUT", f"{entry} on your own sources needs your controlled "
                                                          "vocabulary (--vocabulary, one query per line)")
        values.setdefault("tenant", DEFAULT_TENANT)
        if "sources" not in values:
            wanted = {_OWN_SOURCES[name] for name in own}
            chosen = [kind for kind in entry_spec(entry).sources if kind in wanted]
            values["sources"] = chosen or sorted(wanted)
    values.setdefault("question", default_question(entry))
    if entry in ("rewrite", "expand") and values.get("vocabulary") is None:
        values["vocabulary"] = list(SAMPLE_VOCABULARY)
    if values.get("model") is None:
        values["model"] = default_model(env)
    try:
        return ResearchRequest.model_validate({**values, "entry": entry})
    except ValidationError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", describe_validation_error(error, root="request")) from None


def _check_model_configured(request: ResearchRequest, env: Mapping[str, str]) -> None:
    """The default INFER worker serves the built-in model, and ``openai`` when the environment configures it."""
    from ...worker.infer import infer_config_from_env

    provider = request.model.provider
    if provider == "builtin:extractive":
        return
    try:
        configured = infer_config_from_env(env, model=request.model.model if provider == "openai" else None) is not None
    except DittoError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", f"the model is not configured: {error.message}") from None
    if provider != "openai" or not configured:
        raise ResearchError("RESEARCH_INVALID_INPUT",
                            f"the model provider {provider!r} is not configured: for an OpenAI-compatible server "
                            "set DITTO_WORKER_INFER_BASE_URL and DITTO_WORKER_INFER_MODEL (in the environment or "
                            "./.env), or bring your own INFER worker")


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
    entry = known_entry(entry)
    try:  # refused before a task folder exists
        chosen = ResearchOptions.coerce(options)
    except InvalidArgumentError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", error.message) from None
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
        if not any(worker.type == "INFER" for worker in workers):
            _check_model_configured(built, os.environ if env is None else env)
        if base_dir is None and env is not None:
            base_dir = default_base_dir(env)
        task = create_task(built, base_dir=base_dir, directory=directory)
    key = signing_key(os.environ if env is None else env)
    if chosen.signing_key is None and key is not None:  # the environment's key signs every brief written
        chosen = dataclasses.replace(chosen, signing_key=key)
    async with contextlib.AsyncExitStack() as stack:
        try:
            runtime = await stack.enter_async_context(
                open_research_runtime(task, env=env, workers=workers, targets=targets, web=web,
                                      progress=chosen.progress))
        except Exception as error:
            if not existing:  # a refused configuration leaves no half-usable task behind
                shutil.rmtree(task.directory, ignore_errors=True)
            if isinstance(error, ResearchError):
                raise
            if isinstance(error, DittoError | ValueError):
                message = error.message if isinstance(error, DittoError) else str(error)
                raise ResearchError("RESEARCH_INVALID_INPUT", f"the task's workers cannot be set up: {message}"
                                    ) from None
            logger.exception("setting up the task's workers failed")
            raise ResearchError("RESEARCH_INVALID_INPUT", "the task's workers cannot be set up "
                                                          f"({type(error).__name__}; see the log)") from None
        result = await entry_module(entry).run(runtime, {"directory": str(task.directory)}, chosen)
    return task, result
