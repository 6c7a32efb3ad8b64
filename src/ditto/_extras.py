"""Optional dependencies: import one on first use, or say which extra installs it.

The distribution's extras (``pip install 'ditto-agents[retrieval]'``) each bring the libraries of
one optional feature. Code that needs such a library imports it through :func:`require_extra`, so a
missing install reads "ditto.retrieval needs the 'retrieval' extra: pip install 'ditto-agents[retrieval]'"
instead of a bare ``No module named 'numpy'`` from deep inside the package.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Final

from .errors import MissingExtraError

__all__ = ["DISTRIBUTION", "install_hint", "missing_extra", "require_extra"]

#: The name the package is installed under (the import package is ``ditto``).
DISTRIBUTION: Final = "ditto-agents"


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'ditto-agents[extra]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_extra(error: ModuleNotFoundError, extra: str, feature: str) -> MissingExtraError:
    """The :class:`MissingExtraError` for ``error`` raised while importing ``feature``'s library.

    A missing transitive dependency is reported the same way: installing the extra brings it back.
    """
    missing = f" ({error.name} is not installed)" if error.name else ""
    return MissingExtraError(f"{feature} needs the {extra!r} extra{missing}: {install_hint(extra)}", extra)


def require_extra(module: str, extra: str, feature: str) -> ModuleType:
    """``import module``, or raise :class:`MissingExtraError` naming ``feature`` and ``extra``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise missing_extra(error, extra, feature) from None


def check_extra(module: str, extra: str, feature: str) -> None:
    """Like :func:`require_extra`, without importing ``module`` (whose import may be costly, or belong in
    another process): :class:`MissingExtraError` when it cannot be found."""
    if importlib.util.find_spec(module) is None:
        raise missing_extra(ModuleNotFoundError(name=module), extra, feature)
