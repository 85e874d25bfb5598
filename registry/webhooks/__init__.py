"""Notifications: webhooks a registry's admins add, told of proposal steps, policy changes and registrations
after each write commits (registry/webhooks/_notices.py says which write is which event), delivered in the
background with retries (`_delivery.py`), kept in the registry's own storage (`_records.py`)."""

from ._delivery import DELIVERIES, Deliveries
from ._model import EVENTS, Webhook, WebhookDelivery

__all__ = ["DELIVERIES", "EVENTS", "Deliveries", "Webhook", "WebhookDelivery"]
