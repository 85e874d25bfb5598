"""Webhooks as a storage keeps them: one registry setting (`webhooks`), a JSON document with every webhook, its
secret and its last delivery, so every storage (SQLite, PostgreSQL, memory, one of one's own) keeps them with
no new table and no migration. Adding, removing and recording a delivery each rewrite it inside a storage
transaction, which serialises them with every other write.

A document that no longer reads back is a StorageError, never a webhook half-read (or a delivery unsigned).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from .._errors import StorageError
from .._wire import from_json, to_json
from ..storage._base import Storage
from ._model import Webhook, WebhookDelivery

SETTING = "webhooks"


@dataclass(frozen=True, slots=True)
class Stored:
    """A webhook with its secret: what delivery signs with, never handed to a shell."""

    hook: Webhook
    secret: str | None = field(repr=False)


@dataclass(frozen=True, slots=True)
class Hooks:
    """Every webhook of a registry, and the next id to give (ids are never reused)."""

    next_id: int
    hooks: tuple[Stored, ...]


def load(storage: Storage) -> Hooks:
    text = storage.setting(SETTING)
    if text is None:
        return Hooks(1, ())
    try:
        doc = json.loads(text)
        hooks = tuple(
            Stored(from_json(Webhook, {k: v for k, v in item.items() if k != "secret"}), item.get("secret"))
            for item in doc["hooks"]
        )
        return Hooks(int(doc["next_id"]), hooks)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise StorageError(f"the webhooks as stored cannot be read back: {type(exc).__name__}") from None


def save(storage: Storage, hooks: Hooks) -> None:
    items: list[dict[str, Any]] = []
    for stored in hooks.hooks:
        item = to_json(stored.hook)
        item["secret"] = stored.secret
        items.append(item)
    doc = {"next_id": hooks.next_id, "hooks": items}
    storage.put_setting(SETTING, json.dumps(doc, ensure_ascii=False, separators=(",", ":")))


def record(storage: Storage, webhook_id: int, delivery: WebhookDelivery) -> None:
    """Keep `delivery` as the webhook's last one (nothing when it was removed meanwhile)."""
    hooks = load(storage)
    if not any(s.hook.id == webhook_id for s in hooks.hooks):
        return
    kept = tuple(
        Stored(replace(s.hook, last_delivery=delivery), s.secret) if s.hook.id == webhook_id else s for s in hooks.hooks
    )
    save(storage, Hooks(hooks.next_id, kept))
