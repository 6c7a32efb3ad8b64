"""Every Python block of docs/interaction.md runs as written, in order, in one namespace (INT-1…INT-6).

There is no internet here, so the public servers the page names are replaced by the local stand-ins the
other tests use, and only those: ``https://sqlite.org`` by the HTTPS test site (its CA trusted through
``SSL_CERT_FILE``, which the default trust store reads), Wikipedia and Brave by the local engines (added
next to ``allowed_origins=``), ``python files_server.py`` by a small MCP server written into the working
directory. Everything else — names, arguments, node inputs — is the page's own text.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from tests.support.doc_blocks import DOCS, python_blocks, run_blocks

from .conftest import BRAVE_TOKEN, SearchServers, Site

FILES_SERVER = '''"""The docs' files_server.py: an MCP server with one tool, read_file."""
from mcp.server.mcpserver import MCPServer

server = MCPServer("files")


@server.tool()
def read_file(path: str) -> str:
    """Read one documentation file."""
    return f"contents of {path}"


if __name__ == "__main__":
    server.run("stdio")
'''


def local_stand_ins(block: str, site: Site, engines: SearchServers) -> str:
    block = block.replace("https://sqlite.org/wal.html", f"{site.origin}/page")
    return block.replace('allowed_origins=["https://sqlite.org"]',
                         f'allowed_origins=["{site.origin}"], wikipedia_url="{engines.wiki_url}", '
                         f'brave_url="{engines.brave_url}"')


async def test_every_block_of_the_interaction_page_runs(site: Site, search_servers: SearchServers, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """INT-1…INT-6: the tool, observation → CONTEXT.UPDATE, MCP, web search and web read examples of
    docs/interaction.md run and answer what their comments say."""
    blocks = python_blocks(DOCS / "interaction.md")
    assert len(blocks) >= 9
    (tmp_path / "files_server.py").write_text(FILES_SERVER, encoding="utf-8")
    (tmp_path / "ditto.yaml").write_text(
        "workers:\n  interaction:\n    web:\n"
        f'      allowedOrigins: ["{site.origin}"]\n      wikipediaUrl: "{search_servers.wiki_url}"\n',
        encoding="utf-8")
    ca = tmp_path / "ca.pem"
    site.tls.ca.cert_pem.write_to_path(str(ca))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("SEARCH_MCP_TOKEN", "docs-token")
    monkeypatch.setenv("DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY", BRAVE_TOKEN)
    # A real module, so pydantic can resolve the annotations of the page's tools.
    module = types.ModuleType("ditto_docs_interaction")
    sys.modules[module.__name__] = module
    try:
        await run_blocks([local_stand_ins(block, site, search_servers) for block in blocks], module.__dict__,
                         str(DOCS / "interaction.md"))
    finally:
        del sys.modules[module.__name__]
    names = module.__dict__
    assert names["observation"].message.content == "1080"
    assert names["result"].output.content == {"result": "contents of README.md"}
    assert "read_file" in {spec.name for spec in names["tools"]}
    assert 1 <= len(names["found"].candidates) <= 5
    assert names["page"].status == 200 and "45 days" in names["page"].text
    assert names["options"].search_engine == "wikipedia" and names["options"].allowed_origins == (site.origin,)
    assert tuple(names["config"].interaction.web.allowed_origins) == (site.origin,)
    assert site.state.paths == ["/page", "/page", "/page"]
