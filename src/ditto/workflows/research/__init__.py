"""The research workflow (seed 004): question → queries → evidence → a brief with verified quotes.

Eight entries, each a module with ``async run(runtime, input, options=None)``:
:mod:`document_search`, :mod:`knowledge_base`, :mod:`web_search`,
:mod:`web_read`, :mod:`multi_source`, :mod:`rewrite`, :mod:`expand`,
:mod:`source_location`. Importing connects nothing and runs nothing.

The package exports what a user needs: the entries and their table
(``ENTRY_SPECS``), the request / result / brief types, task creation and
opening, the runtime, ``run_research``, the task as a loop body
(``run_research_loop``), the source port (``ResearchSource``, ``SourceSpec``,
``register_source`` …), ``verify_task``, ``import_internal_knowledge`` and
``ResearchError``. The building blocks (checkpoint keys, sample data, the
brief renderers, the task lock, the stages …) stay importable from their
modules (``.checkpoints``, ``.sample``, ``.brief``, ``.taskdir``, ``.stages``,
``.sources``, ``.api``).

Example::

    from ditto.workflows.research import ResearchRequest, create_task, document_search, open_research_runtime

    task = create_task(ResearchRequest(entry="document-search", question="How long are backups kept?"))
    async with open_research_runtime(task) as runtime:
        result = await document_search.run(runtime, {"directory": str(task.directory)})
    print(result.status, result.brief)
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import (
        document_search,
        expand,
        knowledge_base,
        multi_source,
        rewrite,
        source_location,
        web_read,
        web_search,
    )
    from .api import run_research
    from .brief import brief_schema
    from .config import ProgressEvent, ResearchOptions
    from .entries import ENTRY_SPECS, EntrySpec
    from .errors import ResearchError
    from .loop import run_research_loop
    from .records import Passage
    from .sources.base import ResearchSource, SourceHits, SourceLimits, SourceSetup
    from .sources.knowledge import import_internal_knowledge
    from .sources.registry import SourceSpec, register_source, unregister_source
    from .task_runtime import open_research_runtime
    from .taskdir import ResearchTask, create_task, open_task
    from .types import (
        ENTRIES,
        Answer,
        AnswerSentence,
        Brief,
        Coverage,
        Evidence,
        FailedSource,
        QueryRecord,
        ResearchRequest,
        ResearchResult,
        request_id,
    )
    from .verify import verify_task

#: Every public name and the module it lives in: importing the package loads none of them, so a caller
#: that needs one table (the CLI's entry list) does not pay for the whole workflow.
_LAZY: dict[str, str] = {
    "Answer": ".types",
    "AnswerSentence": ".types",
    "Brief": ".types",
    "Coverage": ".types",
    "ENTRIES": ".types",
    "ENTRY_SPECS": ".entries",
    "EntrySpec": ".entries",
    "Evidence": ".types",
    "FailedSource": ".types",
    "Passage": ".records",
    "ProgressEvent": ".config",
    "QueryRecord": ".types",
    "ResearchError": ".errors",
    "ResearchOptions": ".config",
    "ResearchRequest": ".types",
    "ResearchResult": ".types",
    "ResearchSource": ".sources.base",
    "ResearchTask": ".taskdir",
    "SourceHits": ".sources.base",
    "SourceLimits": ".sources.base",
    "SourceSetup": ".sources.base",
    "SourceSpec": ".sources.registry",
    "brief_schema": ".brief",
    "create_task": ".taskdir",
    "document_search": ".document_search",
    "expand": ".expand",
    "import_internal_knowledge": ".sources.knowledge",
    "knowledge_base": ".knowledge_base",
    "multi_source": ".multi_source",
    "open_research_runtime": ".task_runtime",
    "open_task": ".taskdir",
    "register_source": ".sources.registry",
    "request_id": ".types",
    "rewrite": ".rewrite",
    "run_research": ".api",
    "run_research_loop": ".loop",
    "source_location": ".source_location",
    "unregister_source": ".sources.registry",
    "verify_task": ".verify",
    "web_read": ".web_read",
    "web_search": ".web_search",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(module, __name__)
    value = loaded if module == f".{name}" else getattr(loaded, name)
    globals()[name] = value
    return value


__all__ = [
    "ENTRIES",
    "ENTRY_SPECS",
    "Answer",
    "AnswerSentence",
    "Brief",
    "Coverage",
    "EntrySpec",
    "Evidence",
    "FailedSource",
    "Passage",
    "ProgressEvent",
    "QueryRecord",
    "ResearchError",
    "ResearchOptions",
    "ResearchRequest",
    "ResearchResult",
    "ResearchSource",
    "ResearchTask",
    "SourceHits",
    "SourceLimits",
    "SourceSetup",
    "SourceSpec",
    "brief_schema",
    "create_task",
    "document_search",
    "expand",
    "import_internal_knowledge",
    "knowledge_base",
    "multi_source",
    "open_research_runtime",
    "open_task",
    "register_source",
    "request_id",
    "rewrite",
    "run_research",
    "run_research_loop",
    "source_location",
    "unregister_source",
    "verify_task",
    "web_read",
    "web_search",
]
