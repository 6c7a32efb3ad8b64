"""A stdio MCP server does not inherit the parent's environment (INT-2): it gets the SDK's minimal
environment plus the ``env`` the application configured, so a secret in the parent's environment never
reaches a third-party server process.

Issue 15, "Tests that catch the bug" (INTERACTION): the planted bug passed ``os.environ`` (or merged
``env`` over it) to the server process, and no test noticed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from ditto.worker.interaction import McpStdioServer, create_interaction

SERVER = Path(__file__).with_name("mcp_env_server.py")
SECRET_NAME = "DITTO_TEST_PARENT_SECRET"
SECRET = "parent-only-7f3a9c"
CALL = {"id": "e1", "name": "environment", "arguments": {"names": [SECRET_NAME, "DITTO_TEST_GIVEN", "PATH"]}}


def server(env: dict[str, str] | None = None) -> McpStdioServer:
    return McpStdioServer(command=sys.executable, args=(str(SERVER),), env=env, timeout_s=30)


async def environment_of(config: McpStdioServer) -> dict[str, Any]:
    async with create_interaction(mcp_servers={"env": config}) as interaction:
        result = await interaction.act_mcp({"server": "env", "call": CALL})
    assert result.status == "success", result
    content = result.content
    assert isinstance(content, dict)
    return content


async def test_a_secret_in_the_parents_environment_does_not_reach_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """INT-2 (issue 15, stdio env): with a secret set in the parent's os.environ, the server process sees
    neither its value nor its name, with no env configured and with one; a variable the application names in
    env reaches the server with the application's value, even when the parent has another."""
    monkeypatch.setenv(SECRET_NAME, SECRET)
    monkeypatch.setenv("DITTO_TEST_GIVEN", "parent-value")
    assert os.environ[SECRET_NAME] == SECRET
    bare = await environment_of(server())
    assert bare["values"][SECRET_NAME] is None and SECRET_NAME not in bare["names"]
    assert bare["values"]["DITTO_TEST_GIVEN"] is None
    assert bare["values"]["PATH"]  # the SDK's minimal default environment is there
    given = await environment_of(server({"DITTO_TEST_GIVEN": "configured"}))
    assert given["values"] == {SECRET_NAME: None, "DITTO_TEST_GIVEN": "configured", "PATH": given["values"]["PATH"]}
    assert SECRET_NAME not in given["names"]
    assert not [name for name in given["names"] if name.startswith("DITTO_") and name != "DITTO_TEST_GIVEN"]
