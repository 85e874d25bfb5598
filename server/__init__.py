"""The REST shell: Pulsar's admin v2 API and the explorer API over one registry (architecture.md)."""

from ._app import create_app
from ._auth import TokenError, Tokens, load_tokens, new_token, parse_tokens
from ._limits import ServerLimits
from ._logs import startup_line
from ._serving import serve, trusted_proxies
from ._storage_timing import StorageTimer

__all__ = [
    "ServerLimits",
    "StorageTimer",
    "TokenError",
    "Tokens",
    "create_app",
    "load_tokens",
    "new_token",
    "parse_tokens",
    "serve",
    "startup_line",
    "trusted_proxies",
]
