"""``ditto research <entry>`` and ``ditto verify <task-dir>``.

On a terminal the run shows live progress (stage, source, counts) on stderr;
stdout carries only the final ``{"directory": ..., "result": ...}`` JSON
(indented on a terminal, one line when piped or with ``--json``). Logs go to
stderr. Exit status: 0 when a brief was written or the run stopped as asked,
1 when the task was blocked, rejected or failed (or ``verify`` found
mismatches), 2 for a usage error.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final, cast

import typer

from ..config import RuntimeConfig
from ..errors import DittoError
from ..redaction import RedactingFilter, install_redaction, printable
from ..text.unwrap import unwrap
from ..workflows.research.entries import ENTRIES, ENTRY_SPECS, Entry, entry_name
from ..workflows.research.types import is_postgres_dsn
from ._paths import path_value

__all__ = ["register"]


#: The entries, from the workflow's entry table (one home per entry: the stages and the API read it too).


def _entry_name(value: str) -> Entry:
    """The entry named on the command line (its Python name, ``document_search``, means the same)."""
    entry = entry_name(value)
    if entry is None:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(map(repr, ENTRIES))}.")
    return entry


_ENTRIES_EPILOG = "Entries:\n\n" + "\n\n".join(f"{spec.entry}: {spec.summary}" for spec in ENTRY_SPECS.values())


class KnowledgeName(StrEnum):
    internal = "internal"
    external = "external"
    both = "both"


class StopAfter(StrEnum):
    queries = "queries"
    evidence = "evidence"


class EngineName(StrEnum):
    wikipedia = "wikipedia"
    brave = "brave"


_OK_STATUSES = frozenset({"completed", "no-evidence", "partial", "stopped"})
#: A request the workflow refuses or a configuration that cannot work: exit 2, like a usage error.
_USAGE_CODES = frozenset({"RESEARCH_INVALID_INPUT", "INVALID_ARGUMENT"})


#: A vocabulary holds at most 256 entries of at most 200 characters: a larger file is a mistake, not input.
_MAX_VOCABULARY_BYTES = 1 << 20


def _read_vocabulary(path: Path) -> list[str]:
    """The entries of a vocabulary file (one per line, blank lines skipped); what is wrong with it, named."""
    def refused(reason: str) -> typer.BadParameter:
        return typer.BadParameter(f"the vocabulary file {printable(path)} {reason}", param_hint="--vocabulary")

    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_VOCABULARY_BYTES + 1)
    except FileNotFoundError:
        raise refused("does not exist") from None
    except IsADirectoryError:
        raise refused("is a folder (give a text file, one query per line)") from None
    except OSError as error:
        raise refused(f"cannot be read ({error.strerror or type(error).__name__})") from None
    if len(data) > _MAX_VOCABULARY_BYTES:
        raise refused("is larger than 1 MiB")
    if b"\x00" in data:
        raise refused("is not text (it holds NUL bytes)")
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise refused(f"is not UTF-8 text (byte {error.start})") from None
    entries = [line.strip() for line in lines if line.strip()]
    if not entries:
        raise refused("has no entries")
    return entries


#: The request fields the command line sets, by the flag that sets each: a refused request names the flag.
_FLAGS: Final = {"question": "--question", "tenant": "--tenant", "sources": "--sources", "knowledge": "--knowledge",
                 "allow_partial": "--allow-partial", "search_engine": "--search-engine", "wiki_url": "--wiki-url",
                 "documents": "--documents", "index": "--index", "ignore": "--ignore", "kb": "--kb",
                 "memory": "--memory", "urls": "--url", "allowed_origins": "--allowed-origin",
                 "vocabulary": "--vocabulary", "internal_knowledge_keys": "--internal-key", "model": "--model"}
_FIELD_PREFIX: Final = re.compile(r"(?P<field>[a-z_]+)(?:\.(?P<item>\d+))?(?:\.[\w.]+)?: ")


def _as_flags(message: str) -> str:
    """A request validation message (``internal_knowledge_keys.0: …``) as the command line says it
    (``--internal-key (the 1st): …``); other messages unchanged."""
    match = _FIELD_PREFIX.match(message)
    if match is None or match["field"] not in _FLAGS:
        return message
    flag = _FLAGS[match["field"]]
    if match["item"] is not None:
        number = int(match["item"]) + 1
        suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
        flag = f"{flag} (the {number}{suffix})"
    return f"{flag}: {message[match.end():]}"


def _print_failure(directory: Path | None, code: str, message: str) -> None:
    """The result JSON of a task that could not run (the one line a ``--json`` caller parses)."""
    if code == "RESEARCH_INVALID_INPUT":
        message = _as_flags(message)
    typer.echo(json.dumps({"directory": str(directory) if directory else None,
                           "result": {"status": "failed", "error": {"code": code, "message": message}}},
                          ensure_ascii=False))


class _BriefLogFormatter(logging.Formatter):
    """One line per log record on stderr; a logged failure's traceback only with ``--verbose``.

    Sources fail in ordinary ways (no network, a missing file): the library logs
    them with their traceback for operators, but a person at the command line
    needs the one line that names what failed.
    """

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        error = record.exc_info[1] if record.exc_info else None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            line = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        return f"{line} ({type(error).__name__}; --verbose shows the traceback)" if error is not None else line


def _configure_logging(verbose: bool) -> RedactingFilter:
    handler = logging.StreamHandler(sys.stderr)
    formatter = "%(levelname)s:%(name)s:%(message)s"
    handler.setFormatter(logging.Formatter(formatter) if verbose else _BriefLogFormatter(formatter))
    guard = install_redaction([handler])  # secrets masked and names escaped in every line, verbose or not
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    return guard


def _environment() -> dict[str, str]:
    """The process environment over ``./.env`` when there is one.

    The model provider (``DITTO_WORKER_INFER_*``) and the Redis URL are
    configured in ``.env``, as in the seed; the command is the application that
    chooses to read it. Variables already set in the process win.
    """
    from ..config import load_dotenv_mapping

    env: dict[str, str] = {}
    dotenv = Path(".env")
    if dotenv.is_file():
        try:
            env.update(load_dotenv_mapping(dotenv))
        except (OSError, UnicodeDecodeError):
            raise typer.BadParameter("cannot read ./.env") from None
    env.update(os.environ)
    return env


def _request_fields(**given: Any) -> dict[str, Any]:
    return {key: value for key, value in given.items() if value is not None}


class _Progress:
    """Live progress on a terminal (rich), silent otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.console: Any = None
        self.status: Any = None
        if enabled:
            from rich.console import Console

            self.console = Console(stderr=True)

    def __enter__(self) -> _Progress:
        if self.console is not None:
            self.status = self.console.status("starting")
            self.status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)

    def __call__(self, event: Any) -> None:
        if self.console is None:
            return
        line = describe_progress(event)
        self.status.update(line)
        if event.total is None or event.count is None or event.count >= event.total:
            self.console.print(line, highlight=False)  # a step of a longer phase is shown in place only


