"""The webhooks of `schema-explorer serve`, as a remote registry reaches them (/explorer/v1/webhooks, an admin's
token). The server keeps them and delivers; a plain broker keeps none, so its workspace does
(remote/_workspace.py), and delivers after each write made through this handle.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import InvalidArgumentError, NotSupportedError
from ..proposals._model import Actor
from ..webhooks._model import Webhook
from ._admin_client import AdminClient
from ._explorer_api import EXPLORER
from ._proposals import ProposalsApi
from ._workspace import Workspace

WEBHOOKS = f"{EXPLORER}/webhooks"


class RemoteWebhooks:
    """The webhook calls of a remote registry (`RemoteRegistry` inherits them)."""

    _client: AdminClient
    _proposal_api: ProposalsApi | None
    _own_writes: int
    _workspace: Workspace | None

    def _webhook_api(self) -> ProposalsApi:
        if self._proposal_api is None:
            raise NotSupportedError(
                f"{self._client.url} is a Pulsar broker, which keeps no webhooks: add them in schema-explorer serve, "
                "or in an embedded registry"
            )
        return self._proposal_api

    def webhooks(self) -> list[Webhook]:
        if self._workspace is not None:
            return self._workspace.webhooks()
        api = self._webhook_api()
        doc = api._read(WEBHOOKS, [], "listing webhooks")
        return api._decoded(list[Webhook], doc.get("webhooks"), "listing webhooks")

    def add_webhook(
        self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor
    ) -> Webhook:
        if self._workspace is not None:
            return self._workspace.add_webhook(url, events, secret, actor)
        body = {"url": url, "events": list(events), "secret": secret}
        made = self._webhook_api()._write(Webhook, "POST", WEBHOOKS, body, "adding a webhook")
        self._own_writes += 1
        return made

    def remove_webhook(self, webhook_id: int, *, actor: Actor) -> Webhook:
        if isinstance(webhook_id, bool) or not isinstance(webhook_id, int) or webhook_id < 1:
            raise InvalidArgumentError(f"a webhook id is a whole number from 1, not {webhook_id!r}")
        if self._workspace is not None:
            return self._workspace.remove_webhook(webhook_id, actor)
        path = f"{WEBHOOKS}/{webhook_id}"
        gone = self._webhook_api()._write(Webhook, "DELETE", path, {}, f"removing webhook #{webhook_id}")
        self._own_writes += 1
        return gone
