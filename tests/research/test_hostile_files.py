"""Hostile documents folders: links out, special files, vanishing and deep entries, caps (issue 16 #1, #7, #8, #9).

Every test builds real folders with real links, FIFOs and sockets and reads
them through :mod:`ditto.text.files` or the documents provider
the task registers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ditto.text.files import WalkLimits, WalkReport, read_document, read_documents, walk_documents
from ditto.workflows.research.sources.documents import DOCUMENT_SUFFIXES, DocumentSearchProvider
from tests.research.cli import ROOT, cli_env

SECRET = "sk-hostile-0123456789abcdef"


def _snapshots() -> tuple[dict[str, bytes], object]:
    saved: dict[str, bytes] = {}

    def save(raw: bytes) -> str:
        import hashlib

        digest = hashlib.sha256(raw).hexdigest()
        saved[digest] = raw
        return digest

    return saved, save


def _search(provider: DocumentSearchProvider, query: str) -> list[str]:
    from ditto.retrieval import RetrievalSearchInput, parse_search_input

    request: RetrievalSearchInput = parse_search_input({"target": {"name": "research-documents"},
                                                        "query": {"content": query}, "limit": 10})
    output = asyncio.run(provider.search(request))
    return [candidate.content for candidate in output.candidates]


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nBackups are kept for 9 days.\n", encoding="utf-8")
    return docs


def test_links_out_of_the_folder_are_never_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """WF-12, issue 16 item 1: links to /proc/self/environ, to a file and a folder outside the root and to a
    file inside it are skipped and named; no environment text reaches a snapshot or a passage."""
    monkeypatch.setenv("DITTO_WORKER_INFER_API_KEY", SECRET)
    docs = _folder(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"Backups key {SECRET}\n", encoding="utf-8")
    (docs / "environ.md").symlink_to("/proc/self/environ")
    (docs / "secret.md").symlink_to(outside / "secret.md")
    (docs / "elsewhere").symlink_to(outside, target_is_directory=True)
    (docs / "again.md").symlink_to(docs / "ops.md")
    saved, save = _snapshots()
    provider = DocumentSearchProvider([docs], save_snapshot=save)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        hits = _search(provider, "Backups key")
    assert hits == ["Backups are kept for 9 days."]
    assert all(SECRET.encode() not in raw and b"PATH=" not in raw for raw in saved.values())
    assert len(saved) == 1
    for name in ("environ.md", "secret.md", "elsewhere", "again.md"):
        assert any(name in note and "symbolic link" in note for note in provider.report.notes), name
    assert sum("symbolic link" in record.getMessage() for record in caplog.records) == 4


@pytest.mark.parametrize("root", ["/proc/self/environ", "/proc/self", "/sys/kernel", "/dev/zero"])
def test_proc_sys_and_dev_are_never_read_even_when_named(root: str) -> None:
    """WF-12, issue 16 item 1: a root under /proc, /sys or /dev is skipped with a note, not read."""
    report = WalkReport()
    assert list(read_documents([Path(root)], suffixes=DOCUMENT_SUFFIXES, report=report)) == []
    assert report.notes and "never read" in report.notes[0]


def test_a_root_link_into_proc_is_refused(tmp_path: Path) -> None:
    """WF-12, issue 16 item 1: a root that is itself a link is followed one step, but never into /proc."""
    link = tmp_path / "env.txt"
    link.symlink_to("/proc/self/environ")
    report = WalkReport()
    assert list(read_documents([link], suffixes=DOCUMENT_SUFFIXES, report=report)) == []
    assert "/proc" in report.notes[0]


def test_fifos_sockets_and_devices_are_skipped_without_blocking(tmp_path: Path) -> None:
    """WF-12, issue 16 item 1: a FIFO (which would block a reader forever), a socket and a device node named
    like documents are skipped and named; the real document is still read."""
    docs = _folder(tmp_path)
    os.mkfifo(docs / "pipe.md")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(docs / "sock.md"))
    try:
        made_device = True
        try:
            os.mknod(docs / "null.md", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            made_device = False
        report = WalkReport()
        started = time.monotonic()
        files = list(read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report))
        assert time.monotonic() - started < 5
        assert [file.path.name for file in files] == ["ops.md"]
        names = ["pipe.md", "sock.md", *(["null.md"] if made_device else [])]
        for name in names:
            assert any(name in note and "not a regular file" in note for note in report.notes), name
        # given directly as a root, the FIFO is still refused after an O_NONBLOCK open and fstat
        direct = WalkReport()
        assert read_document(docs / "pipe.md", report=direct) is None
        assert "not a regular file" in direct.notes[0]
    finally:
        server.close()


def test_a_vanished_entry_is_named_and_the_rest_is_read(tmp_path: Path) -> None:
    """WF-12, issue 16 item 9: a file deleted between listing and reading is skipped and named; later files
    are still read (one bad entry never blocks the rest)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (docs / name).write_text(f"{name} text\n", encoding="utf-8")
    report = WalkReport()
    read: list[str] = []
    for document in read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report):
        read.append(document.path.name)
        if document.path.name == "a.md":
            (docs / "b.md").unlink()  # listed already, gone before it is read
    assert read == ["a.md", "c.md"]
    assert report.notes == [f"{docs / 'b.md'} skipped: it vanished before it could be read"]


