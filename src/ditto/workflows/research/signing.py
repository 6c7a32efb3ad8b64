"""An optional signature of a brief: HMAC-SHA256 over ``brief.json`` and the snapshots it cites.

``ditto verify`` can prove a brief is consistent with its task directory, but
somebody who rewrites the snapshots, ``request.json`` and the brief together
makes a consistent forgery. A keyed MAC closes that gap for whoever holds the
key: :func:`sign_brief` writes ``artifacts/brief.sig``::

    {"algorithm": "HMAC-SHA256", "keyId": "<first 8 hex of SHA-256 of the key>", "mac": "<64 hex>"}

The MAC covers :func:`signed_message`: a fixed prefix, the exact canonical
bytes of ``brief.json`` and the sorted SHA-256 digests of the snapshots its
evidence cites. The key comes from ``DITTO_RESEARCH_SIGNING_KEY`` (see
:func:`signing_key`); it never appears in a file, a log or a message, only its
key id does.

Example::

    key = signing_key(os.environ)
    if key is not None:
        sign_brief(task.directory, key)
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from .errors import ResearchError
from .taskdir import atomic_write, task_path
from .untrusted_files import UntrustedFileError, open_dir, parse_json, read_file

__all__ = ["ALGORITHM", "SIGNATURE_FILE", "SIGNING_KEY_ENV", "brief_mac", "check_signature", "cited_digests", "key_id",
           "sign_brief", "sign_if_configured", "signed_message", "signing_key"]

SIGNING_KEY_ENV: Final = "DITTO_RESEARCH_SIGNING_KEY"
SIGNATURE_FILE: Final = "brief.sig"
ALGORITHM: Final = "HMAC-SHA256"
MAX_BRIEF_BYTES: Final = 16 << 20
_PREFIX: Final = b"ditto-research-brief-signature-v1\n"


def signing_key(env: Mapping[str, str]) -> bytes | None:
    """The signing key from ``DITTO_RESEARCH_SIGNING_KEY`` (UTF-8 bytes), or ``None`` when unset or empty."""
    value = env.get(SIGNING_KEY_ENV)
    return value.encode("utf-8") if value else None


def key_id(key: bytes) -> str:
    """Names the key without revealing it: the first 8 hex digits of its SHA-256."""
    return hashlib.sha256(key).hexdigest()[:8]


def signed_message(brief_bytes: bytes, snapshot_digests: Iterable[str]) -> bytes:
    """What the MAC covers: prefix, ``brief.json``'s bytes, a NUL, then each cited snapshot digest once, sorted."""
    digests = "\n".join(sorted(set(snapshot_digests)))
    return _PREFIX + brief_bytes + b"\x00" + digests.encode("ascii", "replace")


def brief_mac(key: bytes, brief_bytes: bytes, snapshot_digests: Iterable[str]) -> str:
    """The HMAC-SHA256 (hex) of :func:`signed_message`."""
    return hmac.new(key, signed_message(brief_bytes, snapshot_digests), hashlib.sha256).hexdigest()


def cited_digests(brief: Any) -> list[str]:
    """The snapshot digests a parsed ``brief.json`` cites (its evidence's ``snapshotSha256``)."""
    evidence = brief.get("evidence") if isinstance(brief, dict) else None
    if not isinstance(evidence, list):
        return []
    return [item["snapshotSha256"] for item in evidence
            if isinstance(item, dict) and isinstance(item.get("snapshotSha256"), str)]


def sign_brief(directory: Path | str, key: bytes | str) -> dict[str, str]:
    """Write ``artifacts/brief.sig`` for the task's current ``brief.json``; returns the signature document.

    Call it after the brief is written. ``RESEARCH_INVALID_INPUT`` for an empty
    key or an unusable directory, ``RESEARCH_BRIEF_WRITE_FAILED`` when
    ``brief.json`` cannot be read (a link, not JSON) or the signature cannot be written.
    """
    secret = key.encode("utf-8") if isinstance(key, str) else key
    if not isinstance(secret, bytes) or not secret:
        raise ResearchError("RESEARCH_INVALID_INPUT", "the signing key must be a non-empty string or bytes")
    root = task_path(directory)
    try:
        with open_dir(str(root)) as root_fd, open_dir("artifacts", parent=root_fd) as artifacts_fd:
            data = read_file(artifacts_fd, "brief.json", MAX_BRIEF_BYTES)
        parsed = parse_json(data)
    except (UntrustedFileError, ValueError) as error:
        raise ResearchError("RESEARCH_BRIEF_WRITE_FAILED", f"artifacts/brief.json cannot be signed: {error}") from None
    document = {"algorithm": ALGORITHM, "keyId": key_id(secret), "mac": brief_mac(secret, data, cited_digests(parsed))}
    try:
        atomic_write(root / "artifacts" / SIGNATURE_FILE,
                     (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    except OSError:
        import logging

        logging.getLogger(__name__).exception("writing the brief signature failed")
        raise ResearchError("RESEARCH_BRIEF_WRITE_FAILED", "artifacts/brief.sig could not be written") from None
    return document


def sign_if_configured(directory: Path | str, env: Mapping[str, str]) -> dict[str, str] | None:
    """:func:`sign_brief` with the key from ``env`` (``DITTO_RESEARCH_SIGNING_KEY``); ``None`` when no key is set.

    The one call the workflow makes after writing ``brief.json``.
    """
    key = signing_key(env)
    return sign_brief(directory, key) if key is not None else None


def check_signature(key: bytes, brief_bytes: bytes, brief: Any, signature: bytes) -> str | None:
    """``None`` when ``signature`` (``brief.sig``'s bytes) is a valid MAC of the brief under ``key``; else why not.

    The MACs are compared in constant time (``hmac.compare_digest``).
    """
    try:
        document = parse_json(signature, max_depth=2)
    except ValueError as error:
        return f"artifacts/brief.sig is not readable: {error}"
    if (not isinstance(document, dict) or set(document) != {"algorithm", "keyId", "mac"}
            or not all(isinstance(value, str) for value in document.values())):
        return "artifacts/brief.sig is not a signature document (algorithm, keyId, mac)"
    if document["algorithm"] != ALGORITHM:
        return f"artifacts/brief.sig uses an unsupported algorithm (only {ALGORITHM})"
    if not hmac.compare_digest(document["keyId"].encode("utf-8", "replace"), key_id(key).encode("ascii")):
        return "artifacts/brief.sig was made with another key (its keyId differs)"
    expected = brief_mac(key, brief_bytes, cited_digests(brief))
    if not hmac.compare_digest(document["mac"].encode("utf-8", "replace"), expected.encode("ascii")):
        return "artifacts/brief.sig does not match: brief.json or its cited snapshots were changed after signing"
    return None
