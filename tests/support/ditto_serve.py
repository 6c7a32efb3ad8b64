"""Start ``ditto serve`` in its own OS process (a real uvicorn worker service)."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .net import free_port, wait_http_ok

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def ditto_serve(workers: Sequence[str], token: str, *, config: Path | None = None,
                env: dict[str, str] | None = None, args: Sequence[str] = (), ca_file: Path | None = None,
                extra: Sequence[str] = ()) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Yield ``(url, process)`` for a running ``ditto serve``; kill it on exit.

    ``args`` (or ``extra``) are extra command-line options; with ``ca_file`` the server is expected to speak
    HTTPS (``--certfile``/``--keyfile`` in ``args``) and is polled through that CA.
    """
    port = free_port()
    options = [*args, *extra]
    args = [sys.executable, "-m", "ditto", "serve", "--host", "127.0.0.1", "--port", str(port), *options]
    for spec in workers:
        args += ["--worker", spec]
    if config is not None:
        args += ["--config", str(config)]
    process_env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": token, **(env or {})}
    process = subprocess.Popen(args, cwd=ROOT, env=process_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"{'https' if ca_file else 'http'}://127.0.0.1:{port}"
    try:
        try:
            wait_http_ok(f"{url}/healthz", verify=ssl.create_default_context(cafile=str(ca_file)) if ca_file else True)
        except TimeoutError:
            process.kill()
            _, err = process.communicate(timeout=5)
            raise RuntimeError(f"ditto serve did not start: {err.decode(errors='replace')[-2000:]}") from None
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
