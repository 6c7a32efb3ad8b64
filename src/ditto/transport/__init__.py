"""Worker transports: the HTTP server app and its httpx client."""

from .http_app import DEFAULT_MAX_BODY_BYTES, create_worker_http_app
from .http_client import HttpTransport, create_http_transport

__all__ = ["DEFAULT_MAX_BODY_BYTES", "HttpTransport", "create_http_transport", "create_worker_http_app"]
