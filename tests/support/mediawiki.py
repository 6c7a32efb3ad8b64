"""A real MediaWiki for tests: Debian's ``mediawiki`` package, SQLite backend, PHP's built-in server, HTTPS.

:func:`start_mediawiki` installs a fresh wiki into a temporary directory with
``maintenance/install.php --dbtype sqlite`` (nothing outside that directory is
written: ``MW_CONFIG_FILE`` points MediaWiki at the generated ``LocalSettings.php``),
imports the given pages with ``maintenance/importDump.php``, builds the search index
with ``rebuildtextindex.php``, serves ``/usr/share/mediawiki`` with ``php -S`` on a
loopback port and puts a TLS proxy with the test CA in front. The wiki's ``$wgServer``
is the proxy's origin, so the links its API writes are the ones a client can read.
``scripts/services`` installs the packages; without them the fixture fails, never skips.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import signal
import ssl
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from .loopback_tls import LoopbackCa, TlsProxy
from .net import free_port

__all__ = ["MEDIAWIKI_ROOT", "MediaWiki", "start_mediawiki"]

MEDIAWIKI_ROOT = Path("/usr/share/mediawiki")
_ADMIN_PASSWORD = "ditto-agents-test-admin-password"


@dataclass(frozen=True)
class MediaWiki:
    """A running wiki: ``api_url`` (``https://127.0.0.1:PORT/api.php``), its origin and the pages it holds."""

    api_url: str
    origin: str
    ca_file: Path
    pages: Mapping[str, str]


def _require_binaries() -> str:
    php = shutil.which("php")
    missing = [name for name, ok in (("php", php is not None),
                                     ("mediawiki", (MEDIAWIKI_ROOT / "maintenance" / "install.php").is_file()))
               if not ok]
    if missing:
        raise RuntimeError(f"the MediaWiki test server needs {', '.join(missing)}: run scripts/services "
                           "(Debian packages mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml)")
    assert php is not None
    return php


def _run(php: str, script: str, *args: str, env: Mapping[str, str], stdin: bytes | None = None) -> None:
    result = subprocess.run([php, str(MEDIAWIKI_ROOT / "maintenance" / script), *args], input=stdin, env=dict(env),
                            capture_output=True, timeout=300, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{script} failed ({result.returncode}): "
                           f"{result.stdout[-2000:]!r} {result.stderr[-2000:]!r}")


def _dump(pages: Mapping[str, str]) -> bytes:
    """A MediaWiki XML export holding ``pages`` (plain text inside ``<nowiki>`` so nothing is parsed as markup)."""
    parts = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">']
    for index, (title, text) in enumerate(pages.items(), start=1):
        paragraphs = "\n\n".join(f"<nowiki>{paragraph}</nowiki>" for paragraph in text.split("\n\n") if paragraph)
        parts.append(
            f"<page><title>{html.escape(title)}</title><ns>0</ns><id>{index + 100}</id>"
            f"<revision><id>{index + 100}</id><timestamp>2026-01-01T00:00:00Z</timestamp>"
            "<contributor><username>Admin</username><id>1</id></contributor>"
            f"<model>wikitext</model><format>text/x-wiki</format>"
            f'<text xml:space="preserve">{html.escape(paragraphs)}</text></revision></page>')
    parts.append("</mediawiki>")
    return "\n".join(parts).encode("utf-8")


def _wait(url: str, ca_file: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            response = httpx.get(url, params={"action": "query", "meta": "siteinfo", "format": "json"},
                                 verify=ssl.create_default_context(cafile=str(ca_file)), timeout=5.0)
            if response.status_code == 200 and "query" in response.json():
                return
        except (httpx.HTTPError, ValueError) as error:
            last = error
        time.sleep(0.1)
    raise RuntimeError(f"MediaWiki at {url} did not come up: {last}")


@contextlib.contextmanager
def start_mediawiki(directory: Path, ca: LoopbackCa, pages: Mapping[str, str]) -> Iterator[MediaWiki]:
    """Install, fill and serve a wiki under ``directory``; yield it; stop it afterwards."""
    php = _require_binaries()
    proxy = TlsProxy(ca)
    data = directory / "data"
    data.mkdir(parents=True)
    settings = directory / "LocalSettings.php"
    env = {**os.environ, "MW_CONFIG_FILE": str(settings), "PHP_CLI_SERVER_WORKERS": "4"}
    server: subprocess.Popen[bytes] | None = None
    try:
        _run(php, "install.php", "--dbtype", "sqlite", "--dbpath", str(data), "--dbname", "wiki",
             "--server", proxy.origin, "--scriptpath", "", "--pass", _ADMIN_PASSWORD, "--confpath", str(directory),
             "--lang", "en", "Test Wiki", "Admin", env=env)
        dump = directory / "pages.xml"
        dump.write_bytes(_dump(pages))
        _run(php, "importDump.php", "--quiet", str(dump), env=env)
        _run(php, "rebuildtextindex.php", env=env)
        port = free_port()
        log = (directory / "php-server.log").open("wb")
        # Its own process group: with PHP_CLI_SERVER_WORKERS the server forks workers, which outlive a
        # SIGTERM to the parent alone; the group is stopped as one.
        server = subprocess.Popen([php, "-S", f"127.0.0.1:{port}", "-t", str(MEDIAWIKI_ROOT)], env=env,
                                  stdout=log, stderr=subprocess.STDOUT, cwd=str(directory), start_new_session=True)
        proxy.start(("127.0.0.1", port))
        api_url = f"{proxy.origin}/api.php"
        _wait(api_url, ca.ca_file)
        yield MediaWiki(api_url=api_url, origin=proxy.origin, ca_file=ca.ca_file, pages=dict(pages))
    finally:
        proxy.close()
        if server is not None:
            _signal_group(server, signal.SIGTERM)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                _signal_group(server, signal.SIGKILL)
                server.wait()
            _signal_group(server, signal.SIGKILL)  # workers that ignored the SIGTERM


def _signal_group(server: subprocess.Popen[bytes], number: signal.Signals) -> None:
    """Send ``number`` to the server's process group (the server and its workers); gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.pid, number)
