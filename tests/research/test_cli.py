"""``ditto research`` and ``ditto verify`` as a user runs them (child processes, real files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.research.cli import output, research_args, run_cli, verify_args
from tests.research.helpers import write_knowledge_base


def test_multi_source_prints_only_the_result_when_piped(tmp_path: Path) -> None:
    """WF-2, WF-14: piped stdout carries only {directory, result}; the task directory is fresh."""
    done = run_cli(research_args("multi-source", "--sources", "documents,knowledge", "--base-dir",
                                 str(tmp_path / "tasks")))
    assert done.returncode == 0, done.stderr
    result = output(done)
    assert set(result) == {"directory", "result"}
    assert result["result"]["status"] == "completed"
    directory = Path(result["directory"])
    assert directory.parent == (tmp_path / "tasks").resolve()
    assert Path(result["result"]["brief"]).exists() and "citation" in result["result"]["summary"]
    verified = run_cli(verify_args(directory))
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True


def test_json_flag_and_exit_status_of_a_blocked_task(tmp_path: Path) -> None:
    """WF-14, WF-7: --json prints one line; a blocked task exits 1 with its failed sources."""
    done = run_cli(research_args("knowledge-base", "--kb", str(tmp_path / "missing.sqlite"), "--json",
                                 "--question", "Why?", "--base-dir", str(tmp_path)))
    assert done.returncode == 1
    result = output(done)["result"]
    assert result["status"] == "blocked"
    assert result["failedSources"][0]["source"] == "knowledge-external"


def test_vocabulary_file_and_stop_after(tmp_path: Path) -> None:
    """WF-2, WF-9: --vocabulary FILE (one query per line) and --stop-after queries, then --directory."""
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("backup retention period\n\nincident response\n", encoding="utf-8")
    done = run_cli(research_args("rewrite", "--vocabulary", str(vocabulary), "--stop-after", "queries",
                                 "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 0, done.stderr
    first = output(done)
    assert first["result"]["status"] == "stopped" and first["result"]["stage"] == "queries"
    request = json.loads((Path(first["directory"]) / "request.json").read_text(encoding="utf-8"))
    assert request["vocabulary"] == ["backup retention period", "incident response"]
    refused = run_cli(research_args("rewrite", "--directory", first["directory"], "--question", "other?"))
    assert refused.returncode == 2 and "request is fixed" in refused.stderr
    assert output(refused)["result"]["error"]["code"] == "RESEARCH_REQUEST_MISMATCH"  # the one JSON line, as ever
    resumed = run_cli(research_args("rewrite", "--directory", first["directory"]))
    assert resumed.returncode == 0, resumed.stderr
    assert output(resumed)["result"]["status"] == "completed"


def test_own_documents_and_kb(tmp_path: Path) -> None:
    """WF-12: --documents (folder, recursive, --ignore) and --kb (an SQLite FTS5 file) replace the samples."""
    docs = tmp_path / "docs" / "nested"
    docs.mkdir(parents=True)
    (docs / "ops.md").write_text("# Ops\n\nThe nightly export runs at 02:15 UTC.\n", encoding="utf-8")
    (docs / "draft.md").write_text("The nightly export runs at noon.\n", encoding="utf-8")
    kb = write_knowledge_base(tmp_path / "kb.sqlite", [("Export", "The nightly export is kept for 9 weeks.")])
    done = run_cli(research_args("multi-source", "--sources", "documents,knowledge", "--documents",
                                 str(tmp_path / "docs"), "--ignore", "draft.md", "--kb", str(kb),
                                 "--question", "When does the nightly export run and how long is it kept?",
                                 "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 0, done.stderr
    directory = Path(output(done)["directory"])
    brief = json.loads((directory / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    quotes = [item["quote"] for item in brief["evidence"]]
    assert "The nightly export runs at 02:15 UTC." in quotes
    assert "The nightly export is kept for 9 weeks." in quotes
    assert all("noon" not in quote for quote in quotes)
    assert not (directory / "policy.md").exists() and not (directory / "knowledge.sqlite").exists()


def test_verify_detects_every_kind_of_tampering(tmp_path: Path) -> None:
    """WF-13: verify passes on a good brief and fails on a changed snapshot byte, quote, offset, citation, missing
    snapshot, an edited request.json or a brief whose question is not its request's."""
    done = run_cli(research_args("multi-source", "--sources", "documents,knowledge", "--knowledge", "both",
                                 "--base-dir", str(tmp_path / "tasks")))
    good = Path(output(done)["directory"])
    assert run_cli(verify_args(good)).returncode == 0

    def tampered(name: str) -> Path:
        copy = tmp_path / name
        shutil.copytree(good, copy)
        return copy

    def edit_brief(directory: Path, change: object) -> None:
        path = directory / "artifacts" / "brief.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)  # type: ignore[operator]
        path.write_text(json.dumps(data), encoding="utf-8")

    brief = json.loads((good / "artifacts" / "brief.json").read_text(encoding="utf-8"))
    digest = brief["evidence"][0]["snapshotSha256"]

    byte = tampered("byte")
    raw = byte / "snapshots" / digest / "raw"
    content = bytearray(raw.read_bytes())
    content[0] ^= 0x01
    raw.write_bytes(bytes(content))

    quote = tampered("quote")
    edit_brief(quote, lambda d: d["evidence"][0].update(quote=d["evidence"][0]["quote"].replace("a", "o", 1)))
    offset = tampered("offset")
    edit_brief(offset, lambda d: d["evidence"][0].update(start=d["evidence"][0]["start"] + 1,
                                                          end=d["evidence"][0]["end"] + 1))
    lines = tampered("lines")
    edit_brief(lines, lambda d: d["evidence"][0].update(lineStart=d["evidence"][0]["lineStart"] + 1,
                                                         lineEnd=d["evidence"][0]["lineEnd"] + 1))
    citation = tampered("citation")
    edit_brief(citation, lambda d: d["citations"].append("e99"))
    missing = tampered("missing")
    shutil.rmtree(missing / "snapshots" / digest)
    request = tampered("request")
    document = json.loads((request / "request.json").read_text(encoding="utf-8"))
    document["question"] = "A question nobody asked?"
    (request / "request.json").write_text(json.dumps(document), encoding="utf-8")
    question = tampered("question")
    edit_brief(question, lambda d: d.update(question="A question nobody asked?"))

    for directory, expected in [(byte, "changed bytes"), (quote, "quote is not"), (offset, "quote is not"),
                                (lines, "lines"), (citation, "e99"), (missing, "missing"),
                                (request, "request.json"), (question, "question")]:
        checked = run_cli(verify_args(directory))
        assert checked.returncode == 1, directory.name
        problems = json.loads(checked.stdout)["problems"]
        assert problems and any(expected in problem for problem in problems), (directory.name, problems)


