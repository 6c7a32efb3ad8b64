"""``ditto verify`` on a real web-read task (a local HTTPS server, trustme CA): the page's origin, URL, locator
and extracted text are checked (WF-13, WF-15; issue 16 item 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ditto.workflows.research import verify_task
from tests.research.forge import copy_task, read_brief, rewrite_brief
from tests.research.scripted import ScriptedModel
from tests.research.test_web import Wiki, run_web, tls, wiki

__all__ = ["tls", "wiki"]  # the web tests' fixtures, used here
pytestmark = pytest.mark.timeout(60)


async def test_web_evidence_tampering_is_reported(wiki: Wiki, base: Path, model: ScriptedModel) -> None:
    """WF-13 (issue 16 #6): a verified web-read task passes; a page moved to another origin, a URL that differs
    from its locator, a removed extractedSha256, a changed or missing extracted.txt are each reported."""
    urls = [f"{wiki.origin}/wiki/Backup_policy"]
    task, result = await run_web("web-read", {"urls": urls, "question": "How often do database backups run?"},
                                 base, model, wiki)
    assert result.status == "completed"
    good = task.directory
    assert verify_task(good) == []

    def moved(data: dict[str, Any]) -> None:
        url = "https://evil.example/wiki/Backup_policy"
        data["evidence"][0].update(uri=url, locator={**data["evidence"][0]["locator"], "url": url})

    assert "e1: the page's origin is not one the request allows" in verify_task(rewrite_brief(good, "moved", moved))
    unlocated = rewrite_brief(good, "unlocated", lambda d: d["evidence"][0]["locator"].pop("extractedSha256"))
    assert "e1: uri or locator does not fit a web of this request" in verify_task(unlocated)
    other = rewrite_brief(good, "other-url", lambda d: d["evidence"][0].update(uri=d["evidence"][0]["uri"] + "x"))
    assert "e1: uri or locator does not fit a web of this request" in verify_task(other)
    digest = read_brief(good)["evidence"][0]["snapshotSha256"]
    missing = copy_task(good, "no-extracted")
    (missing / "snapshots" / digest / "extracted.txt").unlink()
    assert any("changed (extractedSha256)" in problem for problem in verify_task(missing))
