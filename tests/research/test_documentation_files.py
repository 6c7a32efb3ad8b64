"""Documentation as a machine keeps it: READMEs without a suffix and gzip-compressed files (WF-12).

``/usr/share/doc/<package>`` holds ``README.Debian.gz``, ``NEWS.Debian.gz``, ``changelog.gz``,
``README.multiple-instances`` and ``copyright``: none of them ends in ``.md`` or ``.txt``. Every test
builds such folders with real gzip data and reads them through :mod:`ditto.text.files`, the documents
provider or the ``ditto`` command.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.text.files import (
    DEFAULT_LIMITS,
    DOCUMENT_SUFFIXES,
    WalkLimits,
    WalkReport,
    is_document_name,
    read_document,
    read_documents,
    walk_documents,
)
from tests.research.cli import output, research_args, run_cli, verify_args

README_DEBIAN = """Contents
========

  1) Configuration
  2) Sites

1) Configuration
----------------

Due to the use of environment variables, the server
needs to be started and stopped with its control script. Calling the
binary directly will not work with the default configuration.

2) Sites
--------

The enable-site helper can be used to enable a site. It creates a
symbolic link in sites-enabled/ and reloads nothing by itself.
"""


def _package_doc(tmp_path: Path) -> Path:
    """A folder shaped like ``/usr/share/doc/<package>``."""
    docs = tmp_path / "doc" / "webserver"
    docs.mkdir(parents=True)
    (docs / "README.Debian.gz").write_bytes(gzip.compress(README_DEBIAN.encode()))
    (docs / "NEWS.Debian.gz").write_bytes(gzip.compress(b"webserver (2.4)\n\n  * Sites moved to sites-available.\n"))
    (docs / "changelog.gz").write_bytes(gzip.compress(b"Changes with 2.4.1\n\n  *) Fix a crash.\n"))
    (docs / "README.multiple-instances").write_text("Run a second instance with a suffix.\n", encoding="utf-8")
    (docs / "copyright").write_text("Files: *\nLicense: Apache-2.0\n", encoding="utf-8")
    (docs / "server.conf").write_text("Listen 80\n", encoding="utf-8")
    (docs / "logo.png.gz").write_bytes(gzip.compress(b"\x89PNG"))
    return docs


def test_a_package_doc_folder_reads_its_readmes_news_and_changelogs(tmp_path: Path) -> None:
    """WF-12: a folder of documentation named by convention is read whole, compressed or not; a configuration
    file, an image and the legal text are not documents of it."""
    docs = _package_doc(tmp_path)
    report = WalkReport()
    found = {document.path.name: document.raw for document in read_documents([docs], suffixes=DOCUMENT_SUFFIXES,
                                                                              report=report)}
    assert sorted(found) == ["NEWS.Debian.gz", "README.Debian.gz", "README.multiple-instances", "changelog.gz"]
    assert found["README.Debian.gz"] == README_DEBIAN.encode()  # the text, not the gzip bytes
    assert report.notes == []


@pytest.mark.parametrize(("name", "document"), [
    ("README", True), ("readme.md", True), ("README.Debian", True), ("README.source.gz", True), ("NEWS", True),
    ("ChangeLog", True), ("changelog.Debian.gz", True), ("INSTALL", True), ("TODO.gz", True), ("notes.txt.gz", True),
    ("guide.rst", True), ("CHANGES", True), ("release-notes", True), ("COPYING", False), ("LICENSE", False),
    ("copyright", False), ("server.conf", False), ("image.png.gz", False), (".gz", False), ("readmes.c", False),
    ("Makefile", False), ("newsletter.html", False), ("fontconfig.README.Debian", True), ("apache2-NEWS.gz", True),
    ("pkg_1.0_amd64.changes", False), ("mytodo.c", False),
])
def test_what_a_document_is_by_name(name: str, document: bool) -> None:
    """WF-12: documents by suffix (``.md``, ``.txt``, ``.rst``…) or by the names documentation goes by, gzipped
    or not, also after a prefix a copy gave it (``fontconfig.README.Debian``)."""
    assert is_document_name(name, DOCUMENT_SUFFIXES) is document


@given(st.text(max_size=80))
def test_any_name_is_judged_without_error(name: str) -> None:
    """WF-12, bound every input: any name (NUL, lone surrogates, dots only) is judged, never an exception; a
    document's name stays one once gzipped."""
    judged = is_document_name(name, DOCUMENT_SUFFIXES)
    assert isinstance(judged, bool)
    if judged:
        assert is_document_name(name + ".gz", DOCUMENT_SUFFIXES)


def _read(path: Path, limits: WalkLimits = DEFAULT_LIMITS) -> tuple[bytes | None, list[str]]:
    report = WalkReport()
    return read_document(path, limits=limits, report=report), report.notes


def test_gzip_members_one_after_another_are_read_as_zcat_reads_them(tmp_path: Path) -> None:
    """WF-12: ``cat a.gz b.gz > c.gz`` is one text; zero padding and trailing bytes after the last member are
    ignored, as zcat ignores them."""
    path = tmp_path / "NEWS.gz"
    path.write_bytes(gzip.compress(b"first part\n") + gzip.compress(b"second part\n") + b"\x00\x00\x00")
    assert _read(path) == (b"first part\nsecond part\n", [])
    path.write_bytes(gzip.compress(b"only part\n") + b"trailing garbage")
    assert _read(path) == (b"only part\n", [])


