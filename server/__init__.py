"""The REST shell: Pulsar's admin v2 API and the explorer API over one registry (architecture.md)."""

from ._app import create_app
from ._auth import Role, Tokens, load_tokens, parse_tokens

__all__ = ["Role", "Tokens", "create_app", "load_tokens", "parse_tokens"]
