"""`import ditto` stays light: transports, clients and the CLI load only when used."""

from __future__ import annotations

import json
import subprocess
import sys


def test_import_ditto_loads_no_server_or_client_library() -> None:
    """RT-1: importing the runtime does not pull in starlette, httpx, aiohttp, uvicorn, redis, typer or rich;
    the lazily exported transport names still work (and load the client library, aiohttp since issue 19)."""
    code = ("import json, sys, ditto\n"
            "heavy = [m for m in ('starlette', 'httpx', 'aiohttp', 'uvicorn', 'redis', 'typer', 'rich')\n"
            "         if m in sys.modules]\n"
            "ditto.create_http_transport\n"
            "print(json.dumps([heavy, 'aiohttp' in sys.modules]))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout) == [[], True]