def test_invalid_request_is_a_usage_error(tmp_path: Path) -> None:
    """WF-2: a request the workflow refuses (bad tenant) exits 2 with the code in the result JSON."""
    done = run_cli(research_args("document-search", "--tenant", "a:b", "--base-dir", str(tmp_path)))
    assert done.returncode == 2
    assert output(done)["result"]["error"]["code"] == "RESEARCH_INVALID_INPUT"
    assert not (tmp_path / "a").exists() and not list(tmp_path.iterdir())


def test_a_refused_request_names_the_flag_not_the_field(tmp_path: Path) -> None:
    """WF-2, WF-14: a request the workflow refuses names the command-line flag that set the bad value (and which of
    a repeated flag), not the Python field: ``--url``, ``--internal-key (the 2nd)``, ``--wiki-url``."""
    cases = {("web-read", "--url", "https://a.example", "--url", "https://b.example", "--url", "https://c.example"):
             "--url: ",
             ("multi-source", "--internal-key", "ok.key", "--internal-key", "no key!"): "--internal-key (the 2nd): ",
             ("web-search", "--wiki-url", "http://wiki.example/w/api.php"): "--wiki-url: "}
    for args, start in cases.items():
        done = run_cli(research_args(*args, "--question", "What is kept?", "--base-dir", str(tmp_path),
                                     scripted=False))
        error = output(done)["result"]["error"]
        assert done.returncode == 2 and error["code"] == "RESEARCH_INVALID_INPUT"
        assert error["message"].startswith(start), error["message"]
    assert not list(tmp_path.iterdir())


