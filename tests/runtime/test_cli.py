"""The `ditto` console script."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import ditto
from ditto.cli import app

runner = CliRunner()


def test_help_and_version() -> None:
    """RT-6: `ditto --help` lists commands; `--version` prints the package version."""
    assert "serve" in runner.invoke(app, ["--help"]).output
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and ditto.__version__ in result.output


def test_serve_refuses_without_token() -> None:
    """RT-6: `ditto serve` will not start without DITTO_TRANSPORT_HTTP_WORKER_TOKEN."""
    env = {k: v for k, v in os.environ.items() if k != "DITTO_TRANSPORT_HTTP_WORKER_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "ditto", "serve", "--worker", "tests.runtime.workers:make",
                           "--port", "1"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "DITTO_TRANSPORT_HTTP_WORKER_TOKEN" in done.stderr


@pytest.mark.parametrize("spec", ["nocolon", "tests.runtime.workers:missing", "no.such.module:make"])
def test_serve_bad_worker_spec(spec: str) -> None:
    """RT-6: a bad --worker spec is a usage error, not a traceback."""
    result = runner.invoke(app, ["serve", "--worker", spec], env={"DITTO_TRANSPORT_HTTP_WORKER_TOKEN": "t"})
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    text = " ".join(result.output.replace("│", " ").split())
    assert "Traceback" not in result.output and "Invalid value" in text and spec in text
