"""The command line makes OpenBLAS's idle threads sleep at once (a research task's CPU, issue 18)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from tests.research.cli import cli_env

cli_app = importlib.import_module("ditto.cli.app")


def test_the_command_line_sets_the_blas_thread_timeout_before_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: ``ditto`` runs its command with ``OPENBLAS_THREAD_TIMEOUT`` set to OpenBLAS's shortest
    wait, so the spin after each query × matrix product does not cost a research task CPU."""
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    seen: list[str | None] = []
    monkeypatch.setattr(cli_app, "app", lambda: seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT")))
    cli_app.main()
    assert seen == [cli_app.BLAS_THREAD_TIMEOUT] == ["4"]


def test_an_operators_own_blas_setting_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: a value the environment already holds wins."""
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "20")
    seen: list[str | None] = []
    monkeypatch.setattr(cli_app, "app", lambda: seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT")))
    cli_app.main()
    assert seen == ["20"]


def test_the_command_line_loads_numpy_only_after_setting_it() -> None:
    """Issue 18: OpenBLAS reads the variable when numpy first loads it, so the command line must not import
    numpy before ``main`` runs (a new process importing the entry point, as the ``ditto`` script does)."""
    code = "import sys; import ditto.cli; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "False"
