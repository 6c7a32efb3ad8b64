"""INTERACTION options: web access, MCP servers, and the application helper that reads the environment.

Everything here is built by the application and handed to the factory. Nothing
reads the environment implicitly: :func:`web_options_from_env` does, when the
application calls it (``DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY``).
"""

from __future__ import annotations

import math
import os
import ssl
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Final

from ..._version import __version__
from ...errors import InvalidArgumentError

if TYPE_CHECKING:
    import yarl

    from ...config import RuntimeConfig

__all__ = [
    "BRAVE_API_KEY_ENV",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_WEB_TIMEOUT_S",
    "McpHttpServer",
    "McpServer",
    "McpStdioServer",
    "WebOptions",
    "brave_key_from_environment",
    "mcp_server_from",
    "normalise_origin",
    "web_options_from",
    "web_options_from_config",
    "web_options_from_env",
]

BRAVE_API_KEY_ENV: Final = "DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY"
#: Seed 004: "单次请求超时 20 秒".
DEFAULT_WEB_TIMEOUT_S: Final = 20.0
#: Seed 004: "响应上限 4 MiB".
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_WIKIPEDIA_URL: Final = "https://en.wikipedia.org"
DEFAULT_BRAVE_URL: Final = "https://api.search.brave.com/res/v1/web/search"
DEFAULT_MCP_TIMEOUT_S: Final = 60.0
_MAX_TIMEOUT_S: Final = 3600.0


def brave_key_from_environment() -> str | None:
    """The Brave key from ``DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY`` in ``os.environ``, read now.

    The fallback when options carry no key and Brave is asked for (seed: choose ``brave`` for the
    request and configure the variable); an application that builds options itself passes its own.
    """
    key = os.environ.get(BRAVE_API_KEY_ENV, "").strip()
    return key or None


def normalise_origin(origin: str) -> str:
    """``"HTTPS://Docs.Example:443/"`` → ``"https://docs.example"``; refuses anything but an https origin.

    Raises :class:`InvalidArgumentError` for http, paths, queries, credentials or a missing host.
    """
    if not isinstance(origin, str) or not origin.strip():
        raise InvalidArgumentError("an allowed origin must be a non-empty string")
    import yarl  # aiohttp's URL type: origins are parsed exactly as the reader parses page URLs

    try:
        url = yarl.URL(origin.strip())
    except (ValueError, TypeError, IndexError):  # yarl raises IndexError for "https://[::1]@"
        raise InvalidArgumentError("an allowed origin is not a valid URL") from None
    if url.scheme != "https" or not url.host:
        raise InvalidArgumentError("allowed origins must be https://host[:port]")
    if url.user is not None or url.password is not None or url.path not in ("", "/") or url.query_string \
            or url.fragment:
        raise InvalidArgumentError("an allowed origin is scheme, host and port only (no path, query or user)")
    return _origin_text(url)