def test_help_lists_every_flag() -> None:
    """WF-2: `ditto research --help` renders (no traceback) and names every flag of the research command."""
    import sys

    done = run_cli([sys.executable, "-m", "ditto", "research", "--help"], env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr[-2000:]
    for flag in ("--knowledge", "--stop-after", "--directory", "--allow-partial", "--search-engine", "--question",
                 "--vocabulary", "--documents", "--kb", "--memory", "--sources", "--json"):
        assert flag in done.stdout, flag
    assert "Traceback" not in done.stdout + done.stderr
    assert run_cli([sys.executable, "-m", "ditto", "verify", "--help"]).returncode == 0


def test_documents_takes_several_paths_after_one_flag(tmp_path: Path) -> None:
    """WF-12, WF-2: `--documents A B` reads both paths, like `--documents A --documents B`."""
    first, second = tmp_path / "one", tmp_path / "two.md"
    first.mkdir()
    (first / "a.md").write_text("Backups are kept for 9 days.\n", encoding="utf-8")
    second.write_text("Backups run every 3 hours.\n", encoding="utf-8")
    done = run_cli(research_args("document-search", "--documents", str(first), str(second), "--question",
                                 "How long are backups kept and how often do backups run?",
                                 "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 0, done.stderr[-2000:]
    directory = Path(output(done)["directory"])
    request = json.loads((directory / "request.json").read_text(encoding="utf-8"))
    assert request["documents"] == [str(first.resolve()), str(second.resolve())]
    stray = run_cli(research_args("document-search", str(first), "--base-dir", str(tmp_path / "tasks")))
    assert stray.returncode == 2 and "unexpected argument" in stray.stderr


def test_oversized_vocabulary_file_is_a_usage_error(tmp_path: Path) -> None:
    """WF-2, WF-9: a vocabulary file of a million lines is refused with a clear message, exit 2, no traceback."""
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("".join(f"query {number}\n" for number in range(10**6)), encoding="utf-8")
    done = run_cli(research_args("rewrite", "--vocabulary", str(vocabulary), "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 2
    assert "larger than 1 MiB" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "tasks").exists()


def test_each_unusable_vocabulary_file_says_what_is_wrong(tmp_path: Path) -> None:
    """WF-2, WF-9: a vocabulary file that is missing, a folder, binary, not UTF-8 or blank is a usage error (exit 2)
    naming the flag and what is wrong with the file; no task is made."""
    (tmp_path / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00zip")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (tmp_path / "blank.txt").write_text("\n  \n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    cases = {"missing.txt": "does not exist", "folder": "is a folder", "binary.txt": "is not text",
             "latin1.txt": "is not UTF-8", "blank.txt": "has no entries"}
    for name, reason in cases.items():
        done = run_cli(research_args("rewrite", "--vocabulary", str(tmp_path / name),
                                     "--base-dir", str(tmp_path / "tasks")))
        stderr = " ".join(done.stderr.replace("│", " ").split())
        assert done.returncode == 2 and reason in stderr and "--vocabulary" in stderr, (name, done.stderr)
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "tasks").exists()


def test_unreachable_page_fails_cleanly_with_one_log_line(tmp_path: Path) -> None:
    """WF-14, WF-5, WF-7: a page that cannot be reached blocks the task quickly; stderr holds one warning line
    naming the failure (no traceback unless --verbose) and stdout only the result JSON."""
    import socket
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    origin = f"https://127.0.0.1:{port}"
    args = ("--url", f"{origin}/wal.html", "--allowed-origin", origin, "--allow-partial", "--question", "WAL?")
    started = time.monotonic()
    done = run_cli(research_args("web-read", *args, "--base-dir", str(tmp_path / "tasks")))
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    result = output(done)["result"]
    assert result["status"] == "blocked" and result["failedSources"][0]["source"] == "web"
    assert "Traceback" not in done.stderr and "127.0.0.1" in done.stderr
    verbose = run_cli(research_args("web-read", *args, "--verbose", "--base-dir", str(tmp_path / "tasks")))
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr


def test_a_bad_model_configuration_still_prints_the_result_json(tmp_path: Path) -> None:
    """WF-14, WF-11: a half-configured model server (URL without model) is refused with the result JSON on
    stdout (status failed, INVALID_ARGUMENT), exit 2, and no task directory."""
    done = run_cli(research_args("document-search", "--json", "--base-dir", str(tmp_path / "tasks"), scripted=False),
                   env={"DITTO_WORKER_INFER_BASE_URL": "http://127.0.0.1:9/v1"})
    assert done.returncode == 2, done.stderr[-2000:]
    result = output(done)["result"]
    assert result["status"] == "failed" and result["error"]["code"] == "INVALID_ARGUMENT"
    assert "DITTO_WORKER_INFER_MODEL" in result["error"]["message"]
    assert not (tmp_path / "tasks").exists()


def test_a_task_folder_that_cannot_be_made_is_a_clear_error(tmp_path: Path) -> None:
    """WF-2, WF-3: --base-dir or --directory naming a file is refused with the result JSON, exit 2, no traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    for option in ("--base-dir", "--directory"):
        done = run_cli(research_args("document-search", option, str(blocker)))
        assert done.returncode == 2, done.stderr[-2000:]
        result = output(done)["result"]
        assert result["status"] == "failed" and result["error"]["code"] == "RESEARCH_INVALID_INPUT"
        assert "Traceback" not in done.stderr


def test_sources_may_be_repeated(tmp_path: Path) -> None:
    """WF-2: `--sources documents --sources knowledge` means the same as `--sources documents,knowledge`."""
    done = run_cli(research_args("multi-source", "--sources", "documents", "--sources", "knowledge", "--json",
                                 "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 0, done.stderr[-2000:]
    request = json.loads((Path(output(done)["directory"]) / "request.json").read_text(encoding="utf-8"))
    assert request["sources"] == ["documents", "knowledge"]


def test_entry_may_be_spelled_as_its_python_name(tmp_path: Path) -> None:
    """WF-1, WF-2: `ditto research document_search` (the entry's Python name) runs document-search;
    an unknown entry is a usage error that lists the entries."""
    done = run_cli(research_args("document_search", "--stop-after", "queries", "--json",
                                 "--base-dir", str(tmp_path)))
    assert done.returncode == 0, done.stderr[-2000:]
    request = json.loads((Path(output(done)["directory"]) / "request.json").read_text(encoding="utf-8"))
    assert request["entry"] == "document-search"
    unknown = run_cli(research_args("document-find", "--base-dir", str(tmp_path)), env={"COLUMNS": "200"})
    assert unknown.returncode == 2 and "source-location" in unknown.stderr


def test_an_empty_path_is_a_usage_error_naming_the_flag(tmp_path: Path) -> None:
    """WF-14: an empty path (an unset shell variable) is refused, never read as the current folder: ``--documents``,
    ``--index``, ``--kb``, ``--memory``, ``--base-dir`` and ``ditto verify`` exit 2 naming the flag, and no task is
    made."""
    for flag in ("--documents", "--index", "--kb", "--memory", "--base-dir"):
        args = [flag, ""] if flag == "--base-dir" else [flag, "", "--base-dir", str(tmp_path)]
        done = run_cli(research_args("document-search", "--question", "What is kept?", *args, scripted=False))
        assert done.returncode == 2, (flag, done.stderr)
        assert "empty path" in done.stderr and flag in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())
    done = run_cli(verify_args(""))
    assert done.returncode == 2 and "empty path" in done.stderr
