"""``ditto``: serve workers over HTTP, run and verify research tasks."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import __version__
from ..config import RuntimeConfig, load_runtime_config_file
from ..errors import DittoError
from .factories import load_worker_factory

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="ditto-agents: workers, retrieval and working context for agents.")

TOKEN_ENV = "DITTO_TRANSPORT_HTTP_WORKER_TOKEN"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ditto-agents {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                  help="Print the version and exit.")] = False) -> None:
    """ditto-agents command line."""


@app.command()
def serve(
    worker: Annotated[list[str] | None, typer.Option("--worker", help="module:factory returning "
                                                                      "WorkerDefinition(s).")] = None,
    index: Annotated[Path | None, typer.Option("--index", help="Serve this index (ditto index) as a "
                                                               "RETRIEVAL.SEARCH target.")] = None,
    target: Annotated[str | None, typer.Option("--target", help="The target name of --index (default: the "
                                                                "index directory's name).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Root YAML (workers.*).")] = None,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8080,
) -> None:
    """Serve workers over HTTP with the token from DITTO_TRANSPORT_HTTP_WORKER_TOKEN."""
    import uvicorn

    from ..runtime import create_ditto
    from ..transport import create_worker_http_app

    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        typer.echo(f"refusing to start: {TOKEN_ENV} is not set", err=True)
        raise typer.Exit(2)
    try:
        runtime_config = load_runtime_config_file(config, os.environ) if config else RuntimeConfig()
    except DittoError as error:
        typer.echo(f"configuration error {error.code}: {error.message}", err=True)
        raise typer.Exit(2) from None
    if not worker and index is None:
        raise typer.BadParameter("name what to serve: --worker module:factory and/or --index DIR")
    definitions = [d for spec in worker or [] for d in load_worker_factory(spec, runtime_config)]
    opened: Any = None
    if index is not None:
        from .index import index_worker

        try:
            opened, definition = index_worker(index, target)
        except DittoError as error:
            typer.echo(f"error {error.code}: {error.message}", err=True)
            raise typer.Exit(1) from None
        definitions.append(definition)
    runtime = create_ditto(config=runtime_config, workers=definitions)
    http_app = create_worker_http_app(runtime, token=token)
    typer.echo(json.dumps({"url": f"http://{host}:{port}",
                           "workers": [info.to_wire() for info in runtime.workers()]}), nl=True)
    server = uvicorn.Server(uvicorn.Config(http_app, host=host, port=port, log_level="warning",
                                           access_log=False, lifespan="off"))

    async def run() -> None:
        try:
            await server.serve()
        finally:
            await runtime.close()
            if opened is not None:
                opened.close()

    asyncio.run(run())


def _register_research() -> None:
    from .index import register as register_index
    from .research import register

    register(app)
    register_index(app)


_register_research()


def main() -> None:
    """Run the command; an unexpected exception is printed with its secrets masked, then exit 1.

    Typer would print it (and, with rich, the frames' locals, which hold the
    environment) as is: a crash must not be the one path that leaks a key.
    """
    try:
        app()
    except Exception:
        import traceback

        from ..redaction import installed_secrets, redact

        sys.stderr.write(redact(traceback.format_exc(), installed_secrets()))
        raise SystemExit(1) from None
