"""The research workflow (seed 004): question → queries → evidence → a brief with verified quotes.

Eight entries, each a module with ``async run(runtime, input, options=None)``:
:mod:`document_search`, :mod:`knowledge_base`, :mod:`web_search`,
:mod:`web_read`, :mod:`multi_source`, :mod:`rewrite`, :mod:`expand`,
:mod:`source_location`. Importing connects nothing and runs nothing.

Example::

    from ditto.workflows.research import ResearchRequest, create_task, document_search, open_research_runtime

    task = create_task(ResearchRequest(entry="document-search", question="How long are backups kept?"))
    async with open_research_runtime(task) as runtime:
        result = await document_search.run(runtime, {"directory": str(task.directory)})
    print(result.status, result.brief)
"""

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
from .api import build_request, entry_module, run_research
from .brief import brief_json, brief_markdown, brief_schema, summarize
from .checkpoints import STAGES, cache_scope, checkpoint_key
from .config import DEFAULT_BASE_DIR, ProgressEvent, ResearchOptions, default_base_dir
from .errors import RESEARCH_ERROR_CODES, ResearchError
from .sample import SAMPLE_VOCABULARY, SampleValues, default_question, draw_sample_values
from .sources.knowledge import import_internal_knowledge
from .task_runtime import open_research_runtime, research_workers
from .taskdir import ResearchTask, TaskLock, create_task, open_task
from .types import (
    ENTRIES,
    Brief,
    Coverage,
    Entry,
    Evidence,
    FailedSource,
    QueryRecord,
    ResearchRequest,
    ResearchResult,
    request_id,
)
from .verify import verify_task

__all__ = [
    "DEFAULT_BASE_DIR",
    "ENTRIES",
    "RESEARCH_ERROR_CODES",
    "SAMPLE_VOCABULARY",
    "STAGES",
    "Brief",
    "Coverage",
    "Entry",
    "Evidence",
    "FailedSource",
    "ProgressEvent",
    "QueryRecord",
    "ResearchError",
    "ResearchOptions",
    "ResearchRequest",
    "ResearchResult",
    "ResearchTask",
    "SampleValues",
    "TaskLock",
    "brief_json",
    "brief_markdown",
    "brief_schema",
    "build_request",
    "cache_scope",
    "checkpoint_key",
    "create_task",
    "default_base_dir",
    "default_question",
    "document_search",
    "draw_sample_values",
    "entry_module",
    "expand",
    "import_internal_knowledge",
    "knowledge_base",
    "multi_source",
    "open_research_runtime",
    "open_task",
    "request_id",
    "research_workers",
    "rewrite",
    "run_research",
    "source_location",
    "summarize",
    "verify_task",
    "web_read",
    "web_search",
]
