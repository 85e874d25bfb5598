"""Notifications on the explorer API (/explorer/v1/webhooks): an admin adds, lists and removes the registry's
webhooks; the core keeps them, checks them and delivers (registry/webhooks/). Every route needs the role the
core's permission table gives `Step.MANAGE_WEBHOOKS` (an admin), listing included: a webhook's URL may itself
be a credential. The secret is taken, never answered (`has_secret` says whether one is set).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from registry import Step
from registry import Webhook as CoreWebhook

from . import _auth as auth
from ._admin import WRITER, Reg
from ._explorer_wire import Wire
from ._proposals import actor_of

router = APIRouter(prefix="/explorer/v1", tags=["webhooks"])
ADMIN = replace(auth.explorer(Step.MANAGE_WEBHOOKS.role, "managing webhooks"), error="PermissionDeniedError")
WebhookId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the webhook's id, from 1")]


class WebhookDelivery(Wire):
    at: int = Field(description="ms since the epoch, when the delivery ended")
    event: str
    outcome: str = Field(description="delivered (a 2xx answer) or failed (after the retries, or a 4xx at once)")
    attempts: int
    status: int | None = Field(description="the receiver's last HTTP status; null: no answer")
    reason: str = Field(description="why it failed (empty when delivered); never the secret")


class Webhook(Wire):
    id: int
    url: str
    events: list[str] = Field(description="event names or globs (proposal.*) it is told of")
    has_secret: bool = Field(description="bodies are signed (X-Schema-Explorer-Signature); the secret is never shown")
    created_at: int
    created_by: str
    last_delivery: WebhookDelivery | None


class WebhookList(BaseModel):
    webhooks: list[Webhook]


class WebhookRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: str = Field(description="http:// or https:// only")
    events: list[str] = Field(default=["*"], description="names or globs: proposal.created ... schema.registered")
    secret: str | None = Field(default=None, description="signs each body (HMAC-SHA256); never answered")


@router.get("/webhooks", **ADMIN.route_options())
def webhooks(registry: Reg) -> WebhookList:
    """The webhooks, each with its last delivery (delivered, or failed with the reason), without secrets."""
    return WebhookList(webhooks=[Webhook.of(hook) for hook in registry.webhooks.list()])


@router.post("/webhooks", status_code=201, **ADMIN.route_options(403))
async def add_webhook(request: Request, body: WebhookRequest, registry: Reg) -> Webhook:
    """Tell a URL of the events after each write commits: a JSON body with a `text` line chat services show."""
    made: CoreWebhook = await WRITER.write(
        registry, registry.webhooks.add, body.url, events=body.events, secret=body.secret, actor=actor_of(request)
    )
    return Webhook.of(made)


@router.delete("/webhooks/{webhook_id}", **ADMIN.route_options(404))
async def remove_webhook(request: Request, webhook_id: WebhookId, registry: Reg) -> Webhook:
    """Stop telling a webhook; answers it as it was."""
    gone: CoreWebhook = await WRITER.write(registry, registry.webhooks.remove, webhook_id, actor=actor_of(request))
    return Webhook.of(gone)