def _origin_text(url: yarl.URL) -> str:
    host = (url.raw_host or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = url.port
    return f"https://{host}" if port in (None, 443) else f"https://{host}:{port}"


def _positive_seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value <= 0 or value > _MAX_TIMEOUT_S:
        raise InvalidArgumentError(f"{name} must be a number of seconds in (0, {_MAX_TIMEOUT_S:g}]")
    return float(value)


def _endpoint(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a URL string")
    import yarl

    try:
        url = yarl.URL(value)
    except (ValueError, TypeError, IndexError):
        raise InvalidArgumentError(f"{name} is not a valid URL") from None
    if url.scheme not in ("http", "https") or not url.host or url.user is not None:
        raise InvalidArgumentError(f"{name} must be an http(s) URL without credentials")
    return value


@dataclass(frozen=True, slots=True)
class WebOptions:
    """How the web tools search and read. The defaults follow the seed.

    ``allowed_origins`` is the only way a page becomes readable (``https://host[:port]``;
    empty: nothing can be read). ``search_engine`` is ``"wikipedia"`` (MediaWiki full-text
    search, no key) or ``"brave"`` (needs ``brave_api_key``). ``wikipedia_url`` is the wiki's
    base (``/w/api.php`` and ``/wiki/<title>`` are appended), ``brave_url`` the Brave endpoint:
    both are configurable so a test or a mirror can stand in. ``ssl_context`` or ``ca_file``
    replaces the system trust store (certificates are always verified). ``timeout_s`` bounds one
    request from connect to last byte; ``max_response_bytes`` bounds a body while it streams.

    >>> WebOptions(allowed_origins=["https://sqlite.org"]).allowed_origins
    ('https://sqlite.org',)
    """

    allowed_origins: Sequence[str] = ()  # kept as a tuple of normalised origins
    search_engine: str = "wikipedia"
    brave_api_key: str | None = field(default=None, repr=False)
    wikipedia_url: str = DEFAULT_WIKIPEDIA_URL
    brave_url: str = DEFAULT_BRAVE_URL
    timeout_s: float = DEFAULT_WEB_TIMEOUT_S
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False)
    ca_file: str | None = None
    user_agent: str = f"pyditto/{__version__} (research agent; +https://pypi.org/project/pyditto/)"
    connection_limit: int = 32

    def __post_init__(self) -> None:
        origins = self.allowed_origins
        if isinstance(origins, str) or not isinstance(origins, Iterable):
            raise InvalidArgumentError("allowed_origins must be a list of https origins")
        object.__setattr__(self, "allowed_origins",
                           tuple(dict.fromkeys(normalise_origin(origin) for origin in origins)))
        if self.search_engine not in ("wikipedia", "brave"):
            raise InvalidArgumentError("search_engine must be 'wikipedia' or 'brave'")
        if self.brave_api_key is not None and (not isinstance(self.brave_api_key, str)
                                               or not self.brave_api_key.strip()):
            raise InvalidArgumentError("brave_api_key must be a non-empty string")
        if self.search_engine == "brave" and self.brave_api_key is None:
            object.__setattr__(self, "brave_api_key", brave_key_from_environment())
        if self.search_engine == "brave" and self.brave_api_key is None:
            raise InvalidArgumentError(f"search_engine 'brave' needs a Brave API key ({BRAVE_API_KEY_ENV})")
        _endpoint("wikipedia_url", self.wikipedia_url)
        _endpoint("brave_url", self.brave_url)
        object.__setattr__(self, "timeout_s", _positive_seconds("timeout_s", self.timeout_s))
        for name in ("max_response_bytes", "connection_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value > 1 << 40:
                raise InvalidArgumentError(f"{name} must be a positive integer")
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise InvalidArgumentError("ssl_context must be an ssl.SSLContext")
        if self.ssl_context is not None and self.ca_file is not None:
            raise InvalidArgumentError("pass ssl_context or ca_file, not both")
        if self.ca_file is not None and not os.path.isfile(self.ca_file):
            raise InvalidArgumentError("ca_file is not a readable file")
        if not isinstance(self.user_agent, str) or not self.user_agent.strip() or "\n" in self.user_agent \
                or "\r" in self.user_agent:
            raise InvalidArgumentError("user_agent must be one line of text")

    def allows(self, origin: str) -> bool:
        return origin in self.allowed_origins

    def make_ssl_context(self) -> ssl.SSLContext:
        """The verifying TLS context the web client uses."""
        if self.ssl_context is not None:
            return self.ssl_context
        return ssl.create_default_context(cafile=self.ca_file)

    def with_origins(self, *origins: str) -> WebOptions:
        """A copy that also allows ``origins`` (the application's decision, never a page's)."""
        return replace(self, allowed_origins=(*self.allowed_origins, *origins))


@dataclass(frozen=True, slots=True)
class McpStdioServer:
    """An MCP server started as a subprocess speaking over stdin/stdout.

    ``McpStdioServer(command=sys.executable, args=("server.py",))``. ``env`` is
    merged over the SDK's minimal default environment (the parent's secrets are
    not inherited). ``timeout_s`` bounds one call including the process start.
    ``keep_alive=True`` keeps one process and session for every call instead of
    one per call (faster; a crashed server is restarted on the next call).
    """

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    timeout_s: float = DEFAULT_MCP_TIMEOUT_S
    keep_alive: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.command, str) or not self.command.strip() or "\x00" in self.command:
            raise InvalidArgumentError("an MCP stdio server needs a command")
        if not isinstance(self.args, (list, tuple)) or not all(
                isinstance(arg, str) and "\x00" not in arg for arg in self.args):
            raise InvalidArgumentError("MCP server args must be a list of strings")
        object.__setattr__(self, "args", tuple(self.args))
        if not isinstance(self.keep_alive, bool):
            raise InvalidArgumentError("keep_alive must be a bool")
        if self.env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()):
            raise InvalidArgumentError("MCP server env must map strings to strings")
        object.__setattr__(self, "timeout_s", _positive_seconds("timeout_s", self.timeout_s))


