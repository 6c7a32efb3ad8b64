"""The package version: the single source for pyproject (dynamic) and ``ditto.__version__``."""

__version__ = "0.1.0"
