"""``ditto``: serve workers over HTTP, run and verify research tasks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from .. import __version__
from ..config import RuntimeConfig, load_runtime_config_file
from ..errors import DittoError
from ._paths import path_value
from .factories import load_worker_factory

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="ditto-agents: workers, retrieval and working context for agents.")

TOKEN_ENV = "DITTO_TRANSPORT_HTTP_WORKER_TOKEN"
#: Tokens come from the environment, never the command line (which every local user can read in ps).
METRICS_TOKEN_ENV = "DITTO_TRANSPORT_HTTP_METRICS_TOKEN"
_LOG_LEVELS = ("debug", "info", "warning", "error")


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
    index: Annotated[Path | None, typer.Option("--index", parser=path_value, help="Serve this index (ditto index) as a "
                                                               "RETRIEVAL.SEARCH target.")] = None,
    target: Annotated[str | None, typer.Option("--target", help="The target name of --index (default: the "
                                                                "index directory's name).")] = None,
    config: Annotated[Path | None, typer.Option("--config", parser=path_value, help="Root YAML (workers.*).")] = None,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8080,
    grace_period: Annotated[float, typer.Option(
        "--grace-period", min=0, max=86_400,
        help="Seconds the calls in flight may run on after SIGTERM before they are cancelled.")] = 30.0,
    header_timeout: Annotated[float, typer.Option(
        "--header-timeout", min=0.1, max=3600, help="Seconds a request's headers may take to arrive.")] = 10.0,
    body_timeout: Annotated[float, typer.Option(
        "--body-timeout", min=0.1, max=3600, help="Seconds a request's body may take to arrive.")] = 30.0,
    keep_alive: Annotated[int, typer.Option(
        "--keep-alive", min=1, max=3600, help="Seconds an idle keep-alive connection stays open.")] = 5,
    certfile: Annotated[Path | None, typer.Option(
        "--certfile", parser=path_value, help="PEM certificate (chain) to serve HTTPS with.")] = None,
    keyfile: Annotated[Path | None, typer.Option(
        "--keyfile", parser=path_value, help="PEM private key of --certfile (if it is not in the same file).")] = None,
    log_level: Annotated[str, typer.Option(
        "--log-level", help="debug, info (one JSON access line per call), warning or error.")] = "warning",
    metrics: Annotated[bool, typer.Option("--metrics/--no-metrics", help="Serve GET /metrics.")] = True,
    tracing: Annotated[bool, typer.Option(
        "--tracing/--no-tracing", help="An OpenTelemetry span per call (when opentelemetry-api is installed).")] = True,
    trace_sample_ratio: Annotated[float, typer.Option(
        "--trace-sample-ratio", min=0.0, max=1.0,
        help="The share of calls without a caller's trace context that start a trace (decided before "
             "the OpenTelemetry SDK's own sampler).")] = 1.0,
) -> None:
    """Serve workers over HTTP with the token from DITTO_TRANSPORT_HTTP_WORKER_TOKEN.

    /metrics takes DITTO_TRANSPORT_HTTP_METRICS_TOKEN when it is set, else the worker token. SIGTERM
    drains: /readyz turns 503, new calls are refused 503, calls in flight finish (up to --grace-period),
    then the process exits 0.
    """
    from ..runtime import create_ditto
    from ..transport import create_worker_http_app
    from ..transport._serve import configure_logging, serve_app

    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        typer.echo(f"refusing to start: {TOKEN_ENV} is not set", err=True)
        raise typer.Exit(2)
    if keyfile is not None and certfile is None:
        typer.echo("refusing to start: --keyfile needs --certfile", err=True)
        raise typer.Exit(2)
    if log_level.lower() not in _LOG_LEVELS:
        typer.echo(f"refusing to start: --log-level must be one of {', '.join(_LOG_LEVELS)}", err=True)
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
    http_app = create_worker_http_app(runtime, token=token, body_timeout=body_timeout, metrics=metrics,
                                      tracing=tracing, trace_sample_ratio=trace_sample_ratio,
                                      metrics_token=os.environ.get(METRICS_TOKEN_ENV) or None)
    configure_logging(log_level)
    scheme = "https" if certfile else "http"

    def started(loop: str) -> None:
        typer.echo(json.dumps({"url": f"{scheme}://{host}:{port}", "loop": loop,
                               "workers": [info.to_wire() for info in runtime.workers()]}), nl=True)
        sys.stdout.flush()

    async def stop() -> None:
        try:
            await runtime.close()
        finally:
            if opened is not None:
                opened.close()

    serve_app(http_app, host=host, port=port, grace_period=grace_period, header_timeout=header_timeout,
              keep_alive=keep_alive, certfile=str(certfile) if certfile else None,
              keyfile=str(keyfile) if keyfile else None, log_level=log_level, on_start=started,
              on_stop=stop)


def _register_research() -> None:
    from .index import register as register_index
    from .research import register

    register(app)
    register_index(app)


_register_research()


# OpenBLAS's worker threads busy-wait for about 2**28 cycles (a tenth of a second) after every product
# before they sleep; 2**4 cycles is its shortest wait.
BLAS_THREAD_TIMEOUT: Final = "4"


def quiet_blas_threads() -> None:
    """Make OpenBLAS's idle threads sleep at once, unless the environment already says otherwise.

    Why: a research task or a search multiplies one query by the index's vector matrix, then runs Python
    for milliseconds; OpenBLAS's second thread spins all that time. On SciFact that spin was 10–25 % of a
    research task's CPU, while a product's wall time stays the same (docs/benchmarks.md). OpenBLAS reads
    the setting once, when numpy first loads it, which the command line does later than this.
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)


def main() -> None:
    """Run the command; an unexpected exception is printed with its secrets masked, then exit 1.

    Typer would print it (and, with rich, the frames' locals, which hold the
    environment) as is: a crash must not be the one path that leaks a key.
    """
    quiet_blas_threads()
    try:
        app()
    except Exception:
        import traceback

        from ..redaction import installed_secrets, redact

        sys.stderr.write(redact(traceback.format_exc(), installed_secrets()))
        raise SystemExit(1) from None
