"""What a webhook is: where to POST (an http(s) URL), which events (names or globs such as `proposal.*`), and a
secret to sign each body with. The secret is kept for signing and never read back: a `Webhook` value only says
whether one is set, so no listing, answer or log can show it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from .._errors import InvalidArgumentError

EVENTS = (
    "proposal.created",
    "proposal.revised",
    "proposal.commented",
    "proposal.approved",
    "proposal.rejected",
    "proposal.stale",
    "proposal.applied",
    "policy.changed",
    "schema.registered",
)
URL_MAX = 2048
SECRET_MAX = 256
PATTERNS_MAX = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookDelivery:
    """How the last delivery to a webhook ended: `delivered` (a 2xx answer) or `failed`, after `attempts`
    tries; `reason` says why it failed (an HTTP status or the connection error, never the secret)."""

    at: int  # ms since the epoch, when it ended
    event: str
    outcome: str
    attempts: int
    status: int | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Webhook:
    """A webhook as anyone may see it: without its secret (`has_secret` says whether it has one)."""

    id: int
    url: str
    events: tuple[str, ...]
    has_secret: bool
    created_at: int
    created_by: str
    last_delivery: WebhookDelivery | None = None

    def wants(self, event: str) -> bool:
        return wants(self.events, event)


def wants(patterns: Iterable[str], event: str) -> bool:
    """Does any of `patterns` (event names or globs) select `event`?"""
    return any(fnmatch.fnmatchcase(event, pattern) for pattern in patterns)


def checked_url(url: object) -> str:
    """An http(s) URL with a host and no credentials in it, without spaces or control characters."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidArgumentError("a webhook needs its URL (http:// or https://)")
    text = url.strip()
    if len(text) > URL_MAX or any(c.isspace() or not c.isprintable() for c in text):
        raise InvalidArgumentError(f"the webhook URL is not a URL: at most {URL_MAX} printable characters, no spaces")
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidArgumentError(
            f"only http:// and https:// webhook URLs are accepted, not {parts.scheme or 'a URL without a scheme'}"
            f"{'' if parts.hostname or not parts.scheme else ' without a host'}"
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidArgumentError("a webhook URL carries no user or password: give a secret to sign with instead")
    return text


def checked_events(events: object) -> tuple[str, ...]:
    """Event names or globs, each selecting at least one known event (a typo is refused, not silently idle)."""
    if isinstance(events, str) or not isinstance(events, Iterable):
        raise InvalidArgumentError("a webhook's events are a list of names or globs, such as ['proposal.*']")
    found: list[str] = []
    for item in events:
        if not isinstance(item, str) or not item.strip():
            raise InvalidArgumentError(f"a webhook event is a name or glob, not {item!r}")
        pattern = item.strip()
        if not any(fnmatch.fnmatchcase(event, pattern) for event in EVENTS):
            raise InvalidArgumentError(f"{pattern!r} selects no event: choose from {', '.join(EVENTS)} (or a glob)")
        if pattern not in found:
            found.append(pattern)
    if not found or len(found) > PATTERNS_MAX:
        raise InvalidArgumentError(f"a webhook selects 1 to {PATTERNS_MAX} events or globs, such as ['proposal.*']")
    return tuple(found)


def checked_secret(secret: object) -> str | None:
    """None (unsigned deliveries) or 1-256 printable characters."""
    if secret is None or secret == "":
        return None
    if not isinstance(secret, str) or len(secret) > SECRET_MAX or not secret.isprintable() or secret != secret.strip():
        raise InvalidArgumentError(
            f"a webhook secret is 1-{SECRET_MAX} printable characters without surrounding spaces"
        )
    return secret
