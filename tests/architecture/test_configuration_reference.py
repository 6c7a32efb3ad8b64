"""Issue 20: docs/configuration.md is rendered from the config models, and examples/ditto.yaml sets every key.

``scripts/gen-config-reference`` writes the page; when a model gains, loses or changes a field the page
no longer matches and ``test_the_reference_is_current`` fails until it is regenerated.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from ditto import load_runtime_config_file
from ditto.config import RuntimeConfig
from ditto.config.reference import render_configuration_reference

ROOT = Path(__file__).resolve().parents[2]


def _leaves(model: type[BaseModel], path: str = "") -> Iterator[tuple[str, str]]:
    """``(section path, camelCase key)`` of every non-section field, straight from the models."""
    for name, field in model.model_fields.items():
        key = field.alias or name
        inner = [arg for arg in getattr(field.annotation, "__args__", (field.annotation,))
                 if isinstance(arg, type) and issubclass(arg, BaseModel)]
        if inner:
            yield from _leaves(inner[0], f"{path}.{key}" if path else key)
        else:
            yield path, key


def _flatten(value: Any, path: str = "") -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for key, inner in value.items():
        if isinstance(inner, dict):
            found |= _flatten(inner, f"{path}.{key}" if path else key)
        else:
            found.add((path, key))
    return found


def test_the_reference_is_current() -> None:
    """The committed page is exactly what the models render (run scripts/gen-config-reference)."""
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == render_configuration_reference()


def test_every_field_is_in_the_reference_with_a_meaning() -> None:
    """Each leaf field of RuntimeConfig has a row under its section, and none is undocumented."""
    page = render_configuration_reference()
    leaves = list(_leaves(RuntimeConfig))
    assert len(leaves) >= 24
    sections = {section: body for section, body in
                (part.split("`\n", 1) for part in page.split("\n## `")[1:])}
    for section, key in leaves:
        assert f"| `{key}` |" in sections[section], (section, key)
    assert "(undocumented)" not in page


def test_the_shipped_yaml_sets_every_key_and_loads() -> None:
    """examples/ditto.yaml loads with the real loader and names every key of the reference."""
    path = ROOT / "examples" / "ditto.yaml"
    config = load_runtime_config_file(path, {})
    assert config.context.policy is not None and config.context.policy.max_items == 256
    assert config.retrieval.search_limit == 10 and config.transport.http.max_body_bytes == 8 * 1024 * 1024
    assert _flatten(yaml.safe_load(path.read_text(encoding="utf-8"))) == set(_leaves(RuntimeConfig))
