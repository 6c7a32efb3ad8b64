"""A model worker whose failure text carries the process's secrets, as a careless client library's would.

For ``ditto research --worker tests.research.leaky:create_leaky_infer_worker``: every
``INFER.SAMPLE`` raises an error that echoes the INFER key, ``PGPASSWORD`` and a DSN
with its password, which the runtime logs with its traceback.
"""

from __future__ import annotations

import os
from typing import Any

from ditto.runtime import WorkerDefinition


class LeakyClientError(RuntimeError):
    """Stands for a third-party error whose text quotes what the library was given."""


async def _sample(input: Any, context: Any = None) -> Any:
    key = os.environ.get("DITTO_WORKER_INFER_API_KEY", "")
    password = os.environ.get("PGPASSWORD", "")
    dsn = os.environ.get("LEAKY_DSN", "")
    raise LeakyClientError(f"401 Unauthorized: Authorization: Bearer {key}\n"
                           f"psql: FATAL password authentication failed (password={password}) for {dsn}")


def create_leaky_infer_worker() -> WorkerDefinition:
    return WorkerDefinition("INFER", {"INFER.SAMPLE": _sample})
