"""The YAML reference (``docs/configuration.md``), rendered from the configuration models.

The models are the one source: each field's type, bounds and allowed values come from
``RuntimeConfig``'s JSON Schema and its meaning from the field's docstring. ``scripts/gen-config-reference``
writes the page and a test fails when the page and the models drift apart, so a new option cannot be
added without appearing in the reference.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .models import RuntimeConfig

__all__ = ["render_configuration_reference"]

_HEADER = """\
# Configuration reference

<!-- Generated from src/ditto/config/models.py by scripts/gen-config-reference; do not edit by hand. -->

`load_runtime_config_file(path, env)` reads one YAML file into a typed `RuntimeConfig`
(`config.context`, `config.retrieval`, ...). Keys are camelCase as written here (snake_case works too);
`${NAME}` is replaced by `env["NAME"]`, from the mapping you pass only, and unknown keys are refused.
Every key is optional: an unset key means the built-in default named in its row, and settings given in
code (factory options) take precedence over the file. The file never holds secrets or opens
connections: tokens, keys and the Redis URL come from the environment (`DITTO_*` variables).
`examples/ditto.yaml` is a complete example.
"""


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return schema["$defs"][ref.rsplit("/", 1)[1]]  # type: ignore[no-any-return]
    return node


def _without_null(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``X | None`` is ``anyOf: [X, null]``: the reference shows ``X`` (every key may be left out)."""
    options = [option for option in node.get("anyOf", ()) if option.get("type") != "null"]
    return options[0] if len(options) == 1 else node


def _type(schema: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    node = _resolve(schema, _without_null(node))
    if "enum" in node:
        return " \\| ".join(f"`{value}`" for value in node["enum"])
    kind = node.get("type")
    if kind == "integer":
        low, high = node.get("minimum"), node.get("maximum")
        if low is not None and high is not None:
            return f"integer {low:,}–{high:,}"
        return f"integer ≥ {low:,}" if low is not None else "integer"
    if kind == "array":
        return f"list of {_type(schema, node.get('items', {}))}s"
    return str(kind) if kind else "value"


def _section(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object schema behind ``node`` when it is a nested section, else ``None``."""
    target = _resolve(schema, _without_null(node))
    return target if "properties" in target else None


def _default(node: Mapping[str, Any]) -> str:
    value = node.get("default")
    if value is None:
        return "unset"
    return f"`{value}`"


def _walk(schema: Mapping[str, Any], path: str, node: Mapping[str, Any]
          ) -> Iterator[tuple[str, Mapping[str, Any], list[tuple[str, Mapping[str, Any]]]]]:
    """Sections depth-first, in field order: ``(path, section schema, [(key, leaf schema), ...])``."""
    leaves: list[tuple[str, Mapping[str, Any]]] = []
    children: list[tuple[str, Mapping[str, Any]]] = []
    for key, field in node["properties"].items():
        nested = _section(schema, field)
        if nested is None:
            leaves.append((key, field))
        else:
            children.append((f"{path}.{key}" if path else key, nested))
    if leaves:
        yield path, node, leaves
    for child_path, child in children:
        yield from _walk(schema, child_path, child)


def render_configuration_reference() -> str:
    """The whole ``docs/configuration.md`` page, as Markdown."""
    schema = RuntimeConfig.model_json_schema(by_alias=True)
    parts = [_HEADER]
    for path, node, leaves in _walk(schema, "", schema):
        summary = str(node.get("description", "")).split("\n\n", 1)[0].replace("\n", " ").replace("``", "`")
        summary = summary.removeprefix(f"`{path}`: ")
        parts.append(f"\n## `{path}`\n\n{summary}\n\n| key | type | default | meaning |\n| --- | --- | --- | --- |\n")
        for key, field in leaves:
            meaning = str(field.get("description", "(undocumented)")).replace("\n", " ").replace("|", "\\|")
            parts.append(f"| `{key}` | {_type(schema, field)} | {_default(field)} | {meaning} |\n")
    return "".join(parts)
