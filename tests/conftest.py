"""Root test configuration: shared by every test folder; keep it small."""

from __future__ import annotations

import os

# Hypothesis: deterministic enough for CI, fast enough for 2 cores.
from hypothesis import HealthCheck, settings

#: The real servers (SQLite docs, MediaWiki over HTTPS on loopback), shared by every suite that asks for them.
pytest_plugins = ["tests.support.real_servers"]

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("dev", max_examples=30, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
