"""The webhooks of `schema-explorer serve`, as a remote registry reaches them (/explorer/v1/webhooks, an admin's
token). The server keeps them and delivers; a plain broker keeps none: NotSupportedError before any request.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence

from .._errors import InvalidArgumentError, NotSupportedError
from ..proposals._model import Actor
from ..webhooks._handle import Webhooks
from ..webhooks._model import Webhook
from ._explorer_api import EXPLORER
from ._proposals import ProposalsApi

WEBHOOKS = f"{EXPLORER}/webhooks"


class RemoteWebhooks(Webhooks):
    """The webhooks of a remote registry (`RemoteRegistry.webhooks`)."""

    __slots__ = ("_api", "_url", "_wrote")

    def __init__(self, api: ProposalsApi | None, url: str, wrote: Callable[[], None]) -> None:
        """`api` None: a plain broker; `wrote` tells the handle a change reached the server."""
        self._api = api
        self._url = url
        self._wrote = wrote

    def _webhook_api(self) -> ProposalsApi:
        if self._api is None:
            raise NotSupportedError(
                f"{self._url} is a Pulsar broker, which keeps no webhooks: add them in schema-explorer serve, "
                "or in an embedded registry"
            )
        return self._api

    def list(self) -> builtins.list[Webhook]:
        api = self._webhook_api()
        doc = api._read(WEBHOOKS, [], "listing webhooks")
        return api._decoded(builtins.list[Webhook], doc.get("webhooks"), "listing webhooks")

    def add(self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor) -> Webhook:
        body = {"url": url, "events": builtins.list(events), "secret": secret}
        made = self._webhook_api()._write(Webhook, "POST", WEBHOOKS, body, "adding a webhook")
        self._wrote()
        return made

    def remove(self, webhook_id: int, *, actor: Actor) -> Webhook:
        if isinstance(webhook_id, bool) or not isinstance(webhook_id, int) or webhook_id < 1:
            raise InvalidArgumentError(f"a webhook id is a whole number from 1, not {webhook_id!r}")
        path = f"{WEBHOOKS}/{webhook_id}"
        gone = self._webhook_api()._write(Webhook, "DELETE", path, {}, f"removing webhook #{webhook_id}")
        self._wrote()
        return gone
