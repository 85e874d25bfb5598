"""Which audited write tells the webhooks what: one mapping from a committed write (its audit action, outcome and
the proposal it stored) to events, so every shell's writes notify alike (the embedded registry's, `serve`'s
through it, the app's and the CLI's).

`prepared` runs inside the write's transaction, after the write (it reads the webhooks and the review rules as
they are in that transaction); what it returns is handed to the delivery worker only once the outermost
transaction has committed (`Auditor`, registry/_auditing.py), so a write undone notifies nobody. A notice is a
JSON body with a `text` line that Slack and Mattermost incoming webhooks show as it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from .._audit import AuditAction, AuditOutcome
from .._auditing import AuditNote
from ..proposals._model import Proposal, ProposalKind, ProposalState
from ..proposals._permissions import counted_approvals
from ..proposals._records import rules
from ..storage._base import LocalStorage
from . import _records
from ._delivery import DELIVERIES, Deliveries, Outgoing

APP_URL_ENV = "SCHEMA_EXPLORER_APP_URL"  # the app's address: notices link the proposal as URL/proposal?id=ID

_STEPS = {
    AuditAction.PROPOSE: "proposal.created",
    AuditAction.REVISE_PROPOSAL: "proposal.revised",
    AuditAction.COMMENT_PROPOSAL: "proposal.commented",
    AuditAction.APPROVE_PROPOSAL: "proposal.approved",
    AuditAction.REJECT_PROPOSAL: "proposal.rejected",
    AuditAction.APPLY_PROPOSAL: "proposal.applied",
    AuditAction.REGISTER: "schema.registered",
    AuditAction.SET_NAMESPACE_POLICY: "policy.changed",
    AuditAction.SET_TOPIC_POLICY: "policy.changed",
}
_VERBS = {
    "proposal.created": "proposed",
    "proposal.revised": "revised",
    "proposal.commented": "commented on",
    "proposal.approved": "approved",
    "proposal.rejected": "rejected",
    "proposal.stale": "found stale",
    "proposal.applied": "applied",
}


def events_of(action: AuditAction, note: AuditNote, refused: bool) -> list[str]:
    """The events a write that committed is: none for a refusal, except the stale mark an approve or an apply
    stores before refusing; none for a write that changed nothing (approving twice, the same policy again)."""
    proposal = note.proposal if isinstance(note.proposal, Proposal) else None
    if refused:
        stale = proposal is not None and proposal.state is ProposalState.STALE
        return ["proposal.stale"] if stale else []
    event = _STEPS.get(action)
    if event is None or note.outcome is not AuditOutcome.OK:
        return []
    if action is AuditAction.APPLY_PROPOSAL and proposal is not None:
        if proposal.kind is ProposalKind.POLICY:
            return [event, "policy.changed"]
        return [event, "schema.registered"] if note.version is not None else [event]
    return [event]


@dataclass(slots=True)
class Notices:
    """The registry's side of notifications: what each write is (`prepared`) and handing it over (`committed`)."""

    storage: LocalStorage
    clock: Callable[[], int]
    deliveries: Deliveries = DELIVERIES

    def prepared(self, action: AuditAction, note: AuditNote, user: str, refused: bool) -> Sequence[Outgoing]:
        events = events_of(action, note, refused)
        if not events:
            return []
        hooks = _records.load(self.storage).hooks
        wanted = [(event, s) for event in events for s in hooks if s.hook.wants(event)]
        if not wanted:
            return []
        now = self.clock()
        bodies = {event: body(self.storage, event, note, user, now) for event in {e for e, _ in wanted}}
        return [Outgoing(self.storage, s.hook.id, s.hook.url, s.secret, event, bodies[event]) for event, s in wanted]

    def committed(self, outgoing: Sequence[object]) -> None:
        for item in outgoing:
            if isinstance(item, Outgoing):
                self.deliveries.submit(item)


def body(storage: LocalStorage, event: str, note: AuditNote, user: str, now: int) -> bytes:
    """The JSON a webhook receives (UTF-8, the bytes that are signed)."""
    proposal = note.proposal if isinstance(note.proposal, Proposal) and event.startswith("proposal.") else None
    link = _link(proposal)
    doc: dict[str, Any] = {
        "event": event,
        "time": datetime.fromtimestamp(now / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "actor": user,
        "target": note.target,
        "detail": note.detail,
        "proposal": None,
        "version": note.version if event == "schema.registered" else None,
        "link": link,
    }
    if proposal is not None:
        found = rules(storage, proposal.namespace)
        needed = (
            0 if proposal.state.final else max(0, found.required_approvals - len(counted_approvals(proposal, found)))
        )
        doc["proposal"] = {
            "id": proposal.id,
            "title": proposal.title,
            "kind": str(proposal.kind),
            "target": proposal.target,
            "state": str(proposal.state),
            "revision": proposal.revision.number,
            "approvals_needed": needed,
        }
    doc["text"] = _text(doc)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _text(doc: dict[str, Any]) -> str:
    """One line a chat shows as it is: who did what to which proposal, and what it waits for now."""
    who = doc["actor"] or "someone"
    found = doc["proposal"]
    if found is not None:
        verb = _VERBS[doc["event"]]
        waits = f", {found['approvals_needed']} more approval(s) needed" if found["approvals_needed"] else ""
        line = f"{who} {verb} proposal #{found['id']} “{found['title']}” on {found['target']}: {found['state']}{waits}"
    elif doc["event"] == "schema.registered":
        line = f"{who} registered version {doc['version']} of {doc['target']}"
    else:
        line = f"{who} changed the schema policy of {doc['target']}: {doc['detail']}"
    link = f" {doc['link']}" if doc["link"] else ""
    return f"[schema-explorer] {line}{link}"


def _link(proposal: Proposal | None) -> str | None:
    """URL/proposal?id=ID when $SCHEMA_EXPLORER_APP_URL names the app (an address that is not plainly an
    http(s) URL gives no link: a notice never fails for it)."""
    raw = (os.environ.get(APP_URL_ENV) or "").strip()
    if proposal is None or not raw:
        return None
    parts = urlsplit(raw)
    bad = any(c.isspace() or c in "<>\"'`\\" or not c.isprintable() for c in raw)
    if bad or parts.scheme.lower() not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        return None
    return f"{raw.rstrip('/')}/proposal?id={proposal.id}"
