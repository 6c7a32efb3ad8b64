"""Root test configuration: shared by every test folder; keep it small.

Hypothesis profiles. ``CI`` set in the environment selects ``ci``: derandomized (every run replays the
same examples, so a red build reproduces anywhere and a green one is not luck), no example database,
60 examples a property. Without ``CI`` the ``dev`` profile draws 30 fresh random examples a run.

Derandomized means a property never sees more than its fixed example set in CI, so the properties that
guard a security boundary (allowed web origins, verbatim quotes, per-source limits) are decorated with
the ``security`` profile instead: the same derandomization and database as the active profile, but at
least :data:`SECURITY_EXAMPLES` examples, in CI and locally, next to explicit ``@example``s of the attacks::

    @settings.get_profile("security")
    @example(url="https://docs.example@evil.example/")
    @given(url=...)
    def test_only_allowed_origins_pass(url: str) -> None: ...
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

#: The real servers (SQLite docs, MediaWiki over HTTPS on loopback), shared by every suite that asks for them.
pytest_plugins = ["tests.support.real_servers"]

#: Built and installed by scripts/package-check only.
_PACKAGE_TESTS = Path(__file__).resolve().parent / "package"

#: Examples per security-relevant property, whatever the profile.
SECURITY_EXAMPLES = 150

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, database=None, print_blob=True,
                          suppress_health_check=_SUPPRESS)
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=_SUPPRESS)
_ACTIVE = "ci" if os.environ.get("CI") else "dev"
settings.load_profile(_ACTIVE)
settings.register_profile("security", parent=settings.get_profile(_ACTIVE),
                          max_examples=max(SECURITY_EXAMPLES, settings.get_profile(_ACTIVE).max_examples))


def pytest_addoption(parser: Any) -> None:
    """``--package-check``: run ``tests/package`` (the built wheel in fresh venvs; ``scripts/package-check``).
    ``--heavy-extras`` adds the extras too heavy for CI (embed, milvus), each installed alone."""
    parser.addoption("--package-check", action="store_true", help="run tests/package (scripts/package-check)")
    parser.addoption("--heavy-extras", action="store_true", help="with --package-check: the heavy extras too")


def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
    """``tests/package`` builds and installs the package (minutes): only ``scripts/package-check`` runs it."""
    if collection_path.is_relative_to(_PACKAGE_TESTS) and not config.getoption("--package-check"):
        return True
    return None


@pytest.fixture(autouse=True, scope="session")
def _index_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Research tasks index their --documents folders into a cache: the suite's goes to a temporary folder, and
    stays BM25 (no embedding model loaded per test); the tests of hybrid research turn embeddings on."""
    folder = tmp_path_factory.mktemp("index-cache")
    saved = {name: os.environ.get(name)
             for name in ("DITTO_INDEX_CACHE_DIR", "DITTO_RESEARCH_EMBED", "DITTO_EMBEDDING_CACHE_DIR",
                          "DITTO_ONNX_CACHE_DIR")}
    os.environ["DITTO_INDEX_CACHE_DIR"] = str(folder)
    os.environ["DITTO_EMBEDDING_CACHE_DIR"] = str(folder / "embeddings")
    os.environ["DITTO_ONNX_CACHE_DIR"] = str(folder / "onnx")  # the model's graph: exported once per run
    os.environ["DITTO_RESEARCH_EMBED"] = "0"
    yield folder
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
