"""The webhooks of `schema-explorer serve`, as a remote registry reaches them (/explorer/v1/webhooks, an admin's
token). The server keeps them and delivers; a plain broker keeps none: NotSupportedError before any request.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import InvalidArgumentError, NotSupportedError
from ..proposals._model import Actor
from ..webhooks._model import Webhook
from ._admin_client import AdminClient
from ._explorer_api import EXPLORER
from ._proposals import ProposalsApi

WEBHOOKS = f"{EXPLORER}/webhooks"


class RemoteWebhooks:
    """The webhook calls of a remote registry (`RemoteRegistry` inherits them)."""

    _client: AdminClient
    _proposal_api: ProposalsApi | None
    _own_writes: int

    def _webhook_api(self) -> ProposalsApi:
        if self._proposal_api is None:
            raise NotSupportedError(
                f"{self._client.url} is a Pulsar broker, which keeps no webhooks: add them in schema-explorer serve, "
                "or in an embedded registry"
            )
        return self._proposal_api

    def webhooks(self) -> list[Webhook]:
        api = self._webhook_api()
        doc = api._read(WEBHOOKS, [], "listing webhooks")
        return api._decoded(list[Webhook], doc.get("webhooks"), "listing webhooks")

    def add_webhook(
        self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor
    ) -> Webhook:
        body = {"url": url, "events": list(events), "secret": secret}
        made = self._webhook_api()._write(Webhook, "POST", WEBHOOKS, body, "adding a webhook")
        self._own_writes += 1
        return made

    def remove_webhook(self, webhook_id: int, *, actor: Actor) -> Webhook:
        if isinstance(webhook_id, bool) or not isinstance(webhook_id, int) or webhook_id < 1:
            raise InvalidArgumentError(f"a webhook id is a whole number from 1, not {webhook_id!r}")
        path = f"{WEBHOOKS}/{webhook_id}"
        gone = self._webhook_api()._write(Webhook, "DELETE", path, {}, f"removing webhook #{webhook_id}")
        self._own_writes += 1
        return gone
