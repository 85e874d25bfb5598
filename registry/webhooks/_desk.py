"""Adding, listing and removing an embedded registry's webhooks: each change one audited write (an admin's:
`Step.MANAGE_WEBHOOKS` in the permission table), read and rewritten inside its transaction so two admins adding
at once get two ids. The audit line names the receiver by scheme and host only: a chat service's webhook URL
is itself a credential, and the secret is never written anywhere but the webhook's record.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from .._audit import AuditAction
from .._auditing import Auditor
from .._errors import InvalidArgumentError, NotFoundError
from ..proposals._model import Actor, ReviewRules
from ..proposals._permissions import Step, allowed_steps
from ..proposals._rules import checked_actor
from ..storage._base import LocalStorage
from . import _records
from ._handle import Webhooks
from ._model import Webhook, checked_events, checked_secret, checked_url

TARGET = "registry"  # the audit trail's target for a registry-wide change
MAX_WEBHOOKS = 100


class WebhookDesk(Webhooks):
    """The webhooks of one embedded registry (`Registry.webhooks`)."""

    def __init__(self, storage: LocalStorage, auditor: Auditor, clock: Callable[[], int]) -> None:
        self._storage = storage
        self._auditor = auditor
        self._clock = clock

    def list(self) -> builtins.list[Webhook]:
        return [s.hook for s in _records.load(self._storage).hooks]

    def add(self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor) -> Webhook:
        with self._auditor.audited(AuditAction.ADD_WEBHOOK, TARGET, _name(actor)) as note:
            checked = _admin(actor)
            text = checked_url(url)
            wanted = checked_events(events)
            key = checked_secret(secret)
            hooks = _records.load(self._storage)
            if len(hooks.hooks) >= MAX_WEBHOOKS:
                raise InvalidArgumentError(f"a registry keeps at most {MAX_WEBHOOKS} webhooks: remove one first")
            made = Webhook(
                id=hooks.next_id,
                url=text,
                events=wanted,
                has_secret=key is not None,
                created_at=self._clock(),
                created_by=checked.name,
            )
            _records.save(self._storage, _records.Hooks(hooks.next_id + 1, (*hooks.hooks, _records.Stored(made, key))))
            signed = "signed" if key is not None else "unsigned"
            note.detail = f"webhook #{made.id} to {_host(text)} for {', '.join(wanted)} ({signed})"
        return made

    def remove(self, webhook_id: int, *, actor: Actor) -> Webhook:
        with self._auditor.audited(AuditAction.REMOVE_WEBHOOK, TARGET, _name(actor)) as note:
            _admin(actor)
            if isinstance(webhook_id, bool) or not isinstance(webhook_id, int) or webhook_id < 1:
                raise InvalidArgumentError(f"a webhook id is a whole number from 1, not {webhook_id!r}")
            hooks = _records.load(self._storage)
            found = [s.hook for s in hooks.hooks if s.hook.id == webhook_id]
            if not found:
                raise NotFoundError(f"no webhook #{webhook_id}")
            kept = tuple(s for s in hooks.hooks if s.hook.id != webhook_id)
            _records.save(self._storage, _records.Hooks(hooks.next_id, kept))
            note.detail = f"webhook #{webhook_id} to {_host(found[0].url)} removed"
        return found[0]


def _admin(actor: Actor) -> Actor:
    checked = checked_actor(actor)
    allowed_steps(checked, ReviewRules()).require(Step.MANAGE_WEBHOOKS)
    return checked


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def _name(actor: object) -> str:
    return str(getattr(actor, "name", "") or "")
