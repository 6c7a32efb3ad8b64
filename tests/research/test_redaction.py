"""Secrets never reach a log line, names never forge one (issue 16 items 3 and 12).

Through the real ``ditto research`` command (a child process) with and without
``--verbose``, and on :mod:`ditto.redaction` directly with hypothesis.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ditto.redaction import MASK, RedactingFilter, install_redaction, printable, redact, secret_values
from tests.research.cli import output, research_args, run_cli

KEY = "sk-live-9f8e7d6c5b4a39281706"
PG = "pg-Secret-Passw0rd"
DSN_PASSWORD = "dsn-hunter2-pass"
LEAKY = "tests.research.leaky:create_leaky_infer_worker"


@pytest.mark.parametrize("verbose", [True, False])
def test_the_cli_masks_secrets_in_logs_and_tracebacks(tmp_path: Path, verbose: bool) -> None:
    """WF-14, INF-5, issue 16 item 3: a model client whose error text (and so its traceback) echoes the INFER
    key, PGPASSWORD and a DSN password is logged by ``ditto research`` with every secret replaced by ***,
    verbose or not."""
    env = {"DITTO_WORKER_INFER_API_KEY": KEY, "PGPASSWORD": PG,
           "LEAKY_DSN": f"postgresql://ditto:{DSN_PASSWORD}@db.internal:5432/kb"}
    command = research_args("document-search", "--base-dir", str(tmp_path / "tasks"), scripted=False)
    command += ["--worker", LEAKY, *(["--verbose"] if verbose else [])]
    done = run_cli(command, env=env)
    assert done.returncode == 1, done.stderr[-3000:]
    assert output(done)["result"]["status"] == "failed"
    everything = done.stdout + done.stderr
    for secret in (KEY, PG, DSN_PASSWORD):
        assert secret not in everything
    if verbose:
        assert "Traceback" in done.stderr and "LeakyClientError" in done.stderr
        assert f"Bearer {MASK}" in done.stderr and f"password={MASK}" in done.stderr
        assert f"postgresql://ditto:{MASK}@db.internal" in done.stderr


def test_secrets_kept_in_dotenv_are_masked_too(tmp_path: Path) -> None:
    """WF-11, WF-14, issue 16 item 3: the INFER key kept in ./.env (where the seed keeps it), not in the process
    environment, is masked in a --verbose traceback as well."""
    import subprocess
    import sys

    from tests.research.cli import ROOT, cli_env

    (tmp_path / ".env").write_text(f"DITTO_WORKER_INFER_API_KEY={KEY}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ditto", "research", "document-search", "--worker", LEAKY,
                           "--verbose", "--base-dir", str(tmp_path / "tasks")], cwd=tmp_path,
                          env=cli_env({"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}), capture_output=True, text=True,
                          timeout=120)
    assert "LeakyClientError" in done.stderr, done.stderr[-3000:]
    assert KEY not in done.stdout + done.stderr and f"Bearer {MASK}" in done.stderr


def test_a_crash_of_the_command_is_printed_with_secrets_masked(tmp_path: Path) -> None:
    """WF-14, issue 16 item 3: an unexpected exception (here from a --worker factory) is printed as a plain
    traceback with the key masked, and the command exits 1."""
    done = run_cli(research_args("document-search", "--base-dir", str(tmp_path / "tasks"), "--worker",
                                 "tests.research.leaky:create_crashing_factory", scripted=False),
                   env={"DITTO_WORKER_INFER_API_KEY": KEY})
    assert done.returncode == 1
    assert "LeakyClientError: cannot configure the client with key ***" in done.stderr
    assert KEY not in done.stdout + done.stderr


def test_a_file_name_with_a_newline_cannot_forge_a_log_line(tmp_path: Path) -> None:
    """WF-14, WF-12, issue 16 item 12: a skipped document named ``x\\nERROR:forged`` is logged on one line with
    the newline escaped."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Ops\n\nBackups are kept for 9 days.\n", encoding="utf-8")
    (docs / "x\nERROR:ditto:forged.md").symlink_to("/proc/self/environ")
    done = run_cli(research_args("document-search", "--documents", str(docs), "--question",
                                 "How long are backups kept?", "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    assert not any(line.startswith("ERROR:ditto:forged") for line in lines)
    assert any("x\\nERROR:ditto:forged.md skipped: it is a symbolic link" in line for line in lines), lines


def test_a_missing_memory_store_is_refused_unless_asked_to_create_it(tmp_path: Path) -> None:
    """WF-12, issue 16 item 8: ``--memory`` naming a missing file is RESEARCH_INVALID_INPUT (exit 2) naming the
    path, and nothing is created; with ``--create-memory`` the store is made and the task runs."""
    missing = tmp_path / "typo-memory.sqlite"
    args = ["--knowledge", "internal", "--memory", str(missing), "--internal-key", "backup-retention",
            "--question", "Why?",
            "--base-dir", str(tmp_path / "tasks")]
    done = run_cli(research_args("knowledge-base", *args))
    assert done.returncode == 2, done.stderr[-2000:]
    error = output(done)["result"]["error"]
    assert error["code"] == "RESEARCH_INVALID_INPUT" and str(missing) in error["message"]
    assert not missing.exists() and not (tmp_path / "tasks").exists()
    created = run_cli(research_args("knowledge-base", *args, "--create-memory"))
    assert created.returncode in (0, 1), created.stderr[-2000:]
    assert output(created)["result"]["status"] in ("no-evidence", "completed", "blocked")
    assert missing.is_file()


def test_a_memory_store_that_is_not_sqlite_says_so(tmp_path: Path) -> None:
    """WF-12: ``--memory`` naming a file that is not a SQLite database (a text file given by mistake) is
    RESEARCH_INVALID_INPUT (exit 2) saying so, before any task is made, and the file is left as it was."""
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n", encoding="utf-8")
    done = run_cli(research_args("knowledge-base", "--knowledge", "internal", "--memory", str(text),
                                 "--internal-key", "backup-retention", "--question", "Why?",
                                 "--base-dir", str(tmp_path / "tasks")))
    assert done.returncode == 2, done.stderr[-2000:]
    error = output(done)["result"]["error"]
    assert error["code"] == "RESEARCH_INVALID_INPUT" and "not a SQLite database" in error["message"]
    assert text.read_text(encoding="utf-8") == "not a database\n" and not (tmp_path / "tasks").exists()


def test_create_task_refuses_a_missing_memory_store(tmp_path: Path) -> None:
    """WF-12, issue 16 item 8: the library refuses a missing MEMORY store too, and makes it when asked."""
    from ditto.workflows.research import create_task
    from ditto.workflows.research.errors import ResearchError

    request = {"entry": "knowledge-base", "question": "q", "knowledge": "internal",
               "memory": str(tmp_path / "none.sqlite")}
    with pytest.raises(ResearchError) as caught:
        create_task(request, base_dir=tmp_path / "tasks")
    assert caught.value.code == "RESEARCH_INVALID_INPUT" and "none.sqlite" in caught.value.message
    task = create_task(request, base_dir=tmp_path / "tasks", create_memory=True)
    assert task.memory_path.is_file()


_SECRETS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=4, max_size=30)


@given(secret=_SECRETS, before=st.text(max_size=20), after=st.text(max_size=20))
@example(secret="hunter2!", before="Bearer ", after="\n")
@example(secret="p%sss", before="", after="")
@example(secret="a" * 4, before="aaa", after="aaa")
def test_a_secret_never_survives_redaction(secret: str, before: str, after: str) -> None:
    """Issue 16 item 3: wherever a known secret sits in a text, redact() leaves no copy of it."""
    assert secret not in redact(f"{before}{secret}{after}{secret}", {secret})


@given(password=st.text(st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="-_.!~*"),
                        min_size=1, max_size=30))
