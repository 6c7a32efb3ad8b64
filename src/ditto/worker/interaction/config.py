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

from ..._extras import check_extra
from ..._version import __version__
from ...errors import InvalidArgumentError

if TYPE_CHECKING:
    import yarl

    from ...config import RuntimeConfig

__all__ = [
    "BRAVE_API_KEY_ENV",
    "CA_FILE_ENV",
    "DEFAULT_EXTRACT_MEMORY_BYTES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_TEXT_CHARS",
    "DEFAULT_WEB_TIMEOUT_S",
    "DEFAULT_WIKI_URL",
    "WIKI_URL_ENV",
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


def _web_module(name: str) -> None:
    """Check a module of the ``web`` extra (trafilatura) is installed, without importing it: pages are
    extracted in a child process, and the parent stays light."""
    check_extra(name, "web", "web search and reading")

BRAVE_API_KEY_ENV: Final = "DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY"
#: Seed 004: "单次请求超时 20 秒".
DEFAULT_WEB_TIMEOUT_S: Final = 20.0
#: Seed 004: "响应上限 4 MiB".
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_WIKIPEDIA_URL: Final = "https://en.wikipedia.org"
#: The MediaWiki API endpoint web search asks by default (English Wikipedia).
DEFAULT_WIKI_URL: Final = f"{DEFAULT_WIKIPEDIA_URL}/w/api.php"
WIKI_URL_ENV: Final = "DITTO_WORKER_INTERACTION_WIKI_URL"
CA_FILE_ENV: Final = "DITTO_WORKER_INTERACTION_CA_FILE"
#: At most this much extracted text per page (characters). As many as the body cap has bytes: no real page's text
#: is longer than its HTML (a character is at least one byte), so only a pathological expansion is ever cut.
DEFAULT_MAX_TEXT_CHARS: Final = DEFAULT_MAX_RESPONSE_BYTES
#: The extraction child's address-space limit: the densest 4 MiB page measured needs about 450 MiB.
DEFAULT_EXTRACT_MEMORY_BYTES: Final = 1024 * 1024 * 1024
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
    search, no key) or ``"brave"`` (needs ``brave_api_key``). ``wiki_url`` is the MediaWiki API
    endpoint that search asks (``https://wiki.example/w/api.php``; English Wikipedia by default):
    any MediaWiki works, page links come from the wiki's own site info. ``wikipedia_url`` is
    the older spelling (a wiki's base, ``/w/api.php`` appended) and is used only when
    ``wiki_url`` is left at its default. ``brave_url`` is the Brave endpoint. ``ssl_context`` or
    ``ca_file`` (a PEM file) replaces the system trust store for search and read alike
    (certificates are always verified). ``timeout_s`` bounds one request from connect to the
    last byte of extracted text; ``max_response_bytes`` bounds a body while it streams;
    ``max_text_chars`` bounds the extracted text and ``extract_memory_bytes`` the memory the
    extraction may use (it runs in a child process; past the budget a read fails with
    ``INTERACTION_RESPONSE_TOO_LARGE``).

    >>> WebOptions(allowed_origins=["https://sqlite.org"]).allowed_origins
    ('https://sqlite.org',)
    """

    allowed_origins: Sequence[str] = ()  # kept as a tuple of normalised origins
    search_engine: str = "wikipedia"
    brave_api_key: str | None = field(default=None, repr=False)
    wikipedia_url: str = DEFAULT_WIKIPEDIA_URL
    wiki_url: str = DEFAULT_WIKI_URL
    brave_url: str = DEFAULT_BRAVE_URL
    timeout_s: float = DEFAULT_WEB_TIMEOUT_S
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False)
    ca_file: str | None = None
    user_agent: str = f"ditto-agents/{__version__} (research agent; +https://pypi.org/project/ditto-agents/)"
    connection_limit: int = 32
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS
    extract_memory_bytes: int = DEFAULT_EXTRACT_MEMORY_BYTES

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
        _endpoint("wiki_url", self.wiki_url)
        if self.wiki_url == DEFAULT_WIKI_URL and self.wikipedia_url != DEFAULT_WIKIPEDIA_URL:
            object.__setattr__(self, "wiki_url", f"{self.wikipedia_url.rstrip('/')}/w/api.php")
        _endpoint("brave_url", self.brave_url)
        object.__setattr__(self, "timeout_s", _positive_seconds("timeout_s", self.timeout_s))
        if isinstance(self.extract_memory_bytes, int) and not isinstance(self.extract_memory_bytes, bool) \
                and self.extract_memory_bytes < 64 * 1024 * 1024:
            raise InvalidArgumentError("extract_memory_bytes must be at least 64 MiB (the extractor itself needs it)")
        for name in ("max_response_bytes", "connection_limit", "max_text_chars", "extract_memory_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value > 1 << 40:
                raise InvalidArgumentError(f"{name} must be a positive integer")
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise InvalidArgumentError("ssl_context must be an ssl.SSLContext")
        if self.ssl_context is not None and self.ca_file is not None:
            raise InvalidArgumentError("pass ssl_context or ca_file, not both")
        if self.ca_file is not None and (not isinstance(self.ca_file, str) or not os.path.isfile(self.ca_file)):
            raise InvalidArgumentError("ca_file is not a readable file")
        if self.ca_file is not None:
            try:
                ssl.create_default_context(cafile=self.ca_file)
            except (ssl.SSLError, OSError, ValueError):
                raise InvalidArgumentError("ca_file is not a PEM file of CA certificates") from None
        if not isinstance(self.user_agent, str) or not self.user_agent.strip() or "\n" in self.user_agent \
                or "\r" in self.user_agent:
            raise InvalidArgumentError("user_agent must be one line of text")

    def allows(self, origin: str) -> bool:
        return origin in self.allowed_origins

    @property
    def wiki_name(self) -> str:
        """How messages name the wiki search asks: "Wikipedia" for wikipedia.org, else "the wiki at HOST"."""
        import yarl

        host = (yarl.URL(self.wiki_url).host or "").lower()
        if host == "wikipedia.org" or host.endswith(".wikipedia.org"):
            return "Wikipedia"
        return f"the wiki at {host}"

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
    """WebOptions from YAML plus the environment: the Brave key, the wiki and the CA file.

    ``DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY``, ``DITTO_WORKER_INTERACTION_WIKI_URL``
    (``wiki_url``) and ``DITTO_WORKER_INTERACTION_CA_FILE`` (``ca_file``); an explicit override
    wins over the variable. The application calls this (after loading its ``.env`` if it wants
    to); the key only makes Brave *available*: the engine stays Wikipedia unless the YAML,
    ``overrides`` or the request ask for Brave.
    """
    source = os.environ if env is None else env
    for variable, name in ((BRAVE_API_KEY_ENV, "brave_api_key"), (WIKI_URL_ENV, "wiki_url"), (CA_FILE_ENV, "ca_file")):
        value = (source.get(variable) or "").strip() or None
        if value is not None and name not in overrides:
            overrides[name] = value
    return web_options_from_config(config, **overrides)
