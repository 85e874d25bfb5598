"""`Webhooks`: the small interface behind `SchemaRegistry.webhooks`, a registry's notifications.

The embedded registry keeps its webhooks in its own storage (`_desk.py`), a remote one asks `schema-explorer
serve` (registry/remote/_webhooks.py), a read-only handle lists and refuses the rest (registry/_read_only.py).
Every member is abstract and documented here: the contract.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import Sequence

from ..proposals._model import Actor
from ._model import Webhook


class Webhooks(abc.ABC):
    """The webhooks of one registry: who is told of which events after each write commits."""

    __slots__ = ()

    @abc.abstractmethod
    def list(self) -> builtins.list[Webhook]:
        """The registry's webhooks, each with its last delivery, never with its secret (`has_secret` says
        whether one is set). A plain broker keeps none: NotSupportedError."""

    @abc.abstractmethod
    def add(self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor) -> Webhook:
        """Tell `url` (http or https) of the `events` (names or globs such as `proposal.*`) after each write
        commits, each body signed with `secret` when one is given (an admin)."""

    @abc.abstractmethod
    def remove(self, webhook_id: int, *, actor: Actor) -> Webhook:
        """Stop telling a webhook (an admin); returns it as it was."""