def test_an_unreadable_folder_and_file_are_named_and_the_rest_is_read(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """WF-12, issue 16 item 9: a folder that cannot be listed and a file that cannot be opened (EACCES, which
    root never gets from mode bits, so the system calls are made to fail for these two paths) are skipped."""
    docs = _folder(tmp_path)
    (docs / "locked").mkdir()
    (docs / "locked" / "x.md").write_text("x\n", encoding="utf-8")
    (docs / "private.md").write_text("private\n", encoding="utf-8")
    real_open, real_scandir = os.open, os.scandir

    def deny_open(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith("private.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    def deny_scandir(path: object = ".") -> object:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny_open)
    monkeypatch.setattr(os, "scandir", deny_scandir)
    report = WalkReport()
    assert [f.path.name for f in read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report)] == ["ops.md"]
    assert sorted(report.notes) == [f"{docs / 'private.md'} skipped: permission denied",
                                    f"folder {docs / 'locked'} skipped: permission denied"]


def test_too_deep_folders_are_named_and_the_rest_is_read(tmp_path: Path) -> None:
    """WF-12, issue 16 items 7 and 9: folders nested deeper than the depth limit are skipped and named."""
    docs = _folder(tmp_path)
    deep = docs
    for level in range(6):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("deep\n", encoding="utf-8")
    (docs / "d0" / "shallow.md").write_text("shallow\n", encoding="utf-8")
    report = WalkReport()
    found = list(walk_documents([docs], suffixes=DOCUMENT_SUFFIXES, limits=WalkLimits(max_depth=3), report=report))
    assert sorted(path.name for path in found) == ["ops.md", "shallow.md"]
    assert report.notes == [f"folder {docs / 'd0' / 'd1' / 'd2' / 'd3'} skipped: nested deeper than 3 folders"]


def test_a_missing_root_is_named_and_the_other_roots_are_read(tmp_path: Path) -> None:
    """WF-12, issue 16 item 9, issue 17 (errors that name the fact): of two roots, the missing one is a note
    saying it does not exist; the other is searched."""
    docs = _folder(tmp_path)
    _, save = _snapshots()
    provider = DocumentSearchProvider([tmp_path / "nowhere", docs], save_snapshot=save)  # type: ignore[arg-type]
    assert _search(provider, "backups") == ["Backups are kept for 9 days."]
    assert provider.report.notes == [f"{tmp_path / 'nowhere'} skipped: it does not exist"]


def test_every_cap_is_reported(tmp_path: Path) -> None:
    """WF-12, issue 16 items 7 and 8: the file, entry, byte and per-file caps each say what was not read."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for index in range(6):
        (docs / f"f{index}.md").write_text("x" * 100 + "\n", encoding="utf-8")
    (docs / "big.md").write_text("y" * 600, encoding="utf-8")
    files = WalkReport()
    assert len(list(walk_documents([docs], suffixes=DOCUMENT_SUFFIXES, limits=WalkLimits(max_files=3),
                                   report=files))) == 3
    assert files.notes == [f"file cap reached: only the first 3 files were read; {docs / 'f2.md'} and every "
                           "later file were not"]
    entries = WalkReport()
    list(walk_documents([docs], suffixes=DOCUMENT_SUFFIXES, limits=WalkLimits(max_entries=4), report=entries))
    assert entries.notes[0].startswith("entry cap reached: stopped after looking at 4 entries")
    total = WalkReport()
    read = list(read_documents([docs], suffixes=DOCUMENT_SUFFIXES,
                               limits=WalkLimits(max_total_bytes=250, max_file_bytes=500), report=total))
    assert [document.path.name for document in read] == ["f0.md", "f1.md"]
    assert total.notes == [f"{docs / 'big.md'} skipped: larger than 500 bytes",
                           f"byte cap reached: stopped after reading 202 bytes (at most 250); {docs / 'f2.md'} "
                           "and every later file were not read"]


def test_long_lines_and_the_passage_cap_are_reported(tmp_path: Path) -> None:
    """WF-12, issue 16 item 8, issue 17 item 1: a line over 1,000 characters is cut into passages (searched
    to its end, so there is nothing to note), and the passage cap is a note, never silent."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.md").write_text("Backups " + "z" * 5000 + "\n", encoding="utf-8")
    (docs / "many.md").write_text("".join(f"para {index}\n\n" for index in range(50)), encoding="utf-8")
    _, save = _snapshots()
    provider = DocumentSearchProvider([docs], save_snapshot=save, limits=WalkLimits(max_passages=10))  # type: ignore[arg-type]
    _search(provider, "para")
    assert provider.report.notes == [
        f"passage cap reached: only the first 10 passages are searched; the rest of {docs / 'many.md'} and "
        "later files are not"]
    whole = DocumentSearchProvider([docs / "long.md"], save_snapshot=save)  # type: ignore[arg-type]
    assert "".join(_search(whole, "Backups")) == "Backups"
    assert sum(len(text) for text in _search(whole, "z" * 1000)) == 5000  # to the end of the line


_NAMES = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1,
                 max_size=40).filter(lambda name: not name.startswith(".") and len(name.encode()) < 200)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_NAMES)
