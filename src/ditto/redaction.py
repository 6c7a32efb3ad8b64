"""Log lines that leak no secrets and cannot be forged.

Third-party libraries put what they were given into their error texts: an
HTTP client echoes the ``Authorization`` it sent, a database driver the DSN
with its password. Those texts reach the log (and, with ``--verbose``, their
tracebacks). :class:`RedactingFilter` rewrites every record that passes a
handler before it is formatted:

* the values of secret environment variables (names ending in ``_API_KEY``,
  ``_PASSWORD``, ``_TOKEN``, ``_SECRET``, ``_KEY`` under ``DITTO_``, and
  ``PGPASSWORD``) become ``***``;
* the password of any ``scheme://user:password@host`` URL becomes ``***``;
* control characters in the record's arguments (a newline in a file name)
  are escaped, so one record is one line of its own text.

It applies to the message, its arguments, the traceback and the stack, so
verbose or not, the secret never reaches the stream. The ``ditto`` command
installs it; a library user calls :func:`install_redaction`::

    import logging
    from ditto.redaction import install_redaction

    logging.basicConfig(level=logging.WARNING)
    install_redaction()      # every handler of the root logger, secrets from os.environ
"""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "MASK",
    "RedactingFilter",
    "install_redaction",
    "installed_secrets",
    "is_secret_name",
    "printable",
    "redact",
    "secret_values",
]

MASK: Final = "***"
#: Values shorter than this are not masked: masking "1" or "yes" everywhere would ruin every line.
MIN_SECRET_LENGTH: Final = 4
_SECRET_SUFFIXES: Final = ("_API_KEY", "_APIKEY", "_PASSWORD", "_PASSWD", "_TOKEN", "_SECRET", "_CREDENTIALS")
_SECRET_NAMES: Final = frozenset({"PGPASSWORD", "DITTO_WORKER_INFER_API_KEY",
                                  "DITTO_WORKER_INTERACTION_BRAVE_SEARCH_API_KEY"})
#: ``scheme://user:password@`` — the password is group 2; the user part may be empty (``redis://:pw@``).
_URL_PASSWORD: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]*:)([^\s@/'\"]+)(@)")
#: ``password=...`` in a libpq key/value DSN (``host=db password=secret``).
_DSN_PASSWORD: Final = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'\"]+)", re.IGNORECASE)
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (by its name alone)."""
    upper = name.upper()
    return upper in _SECRET_NAMES or upper.endswith(_SECRET_SUFFIXES) or (
        upper.startswith("DITTO_") and upper.endswith("_KEY"))


def secret_values(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """The secrets in ``env`` (default ``os.environ``): secret variables' values and URL passwords."""
    source = os.environ if env is None else env
    found: set[str] = set()
    for name, value in source.items():
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
            found.add(value)
        for match in _URL_PASSWORD.finditer(value):
            if len(match.group(2)) >= MIN_SECRET_LENGTH:
                found.add(match.group(2))
    return frozenset(found)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every one of ``secrets`` and every URL or DSN password replaced by ``***``.

    Longer secrets are replaced first, so a secret that contains another is
    masked whole.
    """
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and secret in text:
            text = text.replace(secret, MASK)
    text = _URL_PASSWORD.sub(lambda match: f"{match.group(1)}{MASK}{match.group(3)}", text)
    return _DSN_PASSWORD.sub(lambda match: f"{match.group(1)}{MASK}", text)


def printable(value: object) -> str:
    """``str(value)`` with control characters escaped (``\\n``, ``\\x1b``): one name, one line.

    A file may be called ``"a\\nERROR:forged"``; logged as is, it would write a
    line of its own. Escaping keeps every other character (non-ASCII names
    stay readable).
    """
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def _clean_argument(value: Any, secrets: frozenset[str]) -> Any:
    if isinstance(value, (str, os.PathLike)):
        return redact(printable(value), secrets)
    if isinstance(value, BaseException):
        return redact(printable(value), secrets)
    return value


class RedactingFilter(logging.Filter):
    """Masks secrets in a record's message, arguments, traceback and stack; escapes its arguments.

    ``env`` fixes where secrets are looked up (default: ``os.environ`` at each
    record, so a key set after logging was configured is still masked);
    ``extra`` adds values to mask. It never drops a record.
    """

    def __init__(self, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> None:
        super().__init__()
        self._envs: list[Mapping[str, str] | None] = [env]
        self._extra = frozenset(value for value in extra if len(value) >= MIN_SECRET_LENGTH)

    def watch(self, env: Mapping[str, str]) -> None:
        """Also mask the secrets of ``env`` (an application's merged ``.env`` and process environment)."""
        self._envs.append(env)

    def secrets(self) -> frozenset[str]:
        found = set(self._extra)
        for env in self._envs:
            found |= secret_values(env)
        return frozenset(found)

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self.secrets()
        try:
            if isinstance(record.args, Mapping):
                args: Any = {key: _clean_argument(value, secrets) for key, value in record.args.items()}
            elif isinstance(record.args, tuple):
                args = tuple(_clean_argument(value, secrets) for value in record.args)
            else:
                args = record.args
            message = str(record.msg) % args if args else str(record.msg)
            record.msg, record.args = redact(message, secrets), None
            if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
                record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            if record.exc_text:
                record.exc_text = redact(record.exc_text, secrets)
            if record.stack_info:
                record.stack_info = redact(record.stack_info, secrets)
        except Exception:  # a filter must never lose the record it guards, nor let it through unmasked
            record.msg, record.args = f"(a log record could not be redacted: {MASK})", None
        return True


def installed_secrets() -> frozenset[str]:
    """The secrets every installed :class:`RedactingFilter` masks, plus those of ``os.environ``."""
    found = set(secret_values())
    for handler in logging.getLogger().handlers:
        for guard in handler.filters:
            if isinstance(guard, RedactingFilter):
                found |= guard.secrets()
    return frozenset(found)


def install_redaction(handlers: Iterable[logging.Handler] | None = None, *,
                      env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> RedactingFilter:
    """Add one :class:`RedactingFilter` to ``handlers`` (default: every handler of the root logger)."""
    chosen = list(logging.getLogger().handlers if handlers is None else handlers)
    guard = RedactingFilter(env, extra)
    for handler in chosen:
        if not any(isinstance(existing, RedactingFilter) for existing in handler.filters):
            handler.addFilter(guard)
    return guard