@dataclass(frozen=True, slots=True)
class McpHttpServer:
    """An MCP server reached over streamable HTTP: ``McpHttpServer(url="https://host/mcp")``.

    ``headers`` are sent with every request (e.g. ``{"Authorization": "Bearer …"}``);
    they are hidden from ``repr`` because they usually carry credentials.
    ``keep_alive=True`` keeps one session for every call instead of one per call.
    """

    url: str
    timeout_s: float = DEFAULT_MCP_TIMEOUT_S
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    keep_alive: bool = False

    def __post_init__(self) -> None:
        _endpoint("MCP server url", self.url)
        if not isinstance(self.keep_alive, bool):
            raise InvalidArgumentError("keep_alive must be a bool")
        object.__setattr__(self, "timeout_s", _positive_seconds("timeout_s", self.timeout_s))
        if self.headers is not None:
            if not isinstance(self.headers, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) and not any(c in k + v for c in "\r\n\x00")
                    for k, v in self.headers.items()):
                raise InvalidArgumentError("MCP server headers must map strings to single-line strings")
            object.__setattr__(self, "headers", dict(self.headers))


McpServer = McpStdioServer | McpHttpServer


def _snake(name: str) -> str:
    return "".join("_" + char.lower() if char.isupper() else char for char in name)


def web_options_from(value: Any) -> WebOptions:
    """Accept a :class:`WebOptions` or its dict form in either spelling
    (``{"allowedOrigins": [...], "timeoutS": 10}``); an unknown key is a construction error."""
    if value is None:
        return WebOptions()
    if isinstance(value, WebOptions):
        return value
    if not isinstance(value, Mapping):
        raise InvalidArgumentError("web must be a WebOptions or a mapping of its options")
    known = {item.name for item in fields(WebOptions)}
    options: dict[str, Any] = {}
    for key, item in value.items():
        name = _snake(key) if isinstance(key, str) else ""
        if name not in known or name in options:
            raise InvalidArgumentError(f"web has an unknown or repeated option {str(key)[:40]!r}")
        options[name] = item
    try:
        return WebOptions(**options)
    except TypeError:
        raise InvalidArgumentError("a web option has a value of the wrong type") from None


def mcp_server_from(value: Any) -> McpServer:
    """Accept the typed configs or their dict forms ``{"command", "args"}`` / ``{"url"}``."""
    if isinstance(value, (McpStdioServer, McpHttpServer)):
        return value
    if isinstance(value, Mapping):
        keys = set(value)
        try:
            timeout_s = value.get("timeout_s", value.get("timeoutS", DEFAULT_MCP_TIMEOUT_S))
            keep_alive = value.get("keep_alive", value.get("keepAlive", False))
            common = {"timeout_s", "timeoutS", "keep_alive", "keepAlive"}
            if "url" in keys and keys <= {"url", "headers", *common}:
                return McpHttpServer(url=value["url"], timeout_s=timeout_s, headers=value.get("headers"),
                                     keep_alive=keep_alive)
            if "command" in keys and keys <= {"command", "args", "env", "cwd", *common}:
                return McpStdioServer(command=value["command"], args=value.get("args", ()), env=value.get("env"),
                                      cwd=value.get("cwd"), timeout_s=timeout_s, keep_alive=keep_alive)
        except TypeError:
            raise InvalidArgumentError("an MCP server config has a value of the wrong type") from None
    raise InvalidArgumentError("an MCP server is McpStdioServer/McpHttpServer or {'command', 'args'} / {'url'}")


def web_options_from_config(config: RuntimeConfig | None = None, **overrides: Any) -> WebOptions:
    """WebOptions from the YAML section ``workers.interaction.web``, then ``overrides``."""
    values: dict[str, Any] = {}
    section = config.workers.interaction.web if config is not None else None
    if section is not None:
        for name in ("allowed_origins", "search_engine", "wikipedia_url", "brave_url", "max_response_bytes"):
            value = getattr(section, name)
            if value is not None:
                values[name] = value
        if section.timeout_ms is not None:
            values["timeout_s"] = section.timeout_ms / 1000
    values.update(overrides)
    return WebOptions(**values)


def web_options_from_env(config: RuntimeConfig | None = None, env: Mapping[str, str] | None = None,
                         **overrides: Any) -> WebOptions:
    """WebOptions from YAML plus the Brave key in ``DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY``.

    The application calls this (after loading its ``.env`` if it wants to); the
    key only makes Brave *available*: the engine stays Wikipedia unless the YAML,
    ``overrides`` or the request ask for Brave.
    """
    source = os.environ if env is None else env
    key = source.get(BRAVE_API_KEY_ENV) or None
    if key is not None and "brave_api_key" not in overrides:
        overrides["brave_api_key"] = key
    return web_options_from_config(config, **overrides)
