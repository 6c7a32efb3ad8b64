"""The optional brief signature (issue 16 #6, item 4): ``sign_brief`` writes ``artifacts/brief.sig``, an
HMAC-SHA256 over brief.json and the snapshot digests it cites; ``ditto verify`` checks it when
``DITTO_RESEARCH_SIGNING_KEY`` is set and says "unsigned" otherwise."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ditto.cli.app import app
from ditto.workflows.research import ResearchError, verify_task
from ditto.workflows.research.signing import (
    brief_mac,
    key_id,
    sign_brief,
    sign_if_configured,
    signed_message,
    signing_key,
)
from ditto.workflows.research.verify import check_task
from tests.research.forge import copy_task, rewrite_brief
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

pytestmark = pytest.mark.timeout(30)
KEY = b"correct horse battery staple"
runner = CliRunner()


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("signed")
    task, result = asyncio.run(run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"},
                                   base / "tasks", ScriptedModel()))
    assert result.status == "completed"
    return task.directory


def _signed(good: Path, name: str) -> Path:
    copy = copy_task(good, name)
    sign_brief(copy, KEY)
    return copy


def test_sign_brief_writes_the_documented_signature(good: Path) -> None:
    """Issue 16 item 4: brief.sig holds algorithm, keyId (first 8 hex of SHA-256 of the key) and the MAC of the
    exact brief.json bytes and the cited snapshot digests; verify with the key passes and says so."""
    copy = _signed(good, "signed")
    document = json.loads((copy / "artifacts" / "brief.sig").read_text(encoding="utf-8"))
    brief_bytes = (copy / "artifacts" / "brief.json").read_bytes()
    digests = [item["snapshotSha256"] for item in json.loads(brief_bytes)["evidence"]]
    assert document == {"algorithm": "HMAC-SHA256", "keyId": hashlib.sha256(KEY).hexdigest()[:8],
                        "mac": brief_mac(KEY, brief_bytes, digests)}
    report = check_task(copy, signing_key=KEY)
    assert report.problems == () and report.notes == (f"signature valid (key {key_id(KEY)})",)
    assert check_task(copy).notes == ("signed, but the signature was not checked (no signing key is set)",)
    assert check_task(good).notes == ("unsigned",)


def test_a_set_key_makes_a_missing_or_wrong_signature_a_problem(good: Path) -> None:
    """Issue 16 item 4: with a key set, no brief.sig, a signature of another key, a changed MAC, an unknown
    algorithm, a signature that is not JSON or is a link are each a problem."""
    assert verify_task(good, signing_key=KEY) == ["artifacts/brief.sig is missing, but a signing key is set"]
    other = copy_task(good, "other-key")
    sign_brief(other, b"another key")
    assert verify_task(other, signing_key=KEY) == ["artifacts/brief.sig was made with another key (its keyId differs)"]
    changed = _signed(good, "changed-mac")
    path = changed / "artifacts" / "brief.sig"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["mac"] = ("0" if document["mac"][0] != "0" else "1") + document["mac"][1:]
    path.write_text(json.dumps(document), encoding="utf-8")
    assert verify_task(changed, signing_key=KEY) == [
        "artifacts/brief.sig does not match: brief.json or its cited snapshots were changed after signing"]
    document["algorithm"] = "none"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert verify_task(changed, signing_key=KEY) == [
        "artifacts/brief.sig uses an unsupported algorithm (only HMAC-SHA256)"]
    path.write_text("[" * 10, encoding="utf-8")
    assert verify_task(changed, signing_key=KEY)[0].startswith("artifacts/brief.sig is not readable")
    path.unlink()
    outside = good.parent / "outside.sig"
    sign_brief(good, KEY)
    os.replace(good / "artifacts" / "brief.sig", outside)
    path.symlink_to(outside)
    assert verify_task(changed, signing_key=KEY) == [
        "artifacts/brief.sig is a symbolic link (links are not followed)"]


def test_a_full_forgery_passes_verify_but_not_the_signature(good: Path) -> None:
    """Issue 16 items 4 and 6: brief, brief.md and the archived brief rewritten together (here: a dropped last
    item with counts fixed up) pass the unsigned checks; the signature made before catches them."""
    signed = _signed(good, "forged-source")

    def drop_last(data: dict[str, object]) -> None:
        evidence, citations, coverage = data["evidence"], data["citations"], data["coverage"]
        assert isinstance(evidence, list) and isinstance(citations, list) and isinstance(coverage, list)
        evidence.pop()
        citations.pop()
        coverage[-1]["evidence"] -= 1

    forged = rewrite_brief(signed, "forged", drop_last)
    assert verify_task(forged) == []
    assert verify_task(forged, signing_key=KEY) == [
        "artifacts/brief.sig does not match: brief.json or its cited snapshots were changed after signing"]


def test_the_command_reads_the_key_from_the_environment(good: Path) -> None:
    """Issue 16 item 4: `ditto verify` uses DITTO_RESEARCH_SIGNING_KEY: valid -> exit 0 with the note, another
    key -> exit 1; without it an unsigned brief passes with the note "unsigned"."""
    copy = _signed(good, "cli")
    done = runner.invoke(app, ["verify", str(copy)], env={"DITTO_RESEARCH_SIGNING_KEY": KEY.decode()})
    assert done.exit_code == 0, done.stdout
    assert json.loads(done.stdout)["notes"] == [f"signature valid (key {key_id(KEY)})"]
    done = runner.invoke(app, ["verify", str(copy)], env={"DITTO_RESEARCH_SIGNING_KEY": "wrong"})
    assert done.exit_code == 1 and "another key" in done.stdout
    done = runner.invoke(app, ["verify", str(good)], env={"DITTO_RESEARCH_SIGNING_KEY": ""})
    assert done.exit_code == 0 and json.loads(done.stdout)["notes"] == ["unsigned"]


def test_sign_brief_refuses_bad_input_with_codes(good: Path) -> None:
    """Issue 16 item 4: an empty key is RESEARCH_INVALID_INPUT; a brief.json that is a FIFO cannot be signed
    (RESEARCH_BRIEF_WRITE_FAILED) and does not hang; the key never appears in the signature."""
    with pytest.raises(ResearchError) as empty:
        sign_brief(good, b"")
    assert empty.value.code == "RESEARCH_INVALID_INPUT"
    fifo = copy_task(good, "fifo")
    (fifo / "artifacts" / "brief.json").unlink()
    os.mkfifo(fifo / "artifacts" / "brief.json")
    with pytest.raises(ResearchError) as refused:
        sign_brief(fifo, KEY)
    assert refused.value.code == "RESEARCH_BRIEF_WRITE_FAILED"
    copy = _signed(good, "no-key-inside")
    assert KEY not in (copy / "artifacts" / "brief.sig").read_bytes()
    assert signing_key({"DITTO_RESEARCH_SIGNING_KEY": ""}) is None
    assert signing_key({"DITTO_RESEARCH_SIGNING_KEY": "k"}) == b"k"
    unsigned = copy_task(good, "unsigned")
    assert sign_if_configured(unsigned, {}) is None and not (unsigned / "artifacts" / "brief.sig").exists()
    assert sign_if_configured(unsigned, {"DITTO_RESEARCH_SIGNING_KEY": "k"}) is not None
    assert verify_task(unsigned, signing_key="k") == []


@settings(max_examples=50, deadline=None)
@given(brief=st.binary(max_size=64), digests=st.lists(st.sampled_from(["a" * 64, "b" * 64, "c" * 64]), max_size=3),
       other=st.sampled_from(["a" * 64, "d" * 64]))
@example(brief=b"{}", digests=["a" * 64], other="d" * 64)
def test_the_mac_covers_the_brief_and_every_cited_digest(brief: bytes, digests: list[str], other: str) -> None:
    """Issue 16 item 4 (invariant): the signed message changes with the brief bytes and with the set of cited
    snapshot digests, and not with their order or repetition."""
    assert signed_message(brief, digests) == signed_message(brief, list(reversed(digests)) + digests)
    if other not in digests:
        assert brief_mac(KEY, brief, digests) != brief_mac(KEY, brief, [*digests, other])
    assert brief_mac(KEY, brief, digests) != brief_mac(KEY, brief + b" ", digests)
