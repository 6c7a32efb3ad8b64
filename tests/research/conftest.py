"""Fixtures for the research workflow tests: a scripted model and task helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.research.scripted import ScriptedModel


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tmp_path / "tasks"