@example(name="a\nWARNING:ditto:forged.md")
@example(name="x\r\x1b[2Kcleared.md")
@example(name="\u2028line.md")
def test_a_note_is_one_line_whatever_the_file_name(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    """WF-12, issue 16 item 12: a skipped entry of any name gives a note and a log line with no line break or
    control character in it, so a name cannot forge a log line."""
    docs = tmp_path_factory.mktemp("names")
    (docs / f"{name}.md").symlink_to("/proc/self/environ")
    report = WalkReport()
    assert list(read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report)) == []
    assert len(report.notes) == 1
    assert not any(ord(char) < 0x20 or char in "\x7f\u2028\u2029\x85" for char in report.notes[0])


def test_many_big_files_stay_under_a_memory_bound(tmp_path: Path) -> None:
    """WF-12, issue 16 item 7: 20 files of 4 MiB short paragraphs are searched in a bounded peak RSS (a child
    process measures its own peak RSS, VmHWM); the byte and passage caps are reported."""
    docs = tmp_path / "docs"
    docs.mkdir()
    paragraph = b"Backups kept.\n\n"
    block = paragraph * (4 * 1024 * 1024 // len(paragraph))
    for index in range(20):
        (docs / f"big{index:02}.md").write_bytes(block)
    script = (
        "import asyncio, hashlib, json, sys\n"
        "from pathlib import Path\n"
        "def _hwm():  # this process's own peak RSS in KiB (ru_maxrss would carry the parent's over exec)\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1])\n"
        "from ditto.workflows.research.sources.documents import DocumentSearchProvider\n"
        "from ditto.retrieval import parse_search_input\n"
        "before = _hwm()\n"
        "p = DocumentSearchProvider([Path(sys.argv[1])], save_snapshot=lambda raw: hashlib.sha256(raw).hexdigest())\n"
        "out = asyncio.run(p.search(parse_search_input({'target': {'name': 'research-documents'},"
        " 'query': {'content': 'backups'}, 'limit': 3})))\n"
        "peak = _hwm()\n"
        "print(json.dumps({'before': before, 'peak': peak, 'hits': len(out.candidates), 'notes': p.report.notes}))\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script, str(docs)], cwd=ROOT, env=cli_env(), capture_output=True,
                          text=True, timeout=300)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["hits"] == 3
    assert any(note.startswith("passage cap reached") for note in measured["notes"])
    assert measured["peak"] < 1024 * 1024, measured  # KiB: under 1 GiB (was 3.0 GB before the caps)
    assert elapsed < 120


def test_documents_slash_finishes_quickly_and_reports_the_cap(tmp_path: Path) -> None:
    """WF-12, issue 16 item 7: walking ``/`` stops at a cap instead of listing the whole file system first, and
    never enters /proc, /sys or /dev."""
    report = WalkReport()
    started = time.monotonic()
    found = list(walk_documents([Path("/")], suffixes=DOCUMENT_SUFFIXES, limits=WalkLimits(max_entries=20_000),
                                report=report))
    elapsed = time.monotonic() - started
    assert elapsed < 30
    assert any(note.startswith(("entry cap reached", "file cap reached")) for note in report.notes), report.notes
    assert "/proc skipped: /proc, /sys and /dev are never read" in report.notes
    assert not any(str(path).startswith(("/proc/", "/sys/", "/dev/")) for path in found)


def test_notes_are_bounded_but_count_everything(tmp_path: Path) -> None:
    """WF-12, issue 16 items 8 and 12: a folder of many links gives at most ``max_notes`` listed notes plus one
    that counts the rest; nothing is silent and the log does not grow with the folder."""
    docs = _folder(tmp_path)
    for index in range(30):
        (docs / f"l{index:02}.md").symlink_to("/proc/self/environ")
    report = WalkReport(max_notes=10)
    list(read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report))
    assert len(report.notes) == 11
    assert report.notes[-1] == "20 more skipped entries or caps are not listed one by one"
    for index in range(3):
        (docs / f"m{index}.md").write_text("more\n", encoding="utf-8")
    capped = WalkReport(max_notes=10)
    list(read_documents([docs], suffixes=DOCUMENT_SUFFIXES, limits=WalkLimits(max_files=2), report=capped))
    assert capped.notes[-2].startswith("file cap reached: only the first 2 files were read")  # a cap is listed
    assert capped.notes[-1] == "20 more skipped entries or caps are not listed one by one"