@example(password="p4ss")
def test_url_passwords_are_masked_without_knowing_them(password: str) -> None:
    """Issue 16 item 3: ``scheme://user:password@host`` loses its password even when no variable names it."""
    text = redact(f"connect to postgresql://app:{password}@db:5432/x failed; redis://:{password}@cache/0")
    assert text == f"connect to postgresql://app:{MASK}@db:5432/x failed; redis://:{MASK}@cache/0"


@given(name=st.text(max_size=40))
@example(name="a\nWARNING:forged")
@example(name="\r\x1b[2K\u2028")
def test_printable_is_one_line(name: str) -> None:
    """Issue 16 item 12: printable() never returns a line break or a control character."""
    shown = printable(name)
    assert not any(ord(char) < 0x20 or char in "\x7f\x85\u2028\u2029" for char in shown)
    assert len(shown.splitlines()) <= 1


def test_secret_variables_are_found_by_name() -> None:
    """Issue 16 item 3: *_API_KEY, *_PASSWORD, *_TOKEN, *_SECRET, PGPASSWORD and DSN passwords are secrets;
    short or ordinary values are not."""
    env = {"DITTO_WORKER_INFER_API_KEY": "sk-1234", "PGPASSWORD": "pgpass", "GITHUB_TOKEN": "ghp_abcd",
           "APP_SECRET": "s3cr3t", "DB_PASSWORD": "dbpass", "DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY": "brave",
           "DATABASE_URL": "postgres://u:urlpass@h/db", "HOME": "/root", "SHORT_TOKEN": "abc"}
    assert secret_values(env) == {"sk-1234", "pgpass", "ghp_abcd", "s3cr3t", "dbpass", "brave", "urlpass"}


def test_the_filter_masks_message_arguments_and_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 item 3: install_redaction() on a library user's handler masks the message, its arguments and the
    traceback text, and escapes a newline in an argument."""
    import io

    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(message)s"))
    log = logging.getLogger("tests.redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        guard = install_redaction([handler])
        assert isinstance(guard, RedactingFilter)
        try:
            raise ValueError(f"server said: bad key {KEY}")
        except ValueError:
            log.exception("call with %s failed for %s", KEY, "name\nERROR:forged")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert KEY not in text and text.count(MASK) == 2
    assert "name\\nERROR:forged" in text and "\nERROR:forged" not in text
