"""Entry names as a user of the API or the CLI spells them (WF-1, WF-2): the CLI spelling and the module's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.workflows.research import ResearchOptions, run_research
from ditto.workflows.research.entries import ENTRIES, entry_name
from ditto.workflows.research.errors import ResearchError


@pytest.mark.parametrize("entry", ENTRIES)
def test_an_entry_is_named_by_its_cli_or_its_module_name(entry: str) -> None:
    """WF-1, WF-2: `document-search` and `document_search` (the module) name the same entry."""
    assert entry_name(entry) == entry
    assert entry_name(entry.replace("-", "_")) == entry


@given(st.text(max_size=30) | st.sampled_from(ENTRIES) | st.none() | st.integers())
def test_a_name_means_an_entry_exactly_when_it_spells_one(name: object) -> None:
    """WF-1: a name means an entry iff it is one in either spelling; anything else means none (never raises)."""
    spelled = isinstance(name, str) and name.replace("_", "-") in ENTRIES
    assert entry_name(name) == (name.replace("_", "-") if spelled and isinstance(name, str) else None)


async def test_run_research_takes_the_module_name(tmp_path: Path) -> None:
    """WF-1: `run_research("document_search", ...)` runs document-search, as the module name says."""
    task, result = await run_research("document_search", {}, base_dir=tmp_path, env={},
                                      options=ResearchOptions(stop_after="queries"))
    assert task.request.entry == "document-search"
    assert result.status == "stopped"


async def _refused(tmp_path: Path) -> ResearchError:
    with pytest.raises(ResearchError) as raised:
        await run_research("document-find", {"question": "Why?"}, base_dir=tmp_path, env={})  # type: ignore[arg-type]
    return raised.value


def test_an_unknown_entry_is_invalid_input_and_makes_no_task(tmp_path: Path) -> None:
    """WF-1, §0: an unknown entry is RESEARCH_INVALID_INPUT (not a raw KeyError) and no task folder is made."""
    error = asyncio.run(_refused(tmp_path))
    assert error.code == "RESEARCH_INVALID_INPUT" and "document-search" in error.message
    assert not any(tmp_path.iterdir())
