"""YAML options and the nodes over the real HTTP transport (INT-1, INT-3, INT-4, INT-5)."""

from __future__ import annotations

import pytest

from ditto import create_ditto
from ditto.config import load_runtime_config
from ditto.errors import ConfigError
from ditto.transport import create_http_transport, create_worker_http_app
from ditto.worker.interaction import WebPage, create_interaction_worker, web_options_from_config, web_options_from_env
from tests.support.uvicorn_thread import serve_app

from .conftest import Site


def test_yaml_section_builds_web_options() -> None:
    """INT-4/INT-5: workers.interaction.web holds engine, origins and bounds; secrets stay in the environment."""
    config = load_runtime_config({"workers": {"interaction": {"web": {
        "searchEngine": "wikipedia", "allowedOrigins": ["https://sqlite.org", "https://www.sqlite.org"],
        "timeoutMs": 5000, "maxResponseBytes": 1048576, "wikipediaUrl": "https://de.wikipedia.org"}}}})
    options = web_options_from_config(config)
    assert options.allowed_origins == ("https://sqlite.org", "https://www.sqlite.org")
    assert options.timeout_s == 5.0 and options.max_response_bytes == 1048576
    assert options.wikipedia_url == "https://de.wikipedia.org"
    assert web_options_from_config(None).allowed_origins == ()
    with pytest.raises(ConfigError):
        load_runtime_config({"workers": {"interaction": {"web": {"braveApiKey": "secret"}}}})
    with pytest.raises(ConfigError):
        load_runtime_config({"workers": {"interaction": {"web": {"timeoutMs": 0}}}})
    brave = web_options_from_env(load_runtime_config({"workers": {"interaction": {"web": {"searchEngine": "brave"}}}}),
                                 env={"DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY": "k"})
    assert brave.search_engine == "brave" and brave.brave_api_key == "k"


async def test_nodes_over_http_transport(site: Site, web_options) -> None:  # type: ignore[no-untyped-def]
    """INT-1/INT-3/INT-5: ACT.TOOL, OBSERVE and WEB.READ answer the same over the HTTP transport (raw as base64)."""

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    worker = create_interaction_worker(tools=[add], web=web_options)
    server = create_ditto(workers=[worker])
    async with serve_app(create_worker_http_app(server, token="t")) as url, \
            create_http_transport(id="svc", url=url, token="t") as transport:
        caller = create_ditto(transports=[transport])
        (info,) = await transport.workers()
        caller.register_remote(address=info["address"], transport_id="svc", capabilities=info["capabilities"])
        result = await caller.invoke("INTERACTION.ACT.TOOL", {"call": {"id": "c", "name": "add",
                                                                       "arguments": {"a": 1, "b": 2}}})
        assert result.output == {"callId": "c", "name": "add", "status": "success", "content": 3,
                                 "source": "tool:add"}
        observed = await caller.invoke("INTERACTION.OBSERVE", {"result": result})
        assert observed.output is not None and observed.output["message"] == {
            "role": "tool", "content": "3", "toolCallId": "c", "name": "add"}
        page = await caller.invoke("INTERACTION.WEB.READ", {"url": site.url("/page")})
        parsed = WebPage.model_validate(page.output)
        assert "45 days" in parsed.text and parsed.raw.startswith(b"<!DOCTYPE html>")
        refused = await caller.invoke("INTERACTION.WEB.READ", {"url": f"{site.other_origin}/page"})
        assert refused.error is not None and refused.error.code == "INTERACTION_ORIGIN_NOT_ALLOWED"
        await caller.close()
    await server.close()
    await worker.aclose()


def test_importing_interaction_loads_no_http_extraction_or_mcp_library() -> None:
    """INT-1: `import ditto.worker.interaction` stays light; aiohttp, trafilatura and mcp load on first use."""
    import json
    import subprocess
    import sys

    code = ("import json, sys, ditto.worker.interaction\n"
            "print(json.dumps([m for m in ('aiohttp', 'yarl', 'trafilatura', 'mcp', 'httpx') if m in sys.modules]))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout) == []


async def test_worker_shape_concurrency_and_shared_sdk() -> None:
    """INT-1: six nodes, concurrency per replica, and an application-owned SDK that the worker never closes."""
    from ditto.errors import InvalidArgumentError
    from ditto.worker.interaction import (
        create_interaction,
        interaction_act_mcp_node,
        interaction_act_tool_node,
        interaction_list_tools_node,
        interaction_observe_node,
        interaction_web_read_node,
        interaction_web_search_node,
    )

    worker = create_interaction_worker(concurrency=2)
    descriptors = [interaction_act_tool_node, interaction_act_mcp_node, interaction_list_tools_node,
                   interaction_observe_node, interaction_web_search_node, interaction_web_read_node]
    assert worker.type == "INTERACTION" and worker.concurrency == 2
    assert set(worker.capabilities) == {descriptor.type for descriptor in descriptors}
    sdk = create_interaction(tools=[lambda_tool])
    shared = create_interaction_worker(interaction=sdk)
    assert shared.interaction is sdk and not shared.owns_interaction
    runtime = create_ditto(workers=[shared])
    result = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": {"id": "c", "name": "lambda_tool",
                                                                   "arguments": {}}})
    assert result.unwrap().content == "ok"
    await runtime.close()
    await shared.aclose()
    with pytest.raises(InvalidArgumentError):
        create_interaction_worker(tools=[lambda_tool], interaction=sdk)
    with pytest.raises(InvalidArgumentError):
        create_interaction_worker(interaction=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        create_interaction_worker(web={"allowed": []})  # a dict form with an unknown option
    custom = interaction_act_tool_node.define("APP", lambda input: sdk.act_tool(input))
    assert custom.capabilities == ("INTERACTION.ACT.TOOL",)
    await sdk.aclose()


def lambda_tool() -> str:
    """Says ok."""
    return "ok"


def test_serve_factory_reads_yaml_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """INT-4/INT-5: `ditto serve --worker ditto.worker.interaction:interaction_worker_from_env` builds the worker."""
    from ditto.cli.app import load_worker_factory

    monkeypatch.setenv("DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY", "from-env")
    config = load_runtime_config({"workers": {"interaction": {"web": {"allowedOrigins": ["https://sqlite.org"]}}}})
    (worker,) = load_worker_factory("ditto.worker.interaction:interaction_worker_from_env", config)
    options = worker.interaction.web.options  # type: ignore[attr-defined]
    assert options.allowed_origins == ("https://sqlite.org",) and options.brave_api_key == "from-env"
    assert options.search_engine == "wikipedia"