def test_the_reported_attack_leaks_nothing_into_the_task(tmp_path: Path) -> None:
    """WF-12, WF-3, issue 16 item 1 (the reported attack, end to end): ``ditto research document-search`` over a
    folder holding a link to /proc/self/environ, with the INFER key and PGPASSWORD in the environment, writes
    neither into any snapshot, MEMORY, the trace or the brief; stderr names the skipped link."""
    from tests.research.cli import output, research_args, run_cli

    docs = _folder(tmp_path)
    (docs / "environ.md").symlink_to("/proc/self/environ")
    (docs / "environ.txt").symlink_to("/proc/self/environ")
    done = run_cli(research_args("document-search", "--documents", str(docs), "--question",
                                 "How long are backups kept? PATH HOME", "--base-dir", str(tmp_path / "tasks")),
                   env={"DITTO_WORKER_INFER_API_KEY": SECRET, "PGPASSWORD": "pg-" + SECRET})
    assert done.returncode == 0, done.stderr[-3000:]
    task = Path(output(done)["directory"])
    for path in task.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and b"PYTHONPATH=" not in data, path
    assert "environ.md skipped: it is a symbolic link" in done.stderr
    assert "environ.txt skipped: it is a symbolic link" in done.stderr


def test_lines_just_under_the_passage_size_are_read_in_linear_time(tmp_path: Path) -> None:
    """WF-12, issue 16 item 7: checking for over-long lines stays linear (a backtracking regex took 13 s on 4 MB
    of 3,999-character lines)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "wide.md").write_text(("y" * 3999 + "\n") * 1000 + "\nneedle here\n", encoding="utf-8")
    _, save = _snapshots()
    provider = DocumentSearchProvider([docs], save_snapshot=save)  # type: ignore[arg-type]
    started = time.monotonic()
    assert _search(provider, "needle") == ["needle here"]
    assert time.monotonic() - started < 10
    assert provider.report.notes == []


def test_proc_mounted_elsewhere_is_never_walked_or_read(tmp_path: Path) -> None:
    """WF-12, issue 16 item 1: /proc bind-mounted inside a documents folder is recognised by its file system
    (not its path): the folder is not walked and a file in it, given directly, is not read."""
    docs = _folder(tmp_path)
    mount = docs / "p"
    mount.mkdir()
    if subprocess.run(["mount", "--bind", "/proc", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("bind mounts need CAP_SYS_ADMIN")
    try:
        report = WalkReport()
        found = list(read_documents([docs], suffixes=DOCUMENT_SUFFIXES, report=report))
        assert [document.path.name for document in found] == ["ops.md"]
        assert report.notes == [f"{mount} skipped: /proc, /sys and /dev are never read"]
        direct = WalkReport()
        assert read_document(mount / "self" / "environ", report=direct) is None
        assert direct.notes == [f"{mount / 'self' / 'environ'} skipped: it is on /proc, /sys or /dev, which are "
                                "never read"]
    finally:
        subprocess.run(["umount", str(mount)], check=True)


_KINDS = st.sampled_from(["file", "dir", "link-out", "link-in", "link-dir", "fifo", "big"])
_ENTRIES = st.lists(st.tuples(st.lists(st.sampled_from(["a", "b", "c.md", "d.txt"]), min_size=1, max_size=3),
                              _KINDS), max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=_ENTRIES)
@example(entries=[(["a"], "link-dir"), (["a", "c.md"], "file")])
@example(entries=[(["c.md"], "link-out"), (["d.txt"], "fifo"), (["b", "c.md"], "big")])
def test_the_walk_yields_only_regular_files_inside_the_root(tmp_path_factory: pytest.TempPathFactory,
                                                            entries: list[tuple[list[str], str]]) -> None:
    """WF-12, issue 16 items 1 and 9 (invariant): whatever tree of files, folders, links in and out, FIFOs and
    oversized files a folder holds, every document read is a regular file reached without a link, inside the
    root, within the size cap; every skipped link, FIFO and oversized file is a note."""
    base = tmp_path_factory.mktemp("tree")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("outside\n", encoding="utf-8")
    expected_notes = 0
    for parts, kind in entries:
        path = root.joinpath(*parts)
        if os.path.lexists(path) or any((os.path.lexists(parent) and not parent.is_dir()) or parent.is_symlink()
                                        for parent in path.parents if root in parent.parents):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        documentish = path.suffix in (".md", ".txt")
        if kind == "file":
            path.write_text("inside\n", encoding="utf-8")
        elif kind == "dir":
            path.mkdir()
        elif kind == "link-out":
            path.symlink_to(outside / "secret.md")
            expected_notes += documentish
        elif kind == "link-in":
            path.symlink_to(root)
            expected_notes += 1
        elif kind == "link-dir":
            path.symlink_to(outside, target_is_directory=True)
            expected_notes += 1
        elif kind == "fifo":
            os.mkfifo(path)
            expected_notes += documentish
        else:
            path.write_bytes(b"z" * 2048)
            expected_notes += documentish
    report = WalkReport()
    limits = WalkLimits(max_file_bytes=1024)
    for document in read_documents([root], suffixes=DOCUMENT_SUFFIXES, limits=limits, report=report):
        assert document.raw == b"inside\n"
        assert stat.S_ISREG(document.path.lstat().st_mode)
        assert not any(parent.is_symlink() for parent in document.path.parents)
        assert root in document.path.parents
    assert len(report.notes) == expected_notes, report.notes
