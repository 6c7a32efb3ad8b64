"""A real, throw-away PostgreSQL server for tests (initdb + pg_ctl on a free loopback port).

PostgreSQL refuses to run as root, so when the tests run as root the cluster is
created and started as the ``postgres`` system user (created if missing) through
``runuser``; otherwise as the current user. Everything lives in a temporary
directory that is removed on stop.
"""

from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """Start a fresh cluster, yield its coordinates, then stop it and delete its files."""
    user = _os_user()
    root = Path(tempfile.mkdtemp(prefix="ditto-pg-"))
    data_dir, socket_dir, log = root / "data", root / "socket", root / "server.log"
    socket_dir.mkdir()
    if user is not None:
        info = pwd.getpwnam(user)
        for path in (root, socket_dir):
            os.chown(path, info.pw_uid, info.pw_gid)
    port = free_port()
    started = False
    try:
        _run([str(PG_BIN / "initdb"), "-D", str(data_dir), "-A", "trust", "-U", "ditto", "--no-sync",
              "-E", "UTF8", "--locale=C.UTF-8"], user)
        options = f"-p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run([str(PG_BIN / "pg_ctl"), "-D", str(data_dir), "-l", str(log), "-o", options, "-w", "-t", "60",
              "start"], user)
        started = True
        yield PostgresServer("127.0.0.1", port, "ditto", "postgres", data_dir)
    finally:
        if started:
            with contextlib.suppress(subprocess.SubprocessError):
                _run([str(PG_BIN / "pg_ctl"), "-D", str(data_dir), "-m", "immediate", "-w", "stop"], user)
        shutil.rmtree(root, ignore_errors=True)