def describe_progress(event: Any) -> str:
    """One line for a progress event: the stage, the source, what happened with its count in words."""
    count = event.count
    message = event.message
    if event.stage == "queries" and count is not None:
        message = f"{count} quer{'y' if count == 1 else 'ies'}: {message}"
    elif message == "hits" and count is not None:
        message = f"{count} passage{'' if count == 1 else 's'} found"
    elif message == "choosing excerpts" and count is not None:
        message = f"the model is choosing excerpts from {count} passage{'' if count == 1 else 's'}"
    elif event.total is not None and count is not None:
        message = f"{message} {count}/{event.total}"
    elif event.stage == "request" and count:
        message = f"{message} ({count} knowledge record{'' if count == 1 else 's'} imported)"
    source = f" {event.source}" if event.source else ""
    return f"[bold]{event.stage}[/bold][cyan]{source}[/cyan]  {escape_markup(message)}"


def escape_markup(text: str) -> str:
    """Text shown verbatim by rich (a query or a file name may hold ``[``)."""
    from rich.markup import escape

    return escape(text)


def closing_summary(result: Any) -> str:
    """What a person reads last on a terminal: the answer (when there is one), the status, where the brief is."""
    lines: list[str] = []
    if result.brief:
        try:
            data = json.loads(Path(result.brief).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        answer = data.get("answer") if isinstance(data, dict) else None
        if isinstance(answer, dict) and answer.get("sentences"):
            lines.append("Answer:")
            for sentence in answer["sentences"]:
                cited = ", ".join(sentence.get("evidence", []))
                lines.append(f"  {unwrap(str(sentence.get('text', '')))} [{cited}]")
        for item in data.get("coverage", []) if isinstance(data, dict) else []:
            for note in item.get("notes", []):
                lines.append(f"note ({item.get('source')}): {note}")
    said = result.summary or (f"{result.error.code}: {result.error.message}" if result.error else "")
    lines.append(said if said.startswith(result.status) else f"{result.status}: {said}")
    if result.brief_markdown:
        lines.append(f"brief: {result.brief_markdown}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add ``research`` and ``verify`` to the ``ditto`` command."""

    @app.command(epilog=_ENTRIES_EPILOG)
    def research(
        entry: Annotated[str, typer.Argument(
            parser=_entry_name, metavar="entry", show_default=False,
            help=f"Which research entry to run: {', '.join(ENTRIES)} (listed below).")],
        more_documents: Annotated[list[Path] | None, typer.Argument(parser=path_value,
            help="More document paths after --documents (--documents A B is --documents A --documents B).",
            show_default=False)] = None,
        question: Annotated[str | None, typer.Option("--question", help="The question (required with your own sources; "
                                                                    "the entry's sample question otherwise).")]
        = None,
        knowledge: Annotated[KnowledgeName | None, typer.Option("--knowledge", help="Internal, external or both.")]
        = None,
        stop_after: Annotated[StopAfter | None, typer.Option("--stop-after", help="Stop after this stage.")] = None,
        directory: Annotated[Path | None, typer.Option(
            "--directory", parser=path_value, help="Resume the task in this directory.")]
        = None,
        allow_partial: Annotated[bool | None, typer.Option("--allow-partial/--no-allow-partial",
                                                           help="Keep the sources that worked.")] = None,
        search_engine: Annotated[EngineName | None, typer.Option("--search-engine")] = None,
        wiki_url: Annotated[str | None, typer.Option(
            "--wiki-url", help="Search this MediaWiki instead of Wikipedia: its API address, e.g. "
                               "https://wiki.example/w/api.php (an intranet wiki works).")] = None,
        ca_file: Annotated[Path | None, typer.Option(
            "--ca-file", parser=path_value,
            help="A PEM file of certificate authorities to trust for web search and reading "
                              "(a company CA); also allowed when resuming.")] = None,
        documents: Annotated[list[Path] | None, typer.Option(
            "--documents", parser=path_value,
            help="Files or folders (recursive): Markdown, plain text, documentation named README/NEWS/…, HTML.")]
        = None,
        ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Glob of documents to skip.")] = None,
        index: Annotated[Path | None, typer.Option(
            "--index", parser=path_value, help="Search this index (made by `ditto index`) "
                                               "instead of reading --documents.")] = None,
        kb: Annotated[str | None, typer.Option("--kb", help="SQLite FTS5 file, PostgreSQL DSN or target:NAME.")]
        = None,
        memory: Annotated[str | None, typer.Option("--memory", help="An existing MEMORY SQLite store, or a "
                                                                    "PostgreSQL DSN (postgresql://…) that several "
                                                                    "controllers share.")] = None,
        create_memory: Annotated[bool, typer.Option("--create-memory", help="Make the --memory store if it "
                                                                            "does not exist.")] = False,
        internal_key: Annotated[list[str] | None, typer.Option("--internal-key", help="Allowed knowledge key.")]
        = None,
        vocabulary: Annotated[Path | None, typer.Option(
            "--vocabulary", parser=path_value, help="One query per line.")] = None,
        sources: Annotated[list[str] | None, typer.Option("--sources", help="Comma list: documents,knowledge,web "
                                                                            "(or the option repeated).")]
        = None,
        url: Annotated[list[str] | None, typer.Option("--url", help="Page to read (web-read; at most 2).")] = None,
        allowed_origin: Annotated[list[str] | None, typer.Option(
            "--allowed-origin", help="An https:// origin web pages may be read from (repeatable). Default: the "
                                     "origins of the --url pages, or the wiki's own origin for web search; "
                                     "required with --search-engine brave.")] = None,
        tenant: Annotated[str | None, typer.Option("--tenant")] = None,
        model: Annotated[str | None, typer.Option("--model", help="INFER provider or provider/model: "
                                                                  "builtin:extractive (default), openai or "
                                                                  "openai/NAME.")] = None,
        base_dir: Annotated[Path | None, typer.Option("--base-dir", parser=path_value, help="Where new task folders go "
                                                                         "(default ./ditto-tasks).")] = None,
        worker: Annotated[list[str] | None, typer.Option("--worker", help="module:factory replacing a default "
                                                                          "worker of the same type.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Only the result JSON on stdout.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", help="Log failures with their tracebacks.")] = False,
    ) -> None:
        """Run a research task: question -> queries -> evidence -> a brief with verified quotes."""
        from ..workflows.research import ResearchOptions, run_research
        from .factories import load_worker_factory

        redaction = _configure_logging(verbose)
        if more_documents:
            if not documents:
                raise typer.BadParameter(f"unexpected argument(s): {' '.join(map(str, more_documents))}")
            documents = [*documents, *more_documents]
        model_ref = None
        if model is not None:
            provider, _, name = model.partition("/")
            if not provider:
                raise typer.BadParameter("--model must look like provider or provider/model")
            model_ref = {"provider": provider, "model": name or None}
        fields = _request_fields(
            question=question, knowledge=knowledge.value if knowledge else None, allow_partial=allow_partial,
            search_engine=search_engine.value if search_engine else None,
            documents=[str(path.resolve()) for path in documents] if documents else None,
            index=str(index.resolve()) if index is not None else None,
            ignore=ignore or None, kb=_kb_value(kb), memory=_memory_value(memory),
            internal_knowledge_keys=internal_key or None,
            vocabulary=_read_vocabulary(vocabulary) if vocabulary else None,
            sources=[part.strip() for item in sources for part in item.split(",") if part.strip()] or None
            if sources else None,
            urls=url or None, allowed_origins=allowed_origin or None, tenant=tenant, model=model_ref,
            wiki_url=wiki_url)
        resuming = directory is not None and (directory / "request.json").exists()
        if (memory is not None and create_memory and not resuming and not is_postgres_dsn(memory)
                and not os.path.lexists(memory)):
            try:  # an empty file is an empty SQLite store; the library refuses a missing one
                os.close(os.open(memory, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            except OSError:
                raise typer.BadParameter(f"cannot create the MEMORY store {memory}") from None
        if resuming and fields:
            message = (f"a task's request is fixed; these options cannot change it: {', '.join(sorted(fields))} "
                       "(start a new task instead)")
            typer.echo(message, err=True)
            _print_failure(directory, "RESEARCH_REQUEST_MISMATCH", message)
            raise typer.Exit(2)
        environment = _environment()
        redaction.watch(environment)  # keys kept in ./.env are secrets too
        workers = [d for spec in worker or [] for d in load_worker_factory(spec, RuntimeConfig())]
        terminal = sys.stderr.isatty() and not as_json
        with _Progress(terminal) as progress:
            options = ResearchOptions(stop_after=stop_after.value if stop_after else None,
                                      progress=progress if terminal else None)
            try:
                web = {"ca_file": str(ca_file.resolve())} if ca_file is not None else None
                task, result = asyncio.run(_run_and_close(
                    run_research(cast(Entry, entry), None if resuming else fields, directory=directory,
                                 base_dir=base_dir, options=options, workers=workers, env=environment, web=web),
                    workers))
            except DittoError as error:  # ResearchError included: a refused request, a bad configuration
                _print_failure(directory, error.code, error.message)
                raise typer.Exit(2 if error.code in _USAGE_CODES else 1) from None
        output = {"directory": str(task.directory), "result": result.to_json_dict()}
        pretty = sys.stdout.isatty() and not as_json
        typer.echo(json.dumps(output, indent=2 if pretty else None, ensure_ascii=False))
        if terminal:
            typer.echo(closing_summary(result), err=True)
        raise typer.Exit(0 if result.status in _OK_STATUSES else 1)

    @app.command()
    def verify(directory: Annotated[Path, typer.Argument(
            parser=path_value, help="A task directory with artifacts/brief.json.")]) -> None:
        """Re-check a brief offline against its task folder (and its signature with DITTO_RESEARCH_SIGNING_KEY)."""
        from ..workflows.research.signing import signing_key
        from ..workflows.research.verify import check_task

        try:
            report = check_task(directory, signing_key=signing_key(os.environ))
        except DittoError as error:
            typer.echo(json.dumps({"directory": str(directory), "ok": False, "problems": [error.message], "notes": []},
                                  ensure_ascii=False))
            raise typer.Exit(2) from None
        typer.echo(json.dumps({"directory": str(directory), "ok": report.ok, "problems": list(report.problems),
                               "notes": list(report.notes)}, ensure_ascii=False))
        raise typer.Exit(0 if report.ok else 1)


async def _run_and_close(run: Any, workers: list[Any]) -> Any:
    """Run the task, then close the workers the command made from ``--worker`` (their HTTP sessions)."""
    try:
        return await run
    finally:
        for definition in workers:
            close = getattr(definition, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:
                    logging.getLogger("ditto.cli").exception("closing a --worker failed")


def _memory_value(memory: str | None) -> str | None:
    if memory is None or is_postgres_dsn(memory):
        return memory
    return str(path_value(memory, "--memory").resolve())


def _kb_value(kb: str | None) -> str | None:
    if kb is None or kb.startswith(("postgres://", "postgresql://", "target:")):
        return kb
    return str(path_value(kb, "--kb").resolve())
