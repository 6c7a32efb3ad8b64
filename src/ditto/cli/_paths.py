"""Path options and arguments of the command line: an empty string is refused, not read as ``.``.

``Path("")`` is the current directory, so ``--index ""`` (an unset shell variable) would
quietly write an index into whatever folder the shell is in, and ``--kb ""`` would name it.
Every path parameter of the CLI parses through :func:`path_value` instead.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["path_value"]


def path_value(value: str | Path, option: str | None = None) -> Path:
    """``value`` as a path; an empty one is a usage error (exit 2). ``option`` names the flag in the message
    when the value is checked after parsing (a flag that also takes other forms, such as a DSN)."""
    if isinstance(value, Path):  # a default, already a path
        return value
    if not value:
        raise typer.BadParameter("an empty path names nothing (is a shell variable unset?)", param_hint=option)
    return Path(value)
