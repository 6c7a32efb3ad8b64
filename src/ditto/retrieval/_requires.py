"""Imported first by :mod:`ditto.retrieval`: numpy (the ``retrieval`` extra) must be installed.

Without it ``import ditto.retrieval`` fails with :class:`~ditto.errors.MissingExtraError` naming the
install command, rather than with numpy's bare ``ModuleNotFoundError`` from a provider module.
"""

from .._extras import require_extra

require_extra("numpy", "retrieval", "ditto.retrieval")