def test_a_small_file_that_inflates_past_the_bound_is_skipped(tmp_path: Path) -> None:
    """WF-12, bound every input: 4 MiB of zeros gzip to a few kilobytes; with a 1 MiB bound per file the reader
    stops at the bound (never inflating the rest) and names the file."""
    path = tmp_path / "README.gz"
    path.write_bytes(gzip.compress(b"0" * (4 << 20)))
    assert path.stat().st_size < 64 * 1024
    raw, notes = _read(path, WalkLimits(max_file_bytes=1 << 20))
    assert raw is None
    assert notes == [f"{path} skipped: larger than {1 << 20} bytes once decompressed"]


@pytest.mark.parametrize(("data", "reason"), [
    (b"plain text, not gzip\n", "its name ends in .gz but it is not gzip data"),
    (gzip.compress(b"a text cut short " * 200)[:40], "its gzip data is cut short"),
    (b"\x1f\x8b\x08\x00" + b"\xff" * 40, "its gzip data is damaged"),
])
def test_bad_gzip_data_is_named_and_the_rest_is_read(tmp_path: Path, data: bytes, reason: str) -> None:
    """WF-12: a ``.gz`` that is not gzip data, is cut short or is damaged is skipped with a note saying which;
    the folder's other documents are still read."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.gz").write_bytes(data)
    (docs / "NEWS").write_text("Version 2 is out.\n", encoding="utf-8")
    report = WalkReport()
    read = [document.path.name for document in read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report)]
    assert read == ["NEWS"]
    assert report.notes == [f"{docs / 'README.gz'} skipped: {reason}"]


def test_a_link_named_like_documentation_is_named_when_skipped(tmp_path: Path) -> None:
    """WF-12: a link called README is not followed, and the note says so, as for ``notes.md``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README").symlink_to("/etc/hostname")
    report = WalkReport()
    assert list(walk_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report)) == []
    assert report.notes == [f"{docs / 'README'} skipped: it is a symbolic link (links are not followed)"]


def test_research_over_a_package_doc_folder_quotes_the_compressed_readme_and_verifies(tmp_path: Path) -> None:
    """WF-12, WF-10, WF-13: ``ditto research document-search --documents /usr/share/doc/<package>`` answers from
    ``README.Debian.gz``; the snapshot holds the text that was read, the quote's lines are the decompressed
    text's, and ``ditto verify`` passes offline."""
    docs = _package_doc(tmp_path)
    done = run_cli(research_args("document-search", "--documents", str(docs), "--question",
                                 "Why does calling the binary directly not work?", "--base-dir",
                                 str(tmp_path / "tasks"), scripted=False))
    assert done.returncode == 0, done.stderr[-3000:]
    result = output(done)["result"]
    assert result["status"] == "completed"
    brief = json.loads(Path(result["brief"]).read_text(encoding="utf-8"))
    item = next(item for item in brief["evidence"] if "directly will not work" in item["quote"])
    assert item["uri"].endswith("/README.Debian.gz")
    assert README_DEBIAN[item["start"]:item["end"]] == item["quote"]
    lines = README_DEBIAN.splitlines()
    assert item["quote"].splitlines()[-1].strip() in lines[item["lineEnd"] - 1]
    assert item["snapshotSha256"] == hashlib.sha256(README_DEBIAN.encode()).hexdigest()
    checked = run_cli(verify_args(Path(result["directory"])))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_ditto_index_reads_the_same_documentation(tmp_path: Path) -> None:
    """WF-12 (one reader for research and the index): ``ditto index`` over a package's doc folder indexes the
    compressed README by its text, and ``ditto search`` finds it with its line."""
    import subprocess
    import sys

    from tests.research.cli import cli_env

    docs = _package_doc(tmp_path)
    index = tmp_path / "index"
    made = subprocess.run([sys.executable, "-m", "ditto", "index", str(docs), "--index", str(index), "--json"],
                          env=cli_env(), capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr[-2000:]
    found = subprocess.run([sys.executable, "-m", "ditto", "search", "enable a site", "--index", str(index),
                            "--json"], env=cli_env(), capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr[-2000:]
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["path"].endswith("README.Debian.gz")
    assert "enable-site helper" in hits[0]["text"]
    assert README_DEBIAN.splitlines()[hits[0]["lineStart"] - 1].strip() in hits[0]["text"]



def test_tasks_kept_inside_the_documents_folder_are_not_read_as_documents(tmp_path: Path) -> None:
    """WF-12 (found by hand): run from the folder it searches, a task keeps its folder in ``ditto-tasks/`` there,
    and the next task read the earlier briefs as documents and cited them. A folder holding a task id is ditto's
    own output: the walk leaves it out and says so once; ``ditto index`` reads the same way."""
    docs = _package_doc(tmp_path)
    question = "Why does calling the binary directly not work?"
    for _ in range(2):
        done = run_cli(research_args("document-search", "--documents", str(docs), "--question", question,
                                     "--base-dir", str(docs / "ditto-tasks"), scripted=False))
        assert done.returncode == 0, done.stderr[-3000:]
        brief = json.loads(Path(output(done)["result"]["brief"]).read_text(encoding="utf-8"))
        assert brief["evidence"] and all("/ditto-tasks/" not in item["uri"] for item in brief["evidence"])
    report = WalkReport()
    walked = list(walk_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report))
    assert walked and all("ditto-tasks" not in path.parts for path in walked)
    assert report.notes == [f"2 research task folder(s) under {docs} skipped: ditto's own output (a brief quotes "
                            "what its task read)"]
