"""Random tamperings of a finished brief.json never pass ``ditto verify`` (WF-13, WF-15; issue 16 item 6).

Hypothesis picks any place in the brief (a leaf, an object, a list) and changes it: a new value of any JSON
type, a near value (a number off by one, a character more or less), a deleted or added key, a dropped,
repeated or swapped list element. The tampered brief is written the way ditto writes it and brief.md is
re-rendered to match, so nothing but the change itself is wrong.

* With the archived brief in ``memory.sqlite`` left as it was, every change is reported.
* When the forger rewrites the archived brief too, every change is still reported except in the fields that
  have nothing offline to be checked against (documented in docs/research.md): ``createdAt``, coverage
  ``notes``, ``searched`` and ``hits``, the model name when the request named none (the one that answered),
  and the folder part of a sample file's URI (the task folder may move).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ditto.workflows.research import verify_task
from tests.research.forge import copy_task, read_brief, write_brief
from tests.research.helpers import run
from tests.research.scripted import ScriptedModel

pytestmark = pytest.mark.timeout(300)
Path_ = tuple[str | int, ...]
_counter = itertools.count()


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("tamper")
    task, result = asyncio.run(run("multi-source", {"sources": ["documents", "knowledge"], "knowledge": "both"},
                                   base / "tasks", ScriptedModel()))
    assert result.status == "completed"
    assert verify_task(task.directory) == []
    return task.directory


def _paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _get(data: Any, path: Path_) -> Any:
    for part in path:
        data = data[part]
    return data


_WORDS = ["e1", "e9", "document", "web", "completed", "partial", "no-evidence", "model", "0" * 64]
JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 400),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                        st.sampled_from(_WORDS), st.lists(st.sampled_from(["e1", "e2", "x"]), max_size=3),
                        st.just({}))


@st.composite
def tampered(draw: st.DrawFn, original: dict[str, Any]) -> tuple[dict[str, Any], Path_]:
    data = copy.deepcopy(original)
    path = draw(st.sampled_from(_paths(data)))
    target = _get(data, path)
    operations = ["set"]
    if path:
        operations.append("near")
        if isinstance(_get(data, path[:-1]), dict):
            operations.append("delete")
    if isinstance(target, dict):
        operations.append("add-key")
    if isinstance(target, list) and target:
        operations += ["drop", "repeat", "swap"]
    operation = draw(st.sampled_from(operations))
    if operation == "set":
        value = draw(JSON_VALUES)
        if not path:
            return value, path  # the whole brief replaced
        _get(data, path[:-1])[path[-1]] = value
    elif operation == "near":
        parent = _get(data, path[:-1])
        if isinstance(target, bool) or not isinstance(target, (int, str)):
            parent[path[-1]] = draw(JSON_VALUES)
        elif isinstance(target, int):
            parent[path[-1]] = target + draw(st.sampled_from([-1, 1]))
        else:
            parent[path[-1]] = draw(st.sampled_from([target + "x", target[:-1], target.upper(), " " + target]))
    elif operation == "delete":
        del _get(data, path[:-1])[path[-1]]
    elif operation == "add-key":
        key = draw(st.sampled_from(["extra", "id", "quote", "notes", "model"]))
        target[key] = draw(JSON_VALUES)
        path = (*path, key)  # the key written (it may replace one: a coverage entry's unchecked "notes")
    elif operation == "drop":
        target.pop(draw(st.integers(0, len(target) - 1)))
    elif operation == "repeat":
        target.append(copy.deepcopy(target[draw(st.integers(0, len(target) - 1))]))
    else:
        first, second = draw(st.integers(0, len(target) - 1)), draw(st.integers(0, len(target) - 1))
        target[first], target[second] = target[second], target[first]
    return data, path


def _unchecked(path: Path_) -> bool:
    """Fields with nothing offline to check them against (see the module docstring)."""
    if path[:1] == ("createdAt",) or path[:2] == ("model", "model"):  # the request names no model
        return True
    if path[:1] == ("answer",):  # whether there is an answer and which cited sentences it picks: the model's choice
        return True
    return len(path) >= 3 and path[0] == "coverage" and path[2] in ("notes", "searched", "hits")


def _check(good: Path, change: tuple[Any, Path_], archive: bool) -> list[str]:
    data, _ = change
    directory = copy_task(good, f"tampered-{next(_counter)}")
    write_brief(directory, data, archive=archive and isinstance(data, dict))
    return verify_task(directory)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(data=st.data())
def test_a_changed_brief_never_passes(good: Path, data: st.DataObject) -> None:
    """WF-13 (issue 16 #6, property): any change to brief.json, with brief.md re-rendered to match, is reported
    (the archived brief in memory.sqlite is the task's own record of it, createdAt included)."""
    original = read_brief(good)
    change = data.draw(tampered(original))
    if change[0] == original:
        return
    assert _check(good, change, archive=False) != [], change[1]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(data=st.data())
def test_a_changed_brief_with_a_forged_archive_never_passes_outside_unchecked_fields(good: Path,
                                                                                     data: st.DataObject) -> None:
    """WF-13 (issue 16 #6, property): with memory.sqlite's archived brief forged as well, every change is still
    reported unless it only touches a documented unchecked field (createdAt, coverage notes/searched/hits, the
    model name the request left to the provider)."""
    original = read_brief(good)
    change = data.draw(tampered(original))
    if change[0] == original or _unchecked(change[1]):
        return
    problems = _check(good, change, archive=True)
    assert problems != [], (change[1], json.dumps(change[0])[:2000])
