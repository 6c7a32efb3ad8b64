"""A model worker whose failure text carries the process's secrets, as a careless client library's would.

For ``ditto research --worker tests.research.leaky:create_leaky_infer_worker``: every
``INFER.SAMPLE`` raises an error that echoes the INFER key, ``PGPASSWORD`` and a DSN
with its password, which the runtime logs with its traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ditto.runtime import WorkerDefinition


class LeakyClientError(RuntimeError):
    """Stands for a third-party error whose text quotes what the library was given."""


def _settings() -> dict[str, str]:
    """The process environment over ``./.env``, as a client configured the way the CLI is would see it."""
    from ditto.config import load_dotenv_mapping

    settings = dict(load_dotenv_mapping(Path(".env"))) if Path(".env").is_file() else {}
    settings.update(os.environ)
    return settings


async def _sample(input: Any, context: Any = None) -> Any:
    settings = _settings()
    key = settings.get("DITTO_WORKER_INFER_API_KEY", "")
    password = settings.get("PGPASSWORD", "")
    dsn = settings.get("LEAKY_DSN", "")
    raise LeakyClientError(f"401 Unauthorized: Authorization: Bearer {key}\n"
                           f"psql: FATAL password authentication failed (password={password}) for {dsn}")


def create_leaky_infer_worker() -> WorkerDefinition:
    return WorkerDefinition("INFER", {"INFER.SAMPLE": _sample})


def create_crashing_factory() -> WorkerDefinition:
    """A ``--worker`` factory that crashes the command itself with the INFER key in its message."""
    raise LeakyClientError(f"cannot configure the client with key {_settings().get('DITTO_WORKER_INFER_API_KEY')}")
