"""Reading the root YAML into :class:`RuntimeConfig`.

The loader is pure: it reads one file, expands ``${VAR}`` from the mapping the
caller passes (never from ``os.environ`` implicitly, never from ``.env``), and
validates. It opens no connection; workers get their clients from the app.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ConfigError
from .models import RuntimeConfig

__all__ = ["load_dotenv_mapping", "load_runtime_config", "load_runtime_config_file"]

_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: Any, env: Mapping[str, str], path: str, loc: tuple[Any, ...] = (),
            expanded: set[tuple[Any, ...]] | None = None) -> Any:
    """``value`` with ``${VAR}`` replaced; the locations of strings that referenced a variable go to ``expanded``."""
    if isinstance(value, str):
        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            name = match.group(1)
            if name not in env:
                raise ConfigError("CONFIG_MISSING_ENV", f"{path or '<root>'}: variable ${{{name}}} is not set")
            return env[name]

        result = _VAR.sub(replace, value)
        if expanded is not None and result != value:
            expanded.add(loc)
        return result
    if isinstance(value, dict):
        return {key: _expand(item, env, f"{path}.{key}" if path else str(key), (*loc, key), expanded)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_expand(item, env, f"{path}[{index}]", (*loc, index), expanded) for index, item in enumerate(value)]
    return value


_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: A numeric field given a string: the error types a number read from ``${VAR}`` can fix.
_NUMBER_ERRORS = {"int_type": (_INT_TEXT, int), "float_type": (_FLOAT_TEXT, float)}


def _numbers_from_env(document: Any, errors: list[Any], expanded: set[tuple[Any, ...]]) -> bool:
    """Turn expanded ``${VAR}`` strings that a numeric field refused into numbers; whether any changed.

    Environment variables are always text, so ``searchLimit: ${SEARCH_LIMIT}``
    would otherwise never validate. Only a whole string that came from an
    expansion and is an integer (for integer fields) or a decimal number (for
    float fields) is converted, so ``keyPrefix: ${PREFIX}`` stays a string.
    """
    changed = False
    for error in errors:
        rule = _NUMBER_ERRORS.get(error["type"])
        loc = tuple(error["loc"])
        if rule is None or loc not in expanded or not loc:
            continue
        parent = document
        for part in loc[:-1]:
            parent = parent[part]
        text = parent[loc[-1]]
        if isinstance(text, str) and rule[0].fullmatch(text.strip()):
            parent[loc[-1]] = rule[1](text.strip())
            changed = True
    return changed


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


def load_runtime_config(document: Any, env: Mapping[str, str] | None = None) -> RuntimeConfig:
    """Validate an already-parsed YAML document (``None`` means an empty file)."""
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError("CONFIG_INVALID", "<root>: the configuration must be a mapping")
    from_env: set[tuple[Any, ...]] = set()
    expanded = _expand(document, env or {}, "", (), from_env)
    try:
        try:
            return RuntimeConfig.model_validate(expanded)
        except ValidationError as first:
            if not _numbers_from_env(expanded, first.errors(), from_env):
                raise
            return RuntimeConfig.model_validate(expanded)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
            problems.append(f"{_location(error['loc'])}: {message}")
        raise ConfigError("CONFIG_INVALID", "; ".join(problems)) from None


def load_runtime_config_file(path: str | PathLike[str], env: Mapping[str, str] | None = None) -> RuntimeConfig:
    """Read ``path`` (YAML) into a typed config, expanding ``${VAR}`` from ``env`` only."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("CONFIG_NOT_FOUND", f"configuration file {file.name} does not exist") from None
    except OSError:
        raise ConfigError("CONFIG_NOT_FOUND", f"configuration file {file.name} cannot be read") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError("CONFIG_INVALID_YAML", f"{file.name} is not valid YAML{where}") from None
    return load_runtime_config(document, env)


def load_dotenv_mapping(path: str | PathLike[str] = ".env") -> dict[str, str]:
    """Read a ``.env`` file into a mapping, for applications that ask for it explicitly."""
    from dotenv import dotenv_values

    return {key: value for key, value in dotenv_values(path).items() if value is not None}
